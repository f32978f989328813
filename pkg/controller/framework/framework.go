// Package framework is the small controller framework of 'kubectl vc serve',
// in the image of Volcano's: each controller is a plugin that registers itself
// from an init function and is started by the manager with shared clients and
// informer factories.
package framework

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/featuregate"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
)

// Controller is one controller of the manager. Its settings are its own:
// it declares them as flags (AddFlags), so that a new setting is added in one
// place, the controller, and 'serve' shows it without knowing it.
type Controller interface {
	// Name is the name used by --controllers.
	Name() string
	// AddFlags declares the controller's own flags (its workers included)
	// with their defaults, which a freshly registered instance already has.
	AddFlags(fs *pflag.FlagSet)
	// Validate checks the values of the controller's flags before anything
	// starts; the error is one line for the user.
	Validate() error
	// Initialize registers informers, indexers and event handlers. It must
	// not start anything: the manager starts the shared factories once every
	// controller has asked for the informers it needs.
	Initialize(ctx context.Context, deps *ControllerOption) error
	// Run starts the workers and blocks until ctx is done.
	Run(ctx context.Context)
	// CacheReads declares, for every type of object the controller
	// caches, what it reads of it (see CacheRead). The shared caches keep
	// only the union of what the running controllers read.
	CacheReads() []CacheRead
}

// Preflighter is implemented by a controller that can tell, before anything
// starts, that it cannot run in this process (e.g. a command it runs is
// missing). The manager asks every selected controller before it serves,
// elects a leader or initializes anything, and refuses to start with the
// first error: a standby replica must not learn it only once it leads.
type Preflighter interface {
	// Preflight returns an error that says what is missing and what to do.
	Preflight() error
}

// ControllerOption is what the manager shares with every controller:
// clients, informer factories, events, metrics and the settings common to
// all (retries, feature gates). The informer
// factories are shared: a controller asks for an informer, the manager starts
// the factory once, so each resource is listed and watched once per process.
type ControllerOption struct {
	KubeClient    kubernetes.Interface
	VolcanoClient versioned.Interface

	// KubeInformerFactory and VolcanoInformerFactory are the ONE shared
	// factories of the process. Their transform (CacheTransform) keeps of
	// each object only what the running controllers declared they read.
	KubeInformerFactory    kubeinformers.SharedInformerFactory
	VolcanoInformerFactory vcinformers.SharedInformerFactory
	// FieldInformers are the kube factories filtered by a field selector
	// (KubeInformerFactoryFor); the manager starts them with the others.
	FieldInformers *FieldInformers

	Recorder record.EventRecorder
	// MetricsRegistry receives the controller's own metrics (served on /metrics).
	MetricsRegistry prometheus.Registerer
	// WorkqueueMetrics is passed to each work queue's config so that depth,
	// latency and retries show on /metrics.
	WorkqueueMetrics workqueue.MetricsProvider

	// MaxRequeueNum bounds the retries of one request; -1 retries forever.
	MaxRequeueNum int
	FeatureGates  featuregate.FeatureGate

	// Running are the controllers this process runs: whether another of
	// them caches a kind anyway (CachedByOthers).
	Running []Controller

	rowsOnce sync.Once
	rows     *podgrouprows.Shared
}

// PodGroupRows is the process's one reading of the podgroups' namespace,
// name, queue and phase (podgrouprows.Shared), for the controllers that
// read no more of them: each feeds its store in Initialize; the manager
// starts it with the informer factories (StartShared). Fake clients read it
// through the shared factory's informer, which the factory starts.
func (o *ControllerOption) PodGroupRows() *podgrouprows.Shared {
	o.rowsOnce.Do(func() {
		o.rows = podgrouprows.NewShared(o.KubeClient, o.VolcanoClient, func() cache.SharedIndexInformer {
			return o.VolcanoInformerFactory.Scheduling().V1beta1().PodGroups().Informer()
		})
	})
	return o.rows
}

// StartShared starts the readings controllers share beside the informer
// factories (PodGroupRows, when one asked for it) and returns what says
// they have filled, for the manager to wait on with the factories' caches.
func (o *ControllerOption) StartShared(stopCh <-chan struct{}) []cache.InformerSynced {
	var synced []cache.InformerSynced
	if o.rows != nil {
		o.rows.Start(stopCh)
		synced = append(synced, o.rows.HasSynced)
	}
	return synced
}

// Configure returns a fresh instance of the named controller with its
// flags set from args ("--workers-queue=2"), as 'serve' would set them,
// and validated. Tests and benchmarks use it to run a configured controller.
func Configure(name string, args ...string) (Controller, error) {
	c, err := New(name)
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// WorkersFlag declares --workers-<name> for a controller's worker count.
func WorkersFlag(fs *pflag.FlagSet, p *int, name string) {
	fs.IntVar(p, "workers-"+name, *p, "Workers of the "+name+" controller")
}

// ValidateWorkers refuses a worker count below one.
func ValidateWorkers(n int, name string) error {
	if n < 1 {
		return fmt.Errorf("--workers-%s must be at least 1, got %d", name, n)
	}
	return nil
}

// DefaultWorkers is a controller's worker count unless the controller or
// its flag says otherwise. The queue and podgroup controllers set their own,
// sized by the floor-mode benchmarks (docs/benchmarks.md).
const DefaultWorkers = 5

// registry holds the controllers registered from init functions. It is the
// one piece of package state, written only during program initialisation.
var registry = struct {
	sync.Mutex
	byName map[string]func() Controller
}{byName: map[string]func() Controller{}}

// RegisterController makes a controller available to the manager. It is
// called from the init function of each plugin; new builds a fresh instance
// so that several managers (e.g. in tests) never share controller state.
func RegisterController(name string, new func() Controller) error {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[name]; dup {
		return fmt.Errorf("controller %q registered twice", name)
	}
	registry.byName[name] = new
	return nil
}

// Names returns the registered controller names, sorted.
func Names() []string {
	registry.Lock()
	defer registry.Unlock()
	names := make([]string, 0, len(registry.byName))
	for n := range registry.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns a fresh instance of the named controller.
func New(name string) (Controller, error) {
	registry.Lock()
	defer registry.Unlock()
	mk, ok := registry.byName[name]
	if !ok {
		return nil, fmt.Errorf("unknown controller %q (known: %v)", name, namesLocked())
	}
	return mk(), nil
}

func namesLocked() []string {
	names := make([]string, 0, len(registry.byName))
	for n := range registry.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
