// Package podgroup is the podgroup controller of 'kubectl vc serve'. It gives
// pods that use a Volcano scheduler but belong to no PodGroup (standalone
// pods, and the replicas of Deployments, StatefulSets, Jobs, DaemonSets) the
// PodGroup Volcano's own controller would give them, field for field, and
// writes the group's name into the pod's scheduling.k8s.io/group-name.
package podgroup

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/spf13/pflag"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	schedulinglisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// DefaultWorkers is the podgroup controller's worker count. Grouping a pod
// is two writes in sequence (create the group, then annotate the pod; never
// the other way round, or a pod could point at a group its queue refuses).
// BenchmarkPodGroupThroughput against a bare client with 32 pods in flight
// (the floor): 5 workers took 1.3x the floor's time for 5 000 pods, 16 and
// 32 workers 1.1-1.5x, no different from each other: past 16 the API server
// on the benchmark's two cores, which also serves the pods' creation, is the
// limit, and more requests in flight only add to its load
// (docs/benchmarks.md).
const DefaultWorkers = 16

// Name is the controller's name for --controllers and --workers-podgroup.
const Name = "podgroup"

func init() {
	if err := framework.RegisterController(Name, func() framework.Controller { return New() }); err != nil {
		panic(err)
	}
}

// Controller is the podgroup controller.
type Controller struct {
	kube kubernetes.Interface
	vc   versioned.Interface

	// pods are the pods of the controller's schedulers, with
	// ungroupedIndex.
	pods *podCache
	// groups says which podgroups exist: all the controller reads of them
	// from a cache. It is fed by the process's one reading of podgroup
	// rows, shared with the queue controller; the few groups it brings up
	// to date are read whole from the API server (createOrUpdate).
	groups *podgrouprows.Names
	queues schedulinglisters.QueueLister
	// ownerCaches are the informer caches of the owner kinds the
	// controller reads (ownerKinds), so that building a group costs no API
	// call; a kind not needed has none.
	ownerCaches map[kind]cache.Indexer
	synced      []cache.InformerSynced

	wq         workqueue.TypedRateLimitingInterface[request]
	recorder   record.EventRecorder
	metrics    *metrics
	maxRequeue int
	workloads  bool
	now        func() time.Time

	// Set by the controller's flags (AddFlags).
	workers    int
	schedulers []string
	inherit    bool
	resync     time.Duration
}

// DefaultResyncPeriod is how often, unless --podgroup-resync-period says
// otherwise, every pod still without a group is tried again.
const DefaultResyncPeriod = time.Minute

// New returns a podgroup controller with the defaults of its flags.
func New() *Controller {
	return &Controller{workers: DefaultWorkers, schedulers: []string{keys.VolcanoScheduler}, inherit: true, resync: DefaultResyncPeriod}
}

// Name implements framework.Controller.
func (c *Controller) Name() string { return Name }

// AddFlags implements framework.Controller.
func (c *Controller) AddFlags(fs *pflag.FlagSet) {
	framework.WorkersFlag(fs, &c.workers, Name)
	fs.StringArrayVar(&c.schedulers, "scheduler-name", c.schedulers, "Scheduler whose pods get podgroups (repeatable)")
	fs.BoolVar(&c.inherit, "inherit-owner-annotations", c.inherit, "PodGroups inherit the volcano.sh/ annotations of the pod's owner")
	fs.DurationVar(&c.resync, "podgroup-resync-period", c.resync,
		"How often every live pod of the schedulers that still has no podgroup is tried again, whatever made it fail (0: never)")
}

// Validate implements framework.Controller.
func (c *Controller) Validate() error {
	if err := framework.ValidateWorkers(c.workers, Name); err != nil {
		return err
	}
	if len(c.schedulers) == 0 {
		return fmt.Errorf("--scheduler-name must name at least one scheduler")
	}
	if c.resync < 0 {
		return fmt.Errorf("--podgroup-resync-period must not be negative, got %s", c.resync)
	}
	return nil
}

// Initialize implements framework.Controller.
func (c *Controller) Initialize(_ context.Context, opt *framework.ControllerOption) error {
	// Queues cached without the quantities that would stop their informer
	// (quantityguard).
	if err := quantityguard.Register(opt.VolcanoInformerFactory, opt.VolcanoClient); err != nil {
		return err
	}
	c.kube = opt.KubeClient
	c.vc = opt.VolcanoClient
	c.recorder = opt.Recorder
	c.maxRequeue = opt.MaxRequeueNum
	c.workloads = opt.FeatureGates == nil || opt.FeatureGates.Enabled(framework.WorkLoadSupport)
	c.now = time.Now
	c.wq = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[request](),
		workqueue.TypedRateLimitingQueueConfig[request]{Name: Name, MetricsProvider: opt.WorkqueueMetrics},
	)

	kf := opt.KubeInformerFactory
	c.pods = newPodCache(opt, c.schedulers)
	if err := c.pods.addIndexers(cache.Indexers{ungroupedIndex: c.indexUngrouped}); err != nil {
		return err
	}
	m, err := newMetrics(opt.MetricsRegistry, func() int { return c.pods.countIndex(ungroupedIndex, ungroupedValue) })
	if err != nil {
		return err
	}
	c.metrics = m
	// Only pod creation starts work, as in Volcano: once a pod has its group
	// the pod path has nothing more to do, and our own annotation patch
	// must not come back as work.
	if err := c.pods.addEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.addPod}); err != nil {
		return err
	}
	sched := opt.VolcanoInformerFactory.Scheduling().V1beta1()
	rows := opt.PodGroupRows()
	c.groups = podgrouprows.NewNames()
	if err := rows.Feed(c.groups); err != nil {
		return err
	}
	// Queues: a pod whose group was refused because its queue was not
	// Open is tried again when the queue opens.
	qInf := sched.Queues()
	c.queues = qInf.Lister()
	if _, err := qInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addQueue,
		UpdateFunc: c.updateQueue,
		DeleteFunc: c.addQueue,
	}); err != nil {
		return err
	}
	c.synced = []cache.InformerSynced{c.pods.hasSynced, rows.HasSynced, qInf.Informer().HasSynced}

	// An owner kind is cached when its annotations are inherited or it has
	// a path of its own, and watched only in the latter case. A Job's or
	// DaemonSet's pods may reach our cache before it does (two watch
	// streams): their group then waits for the owner, whose add brings it
	// about; a later change of its annotations reaches the group the same
	// way.
	c.ownerCaches = map[kind]cache.Indexer{}
	for _, o := range ownerKinds {
		path := o.path(c)
		if !path && !c.inherit {
			continue
		}
		inf := o.informer(kf)
		c.ownerCaches[o.kind] = inf.GetIndexer()
		c.synced = append(c.synced, inf.HasSynced)
		if path {
			if _, err := inf.AddEventHandler(c.ownerHandler(o)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run implements framework.Controller.
func (c *Controller) Run(ctx context.Context) {
	stopCh := ctx.Done()
	defer c.wq.ShutDown()
	if !cache.WaitForCacheSync(stopCh, c.synced...) {
		return
	}
	logger := klog.FromContext(ctx)
	logger.Info("podgroup controller started", "workers", c.workers, "schedulers", c.schedulers,
		"inheritOwnerAnnotations", c.inherit, "workLoadSupport", c.workloads, "resyncPeriod", c.resync)
	if c.resync > 0 {
		go c.resyncLoop(ctx)
	}
	framework.Loop[request]{
		Queue: c.wq, Workers: c.workers, MaxRequeue: c.maxRequeue, Sync: c.sync,
		KeyValues: func(req request) []any { return []any{"kind", req.kind, "object", klog.KRef(req.namespace, req.name)} },
		Retrying: func(ctx context.Context, _ request, err error) {
			klog.FromContext(ctx).V(2).Info("podgroup sync failed; retrying", "err", err)
		},
		Dropped: func(ctx context.Context, req request, err error) {
			c.metrics.dropped.WithLabelValues(req.kind.String()).Inc()
			klog.FromContext(ctx).Error(err, "podgroup sync failed too often; dropping the request")
			if obj := c.objectOf(req); obj != nil {
				c.recorder.Eventf(obj, corev1.EventTypeWarning, "PodGroupSyncFailed",
					"gave up after %d retries: %v", c.maxRequeue, err)
			}
		},
	}.Run(ctx)
}
