package podgrouprows

import (
	"errors"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Shared is one process's reading of the podgroups' rows, handed to every
// store that asked for it: the API server sends each podgroup once however
// many controllers read it. serve's queue controller counts the rows and
// its podgroup controller only needs to know which groups exist; reading
// the podgroups as whole objects for the latter was half of serve's cold
// start (issue 46, docs/benchmarks.md).
//
// Against an API server one reflector over ListWatch fills the stores.
// With clients that cannot ask for Tables (fake clientsets in unit tests)
// the stores are fed by the handlers of the informer given to NewShared,
// with the same PodGroups (holding what the informer's transform keeps).
type Shared struct {
	lw       *ListWatch
	informer func() cache.SharedIndexInformer

	mu      sync.Mutex
	stores  []cache.Store
	synced  []cache.InformerSynced // fed by the informer
	started bool
	fanned  atomic.Bool // the reflector's first list is in every store
}

// NewShared reads the rows over kube's and vc's API server, or, when they
// cannot be asked for Tables, through the informer informer returns.
func NewShared(kube kubernetes.Interface, vc versioned.Interface, informer func() cache.SharedIndexInformer) *Shared {
	lw, _ := New(kube, vc)
	return &Shared{lw: lw, informer: informer}
}

// errStarted: a store asked for the rows after they started to flow, and
// would have missed the first list.
var errStarted = errors.New("podgroup rows: a store was added after Start")

// Feed makes st receive every row: a Replace with the list (of *Row or
// *PodGroup), then Add, Update and Delete of PodGroups. Every Feed comes
// before Start.
func (s *Shared) Feed(st cache.Store) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errStarted
	}
	if s.lw == nil {
		reg, err := s.informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { _ = st.Add(obj) },
			UpdateFunc: func(_, obj any) { _ = st.Update(obj) },
			DeleteFunc: func(obj any) { _ = st.Delete(obj) },
		})
		if err != nil {
			return err
		}
		s.synced = append(s.synced, reg.HasSynced)
	}
	s.stores = append(s.stores, st)
	return nil
}

// Start starts the reflector, once (the manager calls it beside the
// informer factories). Fed by an informer, the informer's factory starts it.
func (s *Shared) Start(stopCh <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	if s.lw == nil || len(s.stores) == 0 {
		return
	}
	fan := &fanOut{Store: s.stores[0], all: s.stores, listed: &s.fanned}
	r := cache.NewReflectorWithOptions(s.lw, &v1beta1.PodGroup{}, fan, cache.ReflectorOptions{Name: "podgroup rows"})
	go r.Run(stopCh)
}

// HasSynced is true once every store holds the first list.
func (s *Shared) HasSynced() bool {
	if s.lw != nil {
		return s.fanned.Load()
	}
	s.mu.Lock()
	synced := s.synced
	s.mu.Unlock()
	for _, f := range synced {
		if !f() {
			return false
		}
	}
	return true
}

// fanOut is the reflector's store: it writes to every store and reads
// from the first (the reflector reads only resourceVersions back).
type fanOut struct {
	cache.Store
	all    []cache.Store
	listed *atomic.Bool
}

func (f *fanOut) each(fn func(cache.Store) error) error {
	var errs []error
	for _, st := range f.all {
		errs = append(errs, fn(st))
	}
	return errors.Join(errs...)
}

func (f *fanOut) Add(obj any) error {
	return f.each(func(st cache.Store) error { return st.Add(obj) })
}

func (f *fanOut) Update(obj any) error {
	return f.each(func(st cache.Store) error { return st.Update(obj) })
}

func (f *fanOut) Delete(obj any) error {
	return f.each(func(st cache.Store) error { return st.Delete(obj) })
}

// Replace hands each store the same list: a store may not keep the slice
// it is given (cache.Store's contract says it owns it), so each gets its
// own copy of the slice; the rows themselves are shared and never changed.
func (f *fanOut) Replace(list []any, rv string) error {
	err := f.each(func(st cache.Store) error {
		return st.Replace(append([]any(nil), list...), rv)
	})
	if err == nil {
		f.listed.Store(true)
	}
	return err
}

func (f *fanOut) Bookmark(rv string) {
	for _, st := range f.all {
		st.Bookmark(rv)
	}
}
