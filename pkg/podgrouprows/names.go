package podgrouprows

import (
	"fmt"
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// Names is a cache.Store that keeps only which podgroups exist: per
// namespace the names, held as the rows hold them (no key is built). It is
// what a reader that only asks "is there a group of this name?" needs, at
// a map entry per podgroup.
type Names struct {
	mu   sync.RWMutex
	byNS map[string]map[string]struct{}
	n    int
	rv   string
}

// NewNames returns an empty Names.
func NewNames() *Names { return &Names{byNS: map[string]map[string]struct{}{}} }

// Has says whether the podgroup namespace/name is in the store.
func (s *Names) Has(namespace, name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.byNS[namespace][name]
	return ok
}

// Len is the number of podgroups in the store.
func (s *Names) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.n
}

// nameOf reads the namespace, name and resourceVersion of what a
// reflector or an informer hands a store.
func nameOf(obj any) (ns, name, rv string, err error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch o := obj.(type) {
	case *Row:
		return o.Namespace, o.Name, o.ResourceVersion, nil
	case *v1beta1.PodGroup:
		return o.Namespace, o.Name, o.ResourceVersion, nil
	}
	return "", "", "", fmt.Errorf("podgroup names: not a podgroup: %T", obj)
}

func (s *Names) put(ns, name string) {
	names := s.byNS[ns]
	if names == nil {
		names = map[string]struct{}{}
		s.byNS[ns] = names
	}
	if _, ok := names[name]; !ok {
		names[name] = struct{}{}
		s.n++
	}
}

// Add implements cache.Store.
func (s *Names) Add(obj any) error {
	ns, name, rv, err := nameOf(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(ns, name)
	if rv != "" {
		s.rv = rv
	}
	return nil
}

// Update implements cache.Store.
func (s *Names) Update(obj any) error { return s.Add(obj) }

// Delete implements cache.Store.
func (s *Names) Delete(obj any) error {
	ns, name, rv, err := nameOf(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if names := s.byNS[ns]; names != nil {
		if _, ok := names[name]; ok {
			delete(names, name)
			s.n--
		}
		if len(names) == 0 {
			delete(s.byNS, ns)
		}
	}
	if rv != "" {
		s.rv = rv
	}
	return nil
}

// Replace implements cache.Store.
func (s *Names) Replace(list []any, rv string) error {
	next := &Names{byNS: map[string]map[string]struct{}{}}
	for _, obj := range list {
		ns, name, _, err := nameOf(obj)
		if err != nil {
			return err
		}
		next.put(ns, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byNS, s.n, s.rv = next.byNS, next.n, rv
	return nil
}

// List implements cache.Store: podgroups holding only their names.
func (s *Names) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, 0, s.n)
	for ns, names := range s.byNS {
		for name := range names {
			pg := &v1beta1.PodGroup{}
			pg.Namespace, pg.Name = ns, name
			out = append(out, pg)
		}
	}
	return out
}

// ListKeys implements cache.Store.
func (s *Names) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, s.n)
	for ns, names := range s.byNS {
		for name := range names {
			out = append(out, ns+"/"+name)
		}
	}
	return out
}

// Get implements cache.Store.
func (s *Names) Get(obj any) (any, bool, error) {
	ns, name, _, err := nameOf(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(ns + "/" + name)
}

// GetByKey implements cache.Store.
func (s *Names) GetByKey(key string) (any, bool, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false, err
	}
	if !s.Has(ns, name) {
		return nil, false, nil
	}
	pg := &v1beta1.PodGroup{}
	pg.Namespace, pg.Name = ns, name
	return pg, true, nil
}

// LastStoreSyncResourceVersion implements cache.Store.
func (s *Names) LastStoreSyncResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Bookmark implements cache.Store.
func (s *Names) Bookmark(rv string) {
	s.mu.Lock()
	s.rv = rv
	s.mu.Unlock()
}

// Resync implements cache.Store: nothing to do.
func (s *Names) Resync() error { return nil }

var _ cache.Store = (*Names)(nil)
