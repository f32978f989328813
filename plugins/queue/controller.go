// Package queue is the queue controller of 'kubectl vc serve': it keeps each
// Queue's status (state and podgroup counts by phase) right, applies the
// open/close Commands that target queues, and keeps parents and children of
// the queue hierarchy consistent.
package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/spf13/pflag"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	businformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions/bus/v1alpha1"
	schedulinglisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// DefaultWorkers is the queue controller's worker count. A close is two
// writes in sequence (the status, then the Command's delete), so the
// controller's throughput is its workers over two round trips until the API
// server saturates. BenchmarkCloseLatency against a bare client with 32
// closes in flight (the floor): 5 workers took 1.5-2.1x the floor's time for
// 200 closes, 16 workers 1.2-1.4x at 1 000, 32 workers 1.0-1.1x at both
// sizes (docs/benchmarks.md). Idle workers cost a parked goroutine each.
const DefaultWorkers = 32

// Name is the controller's name for --controllers and --workers-queue.
const Name = "queue"

// Index names are prefixed with the controller so that other controllers can
// add their own indexers to the same shared informers without a clash.
const (
	byParentIndex = "queue:byParent"
	byTargetIndex = "queue:commandsByTarget"
	// controllerName is the field manager of what the controller writes,
	// Volcano's queue controller's.
	controllerName = keys.QueueControllerManager
)

func init() {
	if err := framework.RegisterController(Name, func() framework.Controller { return New() }); err != nil {
		panic(err)
	}
}

// Controller is the queue controller. Its work queues are keyed by queue
// name only, never by (queue, action): a work queue dedups requests for a
// queue and never hands one queue to two of its workers at once. Actions
// are not carried in the work queues at all; they are the queue's pending
// Commands, read at sync time in creation order, and deleted only after
// they have been applied.
//
// There are two work queues, each with its own workers: wq for every sync,
// and fast for the queues a Command targets. A Command waits only for the
// other Commands, never behind the syncs of thousands of queues just
// created (test/hostile's hierarchy row: a close waited behind the syncs of
// a new hierarchy; docs/security.md has the times before and after). One queue may be in both; locks keeps its
// syncs one at a time across the two, so that a close and an open of the
// same queue cannot race. The fast lane is only a shortcut: any sync of the
// queue applies its pending Commands, so a Command the fast lane gives up
// on is applied by the next ordinary sync of its queue.
type Controller struct {
	vc         versioned.Interface
	queues     schedulinglisters.QueueLister
	queueIndex cache.Indexer
	podGroups  *podGroupCounts
	cmdIndex   cache.Indexer // nil when QueueCommandSync is off
	synced     []cache.InformerSynced

	wq    workqueue.TypedRateLimitingInterface[string]
	fast  workqueue.TypedRateLimitingInterface[string]
	locks keyLocks
	// syncQueue is the sync the workers run (sync; a test records the
	// order of syncs through it).
	syncQueue  func(ctx context.Context, name string) error
	recorder   record.EventRecorder
	maxRequeue int
	metrics    *metrics

	// Set by the controller's flags (AddFlags).
	workers          int
	ensureDefaults   bool
	commandNamespace string

	// written remembers, per queue, the object the API server returned for
	// our last write. Until the informer has caught up, it is newer than the
	// lister's copy; without it a quick second sync would compare against a
	// stale status and skip a write that is needed.
	mu      sync.Mutex
	written map[string]*v1beta1.Queue
	// waiting remembers, per pending Command, the last reason reported for
	// its wait (reportWaiting), so that a retried sync does not repeat it.
	waiting map[types.UID]string
}

// New returns a queue controller with the defaults of its flags.
func New() *Controller {
	return &Controller{workers: DefaultWorkers, ensureDefaults: true}
}

// Name implements framework.Controller.
func (c *Controller) Name() string { return Name }

// AddFlags implements framework.Controller.
func (c *Controller) AddFlags(fs *pflag.FlagSet) {
	framework.WorkersFlag(fs, &c.workers, Name)
	fs.StringVar(&c.commandNamespace, "command-namespace", c.commandNamespace, "Take Commands only from this namespace (default: all namespaces)")
	fs.BoolVar(&c.ensureDefaults, "ensure-default-queues", c.ensureDefaults, "Create the root and default queues at start-up when missing")
}

// Validate implements framework.Controller.
func (c *Controller) Validate() error {
	if err := framework.ValidateWorkers(c.workers, Name); err != nil {
		return err
	}
	if c.commandNamespace != "" {
		if errs := validation.IsDNS1123Label(c.commandNamespace); len(errs) > 0 {
			return fmt.Errorf("--command-namespace %q is not a namespace name: %s", c.commandNamespace, errs[0])
		}
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
	c.vc = opt.VolcanoClient
	c.recorder = opt.Recorder
	c.maxRequeue = opt.MaxRequeueNum
	c.written = map[string]*v1beta1.Queue{}
	c.waiting = map[types.UID]string{}
	m, err := newMetrics(opt.MetricsRegistry)
	if err != nil {
		return err
	}
	c.metrics = m
	c.wq = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: Name, MetricsProvider: opt.WorkqueueMetrics},
	)
	c.fast = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: Name + "-commands", MetricsProvider: opt.WorkqueueMetrics},
	)
	c.syncQueue = c.sync

	sched := opt.VolcanoInformerFactory.Scheduling().V1beta1()
	qInf := sched.Queues()
	if err := qInf.Informer().AddIndexers(cache.Indexers{byParentIndex: parentOf}); err != nil {
		return err
	}
	c.queues = qInf.Lister()
	c.queueIndex = qInf.Informer().GetIndexer()
	if _, err := qInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addQueue,
		UpdateFunc: c.updateQueue,
		DeleteFunc: c.deleteQueue,
	}); err != nil {
		return err
	}

	c.podGroups = newPodGroupCounts(c.wq.Add)
	pgSynced, err := c.watchPodGroups(opt)
	if err != nil {
		return err
	}
	c.synced = []cache.InformerSynced{qInf.Informer().HasSynced, pgSynced}

	if opt.FeatureGates == nil || opt.FeatureGates.Enabled(framework.QueueCommandSync) {
		var cmdInf cache.SharedIndexInformer
		if ns := c.commandNamespace; ns != "" {
			// Only one namespace's Commands: a namespaced watch, so the
			// controller needs no cluster-wide read of Commands.
			cmdInf = opt.VolcanoInformerFactory.InformerFor(&busv1alpha1.Command{}, func(cl versioned.Interface, resync time.Duration) cache.SharedIndexInformer {
				return businformers.NewFilteredCommandInformer(cl, ns, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
			})
		} else {
			cmdInf = opt.VolcanoInformerFactory.Bus().V1alpha1().Commands().Informer()
		}
		if err := cmdInf.AddIndexers(cache.Indexers{byTargetIndex: targetOfCommand}); err != nil {
			return err
		}
		c.cmdIndex = cmdInf.GetIndexer()
		if _, err := cmdInf.AddEventHandler(cache.FilteringResourceEventHandler{
			FilterFunc: func(obj any) bool {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				cmd, ok := obj.(*busv1alpha1.Command)
				return ok && isQueueReference(cmd)
			},
			// Commands are one-shot requests: only their creation matters.
			// A deletion needs no work and updates do not happen.
			Handler: cache.ResourceEventHandlerFuncs{AddFunc: c.addCommand, DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if cmd, ok := obj.(*busv1alpha1.Command); ok {
					c.forgetWaiting(cmd.UID)
				}
			}},
		}); err != nil {
			return err
		}
		c.synced = append(c.synced, cmdInf.HasSynced)
	}
	return nil
}

// Run implements framework.Controller.
func (c *Controller) Run(ctx context.Context) {
	stopCh := ctx.Done()
	defer c.wq.ShutDown()
	defer c.fast.ShutDown()
	if !cache.WaitForCacheSync(stopCh, c.synced...) {
		return
	}
	logger := klog.FromContext(ctx)
	if c.ensureDefaults {
		// Retried until it works or we stop: without root nothing else in
		// the hierarchy makes sense.
		// Syncs start once the cache shows both, so that no queue is
		// reported as missing its parent root for the moment it takes the
		// informer to see the queues just created.
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := c.ensureDefaultQueues(ctx); err != nil {
				logger.Error(err, "cannot ensure the root and default queues; retrying")
				return false, nil
			}
			root, def := c.inCache(keys.RootQueue), c.inCache(keys.DefaultQueue)
			if !root || !def {
				// At -v=2, what the start waits for (a start that never
				// logged "queue controller started" once left no trace).
				logger.V(2).Info("waiting for the root and default queues in the cache", "rootQueue", root, "defaultQueue", def)
			}
			return root && def, nil
		})
		if ctx.Err() != nil {
			return
		}
	}
	logger.Info("queue controller started", "workers", c.workers, "ensureDefaultQueues", c.ensureDefaults,
		"maxRequeueNum", c.maxRequeue)
	loop := func(q workqueue.TypedRateLimitingInterface[string]) framework.Loop[string] {
		return framework.Loop[string]{
			Queue: q, Workers: c.workers, MaxRequeue: c.maxRequeue, Sync: c.lockedSync,
			Retrying: func(ctx context.Context, _ string, err error) {
				klog.FromContext(ctx).V(2).Info("sync failed, requeued", "err", err)
			},
			// Dropped: the pending Commands stay, visible in 'command list', and
			// a later event for this queue tries again.
			Dropped: func(ctx context.Context, key string, err error) {
				klog.FromContext(ctx).Error(err, "dropping queue request after the requeue limit", "retries", c.maxRequeue)
				if q, gerr := c.queues.Get(key); gerr == nil {
					c.recorder.Eventf(q, corev1.EventTypeWarning, "RequestDropped", "dropped after %d retries: %v", c.maxRequeue, err)
				}
			},
		}
	}
	// The Commands' lane has as many workers as the other: a close is two
	// round trips, and DefaultWorkers is what keeps many closes in flight.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		loop(c.fast).Run(ctx)
	}()
	loop(c.wq).Run(ctx)
	wg.Wait()
}

// addCommand hands the queue a new Command targets to the Commands' lane.
func (c *Controller) addCommand(obj any) {
	c.fast.Add(obj.(*busv1alpha1.Command).TargetObject.Name)
}

// lockedSync syncs one queue, never at the same time as another sync of
// the same queue from the other lane.
func (c *Controller) lockedSync(ctx context.Context, name string) error {
	unlock := c.locks.lock(name)
	defer unlock()
	return c.syncQueue(ctx, name)
}

// keyLocks is a lock per key, held only while some sync holds or waits for
// it (the map does not grow with the queues ever synced).
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int // holders and waiters
}

// lock waits until no one else holds key's lock and takes it; the function
// returned gives it back.
func (k *keyLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.held == nil {
		k.held = map[string]*keyLock{}
	}
	l := k.held[key]
	if l == nil {
		l = &keyLock{}
		k.held[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
}

// watchPodGroups fills c.podGroups from the process's one reading of the
// podgroups' rows (framework.ControllerOption.PodGroupRows): server-side
// Tables of the QUEUE and STATUS columns (podgrouprows.ListWatch), which
// the API server serves and the client reads several times faster than
// whole objects (docs/benchmarks.md), shared with the podgroup controller.
func (c *Controller) watchPodGroups(opt *framework.ControllerOption) (cache.InformerSynced, error) {
	rows := opt.PodGroupRows()
	if err := rows.Feed(c.podGroups); err != nil {
		return nil, err
	}
	return rows.HasSynced, nil
}

// queueNameOf is the queue a podgroup counts against; a podgroup naming no
// queue is scheduled into the default queue.
func queueNameOf(pg *v1beta1.PodGroup) string { return rules.QueueOf(pg.Spec.Queue) }

// parentOf indexes queues by parent; a queue without one is a child of root
// (the controller will write that), except root itself.
func parentOf(obj any) ([]string, error) {
	q, ok := obj.(*v1beta1.Queue)
	if !ok {
		return nil, fmt.Errorf("not a Queue: %T", obj)
	}
	if p := rules.EffectiveParent(q); p != "" {
		return []string{p}, nil
	}
	return nil, nil
}

func targetOfCommand(obj any) ([]string, error) {
	cmd, ok := obj.(*busv1alpha1.Command)
	if !ok || !isQueueReference(cmd) {
		return nil, nil
	}
	return []string{cmd.TargetObject.Name}, nil
}

// isQueueReference tells the Commands this controller takes: those whose
// target is a Volcano Queue.
func isQueueReference(cmd *busv1alpha1.Command) bool {
	t := cmd.TargetObject
	return t != nil && t.APIVersion == v1beta1.SchemeGroupVersion.String() && t.Kind == "Queue" && t.Name != ""
}
