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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	schedulinglisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// Name is the controller's name for --controllers and --workers-podgroup.
const Name = "podgroup"

func init() {
	if err := framework.RegisterController(Name, func() framework.Controller { return New() }); err != nil {
		panic(err)
	}
}

// kind says what a request is about. Pods, ReplicaSets and StatefulSets go
// through the same work queue so that retries, rate limiting and the
// one-worker-per-key guarantee apply to all three.
type kind uint8

const (
	podKind kind = iota
	replicaSetKind
	statefulSetKind
)

func (k kind) String() string {
	switch k {
	case replicaSetKind:
		return "ReplicaSet"
	case statefulSetKind:
		return "StatefulSet"
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

	pods   corelisters.PodLister
	groups schedulinglisters.PodGroupLister
	// Owners are read through listers so that building a group costs no
	// API call; nil when the owner kind is not needed.
	replicaSets  appslisters.ReplicaSetLister
	statefulSets appslisters.StatefulSetLister
	daemonSets   appslisters.DaemonSetLister
	jobs         batchlisters.JobLister
	synced       []cache.InformerSynced

	wq         workqueue.TypedRateLimitingInterface[request]
	recorder   record.EventRecorder
	maxRequeue int
	workloads  bool
	now        func() time.Time

	// Set by the controller's flags (AddFlags).
	workers    int
	schedulers []string
	inherit    bool
}

// New returns a podgroup controller with the defaults of its flags.
func New() *Controller {
	return &Controller{workers: framework.DefaultWorkers, schedulers: []string{"volcano"}, inherit: true}
}

// Name implements framework.Controller.
func (c *Controller) Name() string { return Name }

// AddFlags implements framework.Controller.
func (c *Controller) AddFlags(fs *pflag.FlagSet) {
	framework.WorkersFlag(fs, &c.workers, Name)
	fs.StringArrayVar(&c.schedulers, "scheduler-name", c.schedulers, "Scheduler whose pods get podgroups (repeatable)")
	fs.BoolVar(&c.inherit, "inherit-owner-annotations", c.inherit, "PodGroups inherit the volcano.sh/ annotations of the pod's owner")
}

// Validate implements framework.Controller.
func (c *Controller) Validate() error {
	if err := framework.ValidateWorkers(c.workers, Name); err != nil {
		return err
	}
	if len(c.schedulers) == 0 {
		return fmt.Errorf("--scheduler-name must name at least one scheduler")
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
	// Only pod creation starts work, as in Volcano: once a pod has its group
	// the pod path has nothing more to do, and our own annotation patch
	// must not come back as work.
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.addPod}); err != nil {
		return err
	}
	pgInf := opt.VolcanoInformerFactory.Scheduling().V1beta1().PodGroups()
	c.groups = pgInf.Lister()
	c.synced = []cache.InformerSynced{podInf.Informer().HasSynced, pgInf.Informer().HasSynced}

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
	}
	if c.workloads {
		if _, err := apps.ReplicaSets().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addWorkload(replicaSetKind, obj) },
			UpdateFunc: func(old, cur any) { c.updateWorkload(replicaSetKind, old, cur) },
		}); err != nil {
			return err
		}
		if _, err := apps.StatefulSets().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { c.addWorkload(statefulSetKind, obj) },
			UpdateFunc: func(old, cur any) { c.updateWorkload(statefulSetKind, old, cur) },
		}); err != nil {
			return err
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
	klog.InfoS("podgroup controller started", "workers", c.workers, "schedulers", c.schedulers,
		"inheritOwnerAnnotations", c.inherit, "workLoadSupport", c.workloads)
	framework.Loop[request]{
		Queue: c.wq, Workers: c.workers, MaxRequeue: c.maxRequeue, Sync: c.sync,
		Retrying: func(req request, err error) {
			klog.V(2).InfoS("podgroup sync failed; retrying", "kind", req.kind, "object", klog.KRef(req.namespace, req.name), "err", err)
		},
		Dropped: func(req request, err error) {
			klog.ErrorS(err, "podgroup sync failed too often; dropping the request", "kind", req.kind, "object", klog.KRef(req.namespace, req.name))
			if obj := c.objectOf(req); obj != nil {
				c.recorder.Eventf(obj, corev1.EventTypeWarning, "PodGroupSyncFailed",
					"gave up after %d retries: %v", c.maxRequeue, err)
			}
		},
	}.Run(stopCh)
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
func (c *Controller) addPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !c.wants(&pod.Spec) || pod.Annotations[keys.KubeGroupName] != "" {
		return
	}
	c.wq.Add(request{kind: podKind, namespace: pod.Namespace, name: pod.Name})
}

// addWorkload enqueues a ReplicaSet or StatefulSet whose pod template uses
// one of our schedulers; other workloads never had a group from us.
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
