// Package podgroup is the podgroup controller of 'kubectl vc serve'. It gives
// pods that use a Volcano scheduler but belong to no PodGroup (standalone
// pods, and the replicas of Deployments, StatefulSets, Jobs, DaemonSets) the
// PodGroup Volcano's own controller would give them, field for field, and
// writes the group's name into the pod's scheduling.k8s.io/group-name.
package podgroup

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/spf13/pflag"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	schedulinglisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
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

// kind says what a request is about. Pods, their owners and queues go
// through the same work queue so that retries, rate limiting and the
// one-worker-per-key guarantee apply to all.
type kind uint8

const (
	podKind kind = iota
	// replicaSetKind and statefulSetKind are the WorkLoadSupport path.
	replicaSetKind
	statefulSetKind
	// jobKind and daemonSetKind bring the group of a Job's or DaemonSet's
	// pods to what the owner says once the owner is seen or changes.
	jobKind
	daemonSetKind
	// queueKind asks for the ungrouped pods of a queue that opened.
	queueKind
)

func (k kind) String() string {
	switch k {
	case replicaSetKind:
		return "ReplicaSet"
	case statefulSetKind:
		return "StatefulSet"
	case jobKind:
		return "Job"
	case daemonSetKind:
		return "DaemonSet"
	case queueKind:
		return "Queue"
	default:
		return "Pod"
	}
}

// request is a work queue key. It names the object, never carries it: the
// worker reads the newest copy from the cache.
type request struct {
	kind      kind
	namespace string
	name      string
}

// Controller is the podgroup controller.
type Controller struct {
	kube kubernetes.Interface
	vc   versioned.Interface

	pods corelisters.PodLister
	// podIndex holds ungroupedIndex over the pod cache.
	podIndex cache.Indexer
	groups   schedulinglisters.PodGroupLister
	queues   schedulinglisters.QueueLister
	// Owners are read through listers so that building a group costs no
	// API call; nil when the owner kind is not needed.
	replicaSets  appslisters.ReplicaSetLister
	statefulSets appslisters.StatefulSetLister
	daemonSets   appslisters.DaemonSetLister
	jobs         batchlisters.JobLister
	synced       []cache.InformerSynced

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

// queueLagRetry is how long a request waits when the API server refused a
// group because of a queue's state that our cache already shows as Open:
// the server has not caught up yet. Such a wait does not count as a retry.
const queueLagRetry = time.Second

// New returns a podgroup controller with the defaults of its flags.
func New() *Controller {
	return &Controller{workers: DefaultWorkers, schedulers: []string{"volcano"}, inherit: true, resync: DefaultResyncPeriod}
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
	podInf := kf.Core().V1().Pods()
	c.pods = podInf.Lister()
	if err := podInf.Informer().AddIndexers(cache.Indexers{ungroupedIndex: c.indexUngrouped}); err != nil {
		return err
	}
	c.podIndex = podInf.Informer().GetIndexer()
	m, err := newMetrics(opt.MetricsRegistry, func() int { return countIndex(c.podIndex, ungroupedIndex, ungroupedValue) })
	if err != nil {
		return err
	}
	c.metrics = m
	// Only pod creation starts work, as in Volcano: once a pod has its group
	// the pod path has nothing more to do, and our own annotation patch
	// must not come back as work.
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.addPod}); err != nil {
		return err
	}
	sched := opt.VolcanoInformerFactory.Scheduling().V1beta1()
	pgInf := sched.PodGroups()
	c.groups = pgInf.Lister()
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
	c.synced = []cache.InformerSynced{podInf.Informer().HasSynced, pgInf.Informer().HasSynced, qInf.Informer().HasSynced}

	apps := kf.Apps().V1()
	if c.inherit || c.workloads {
		c.replicaSets = apps.ReplicaSets().Lister()
		c.statefulSets = apps.StatefulSets().Lister()
		c.synced = append(c.synced, apps.ReplicaSets().Informer().HasSynced, apps.StatefulSets().Informer().HasSynced)
	}
	if c.inherit {
		c.daemonSets = apps.DaemonSets().Lister()
		c.jobs = kf.Batch().V1().Jobs().Lister()
		c.synced = append(c.synced, apps.DaemonSets().Informer().HasSynced, kf.Batch().V1().Jobs().Informer().HasSynced)
		// A Job's or DaemonSet's pods may reach our cache before it does
		// (two watch streams): their group then waits for the owner, whose
		// add brings it about; a later change of its annotations reaches
		// the group the same way.
		for k, inf := range map[kind]cache.SharedIndexInformer{jobKind: kf.Batch().V1().Jobs().Informer(), daemonSetKind: apps.DaemonSets().Informer()} {
			if _, err := inf.AddEventHandler(c.workloadHandler(k)); err != nil {
				return err
			}
		}
	}
	if c.workloads {
		for k, inf := range map[kind]cache.SharedIndexInformer{replicaSetKind: apps.ReplicaSets().Informer(), statefulSetKind: apps.StatefulSets().Informer()} {
			if _, err := inf.AddEventHandler(c.workloadHandler(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Controller) workloadHandler(k kind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addWorkload(k, obj) },
		UpdateFunc: func(old, cur any) { c.updateWorkload(k, old, cur) },
	}
}

// Run implements framework.Controller.
func (c *Controller) Run(ctx context.Context) {
	stopCh := ctx.Done()
	defer c.wq.ShutDown()
	if !cache.WaitForCacheSync(stopCh, c.synced...) {
		return
	}
	klog.InfoS("podgroup controller started", "workers", c.workers, "schedulers", c.schedulers,
		"inheritOwnerAnnotations", c.inherit, "workLoadSupport", c.workloads, "resyncPeriod", c.resync)
	if c.resync > 0 {
		go c.resyncLoop(ctx)
	}
	framework.Loop[request]{
		Queue: c.wq, Workers: c.workers, MaxRequeue: c.maxRequeue, Sync: c.sync,
		Retrying: func(req request, err error) {
			klog.V(2).InfoS("podgroup sync failed; retrying", "kind", req.kind, "object", klog.KRef(req.namespace, req.name), "err", err)
		},
		Dropped: func(req request, err error) {
			c.metrics.dropped.WithLabelValues(req.kind.String()).Inc()
			klog.ErrorS(err, "podgroup sync failed too often; dropping the request", "kind", req.kind, "object", klog.KRef(req.namespace, req.name))
			if obj := c.objectOf(req); obj != nil {
				c.recorder.Eventf(obj, corev1.EventTypeWarning, "PodGroupSyncFailed",
					"gave up after %d retries: %v", c.maxRequeue, err)
			}
		},
	}.Run(stopCh)
}

// resyncLoop hands every pod still without a group to the workers once per
// resync period, whatever made its last attempt fail: a request dropped
// after --max-requeue-num retries is otherwise never tried again, and no
// event may come to bring it back (a quota raised, a webhook fixed).
func (c *Controller) resyncLoop(ctx context.Context) {
	t := time.NewTicker(c.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, obj := range c.ungrouped() {
				c.wq.Add(request{kind: podKind, namespace: obj.Namespace, name: obj.Name})
			}
		}
	}
}

// ungrouped are the pods of ungroupedIndex.
func (c *Controller) ungrouped() []*corev1.Pod {
	objs, err := c.podIndex.ByIndex(ungroupedIndex, ungroupedValue)
	if err != nil {
		return nil
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out
}

// indexUngrouped is the index function of ungroupedIndex.
func (c *Controller) indexUngrouped(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !c.wants(&pod.Spec) || pod.Annotations[keys.KubeGroupName] != "" || !live(pod) {
		return nil, nil
	}
	return []string{ungroupedValue}, nil
}

// objectOf is the object a dropped request's event is recorded on.
func (c *Controller) objectOf(req request) runtime.Object {
	var (
		obj runtime.Object
		err error
	)
	switch req.kind {
	case podKind:
		obj, err = c.pods.Pods(req.namespace).Get(req.name)
	case replicaSetKind:
		obj, err = c.replicaSets.ReplicaSets(req.namespace).Get(req.name)
	case statefulSetKind:
		obj, err = c.statefulSets.StatefulSets(req.namespace).Get(req.name)
	case jobKind:
		obj, err = c.jobs.Jobs(req.namespace).Get(req.name)
	case daemonSetKind:
		obj, err = c.daemonSets.DaemonSets(req.namespace).Get(req.name)
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return obj
}

// wants says whether a pod is ours to group: it uses one of our schedulers.
func (c *Controller) wants(spec *corev1.PodSpec) bool {
	return slices.Contains(c.schedulers, spec.SchedulerName)
}

// addPod filters early, so that pods of other schedulers and pods that
// already have a group (a Volcano Job's, say) cost nothing more; the worker
// checks again against the newest copy.
//
// A new pod of a StatefulSet also brings its StatefulSet's group up to
// date: it may be the first pod of a new update revision in our cache,
// after the StatefulSet's own events (status.updateRevision) have all been
// handled without it, and then nothing else would rebuild the group from
// the new template.
func (c *Controller) addPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !c.wants(&pod.Spec) || pod.Annotations[keys.KubeGroupName] != "" {
		return
	}
	c.wq.Add(request{kind: podKind, namespace: pod.Namespace, name: pod.Name})
	if ref := metav1.GetControllerOf(pod); c.workloads && ref != nil && ownerKind(ref) == statefulSetKind {
		c.wq.Add(request{kind: statefulSetKind, namespace: pod.Namespace, name: ref.Name})
	}
}

// ownerKind is the kind of request of an owner reference, podKind when it
// is not a kind the controller reads.
func ownerKind(ref *metav1.OwnerReference) kind {
	group := ref.APIVersion
	if i := strings.Index(group, "/"); i >= 0 {
		group = group[:i]
	}
	switch {
	case group == appsv1.GroupName && ref.Kind == "ReplicaSet":
		return replicaSetKind
	case group == appsv1.GroupName && ref.Kind == "StatefulSet":
		return statefulSetKind
	case group == appsv1.GroupName && ref.Kind == "DaemonSet":
		return daemonSetKind
	case group == batchv1.GroupName && ref.Kind == "Job":
		return jobKind
	}
	return podKind
}

// addWorkload enqueues a ReplicaSet, StatefulSet, Job or DaemonSet whose
// pod template uses one of our schedulers; other workloads never had a
// group from us.
func (c *Controller) addWorkload(k kind, obj any) {
	var (
		ns, name string
		tmpl     *corev1.PodSpec
	)
	switch w := obj.(type) {
	case *appsv1.ReplicaSet:
		ns, name, tmpl = w.Namespace, w.Name, &w.Spec.Template.Spec
	case *appsv1.StatefulSet:
		ns, name, tmpl = w.Namespace, w.Name, &w.Spec.Template.Spec
	case *batchv1.Job:
		ns, name, tmpl = w.Namespace, w.Name, &w.Spec.Template.Spec
	case *appsv1.DaemonSet:
		ns, name, tmpl = w.Namespace, w.Name, &w.Spec.Template.Spec
	default:
		return
	}
	if !c.wants(tmpl) {
		return
	}
	c.wq.Add(request{kind: k, namespace: ns, name: name})
}

// updateWorkload treats an update like an add, as Volcano does: during a
// rolling update the add of a ReplicaSet may be seen at replicas 0 and the
// scale-up only as an update. Resyncs (same resourceVersion) are skipped.
func (c *Controller) updateWorkload(k kind, old, cur any) {
	o, ok1 := old.(interface{ GetResourceVersion() string })
	n, ok2 := cur.(interface{ GetResourceVersion() string })
	if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
		return
	}
	c.addWorkload(k, cur)
}

// addQueue asks for the ungrouped pods of a queue that appears Open or
// goes away (a queue that does not exist refuses nothing).
func (c *Controller) addQueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if q, ok := obj.(*v1beta1.Queue); ok {
		c.wq.Add(request{kind: queueKind, name: q.Name})
	}
}

// updateQueue asks for the ungrouped pods of a queue that has just opened.
func (c *Controller) updateQueue(old, cur any) {
	o, ok1 := old.(*v1beta1.Queue)
	n, ok2 := cur.(*v1beta1.Queue)
	if ok1 && ok2 && !isOpen(o) && isOpen(n) {
		c.wq.Add(request{kind: queueKind, name: n.Name})
	}
}

// isOpen says whether a queue accepts new groups; no state is Open.
func isOpen(q *v1beta1.Queue) bool {
	return q.Status.State == "" || q.Status.State == v1beta1.QueueStateOpen
}
