// Package nodeset is the NodeSet controller of 'kubectl vc serve': it runs
// Slinky NodeSets (slinky.slurm.net/v1beta1), i.e. keeps one pod per Slurm
// compute node with stable ordinals, and never deletes a pod whose Slurm
// node still runs jobs: a pod leaving (scale-in, update) is cordoned, its
// node drained in Slurm, and the pod deleted only once Slurm says drained.
package nodeset

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/spf13/pflag"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// Name is the controller's name for --controllers.
const Name = "nodeset"

// FieldManager owns what this controller applies (Service, PDB, status).
const FieldManager = "nodeset-controller"

const podsByNodeIndex = "nodeset:podsByNode"

// Config is what the controller needs beyond the manager's shared options.
type Config struct {
	// Slurm reaches the Slurm cluster of the NodeSets.
	Slurm slurm.Client
	// DrainPoll is how soon a NodeSet waiting for a Slurm drain is synced
	// again. Default 5s.
	DrainPoll time.Duration
	// Resync refreshes Slurm state counts in status. Default 30s.
	Resync time.Duration
	// ExpectationsTimeout unblocks a NodeSet whose pod events were lost. Default 5m.
	ExpectationsTimeout time.Duration
}

func init() {
	if err := framework.RegisterController(Name, func() framework.Controller { return New(Config{}) }); err != nil {
		panic(err)
	}
}

// Controller is the NodeSet controller.
type Controller struct {
	cfg Config

	kube kubernetes.Interface
	vc   versioned.Interface

	nodeSets  slinkylisters.NodeSetLister
	pods      corelisters.PodLister
	podIndex  cache.Indexer
	revisions appslisters.ControllerRevisionLister
	nodes     corelisters.NodeLister
	services  corelisters.ServiceLister
	pdbs      policylisters.PodDisruptionBudgetLister
	synced    []cache.InformerSynced

	wq       workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	// Set by the controller's flags (AddFlags). The Slurm settings are
	// used only when Config.Slurm is nil: serve's case.
	workers     int
	slurmConf   string
	slurmBinDir string

	exp     *expectations
	metrics *metrics
}

// New returns a controller; Initialize wires it to the manager's informers.
func New(cfg Config) *Controller {
	if cfg.DrainPoll == 0 {
		cfg.DrainPoll = 5 * time.Second
	}
	if cfg.Resync == 0 {
		cfg.Resync = 30 * time.Second
	}
	if cfg.ExpectationsTimeout == 0 {
		cfg.ExpectationsTimeout = 5 * time.Minute
	}
	// Unregistered until Initialize registers them with the manager's.
	m, _ := newMetrics(nil)
	return &Controller{cfg: cfg, exp: newExpectations(cfg.ExpectationsTimeout), metrics: m,
		workers: framework.DefaultWorkers, slurmConf: os.Getenv("SLURM_CONF")}
}

// AddFlags implements framework.Controller.
func (c *Controller) AddFlags(fs *pflag.FlagSet) {
	framework.WorkersFlag(fs, &c.workers, Name)
	fs.StringVar(&c.slurmConf, "slurm-conf", c.slurmConf, "slurm.conf of the Slurm cluster the NodeSet controller drains and resumes nodes in (default: $SLURM_CONF)")
	fs.StringVar(&c.slurmBinDir, "slurm-bin-dir", c.slurmBinDir, "Directory of scontrol, sinfo and squeue (default: search PATH)")
}

// Validate implements framework.Controller.
func (c *Controller) Validate() error { return framework.ValidateWorkers(c.workers, Name) }

// slurm is the controller's Slurm client: the one it was given, or the
// Slurm client commands its flags point at.
func (c *Controller) slurm() slurm.Client {
	if c.cfg.Slurm == nil {
		c.cfg.Slurm = slurm.NewCommands(slurm.CommandsConfig{Conf: c.slurmConf, BinDir: c.slurmBinDir})
	}
	return c.cfg.Slurm
}

// Name implements framework.Controller.
func (c *Controller) Name() string { return Name }

// PendingExpectations says whether the controller still keeps an
// expectations record for the NodeSet namespace/name (for tests and
// debugging: a deleted NodeSet must leave none behind).
func (c *Controller) PendingExpectations(key string) bool { return c.exp.has(key) }

// Preflight implements framework.Preflighter: the controller drains and
// resumes Slurm nodes with the Slurm client commands, which authenticate
// to slurmctld with munge. The kubectl-vc image carries neither, so serve
// refuses to start the controller without them rather than failing on
// every NodeSet later. A client other than the commands is not checked.
func (c *Controller) Preflight() error {
	ch, ok := c.slurm().(interface{ Check() error })
	if !ok {
		return nil
	}
	if err := ch.Check(); err != nil {
		return fmt.Errorf("the NodeSet controller needs the Slurm client commands and a munge key (%v): "+
			"run it outside the kubectl-vc image, where Slurm's client and munge are "+
			"('kubectl vc serve --controllers=nodeset', --slurm-bin-dir), or leave it out with --controllers (e.g. --controllers=queue,podgroup)", err)
	}
	return nil
}

// Initialize implements framework.Controller.
func (c *Controller) Initialize(_ context.Context, opt *framework.ControllerOption) error {
	c.kube = opt.KubeClient
	c.vc = opt.VolcanoClient
	c.recorder = opt.Recorder
	c.slurm()
	m, err := newMetrics(opt.MetricsRegistry)
	if err != nil {
		return err
	}
	c.metrics = m
	c.wq = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: Name, MetricsProvider: opt.WorkqueueMetrics},
	)

	nsInf := opt.VolcanoInformerFactory.Slinky().V1beta1().NodeSets()
	c.nodeSets = nsInf.Lister()
	if _, err := nsInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNodeSet,
		UpdateFunc: func(_, obj any) { c.enqueueNodeSet(obj) },
		DeleteFunc: c.enqueueNodeSet,
	}); err != nil {
		return err
	}

	podInf := opt.KubeInformerFactory.Core().V1().Pods()
	if err := podInf.Informer().AddIndexers(cache.Indexers{podsByNodeIndex: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return err
	}
	c.pods = podInf.Lister()
	c.podIndex = podInf.Informer().GetIndexer()
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return err
	}

	revInf := opt.KubeInformerFactory.Apps().V1().ControllerRevisions()
	c.revisions = revInf.Lister()
	if _, err := revInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, obj any) { c.enqueueOwner(obj) },
		DeleteFunc: c.enqueueOwner,
	}); err != nil {
		return err
	}

	nodeInf := opt.KubeInformerFactory.Core().V1().Nodes()
	c.nodes = nodeInf.Lister()
	if _, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: c.updateNode,
	}); err != nil {
		return err
	}
	svcInf := opt.KubeInformerFactory.Core().V1().Services()
	c.services = svcInf.Lister()
	pdbInf := opt.KubeInformerFactory.Policy().V1().PodDisruptionBudgets()
	c.pdbs = pdbInf.Lister()
	// A deleted Service or PDB is put back.
	for _, inf := range []cache.SharedIndexInformer{svcInf.Informer(), pdbInf.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueOwner}); err != nil {
			return err
		}
	}
	c.synced = []cache.InformerSynced{nsInf.Informer().HasSynced, podInf.Informer().HasSynced,
		revInf.Informer().HasSynced, nodeInf.Informer().HasSynced, svcInf.Informer().HasSynced, pdbInf.Informer().HasSynced}
	return nil
}

// Run implements framework.Controller.
func (c *Controller) Run(ctx context.Context) {
	stopCh := ctx.Done()
	defer c.wq.ShutDown()
	if !cache.WaitForCacheSync(stopCh, c.synced...) {
		return
	}
	// Errors are retried rate-limited without a limit: a NodeSet waits on
	// Slurm, which may be away for a while.
	framework.Loop[string]{
		Queue: c.wq, Workers: c.workers, MaxRequeue: -1,
		Sync: func(ctx context.Context, key string) error {
			requeue, err := c.sync(ctx, key)
			if err == nil && requeue > 0 {
				c.wq.AddAfter(key, requeue)
			}
			return err
		},
		Retrying: func(key string, err error) {
			klog.ErrorS(err, "syncing NodeSet", "nodeset", key)
		},
	}.Run(stopCh)
}

func (c *Controller) enqueueNodeSet(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.wq.Add(key)
	}
}

// ownerKey is the key of the NodeSet controlling obj, or, for an orphan
// carrying our worker labels, of the NodeSet it may be adopted by.
func ownerKey(obj metav1.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		if ref.Kind != slinkyv1beta1.NodeSetKind.Kind || ref.APIVersion != slinkyv1beta1.SchemeGroupVersion.String() {
			return ""
		}
		return obj.GetNamespace() + "/" + ref.Name
	}
	l := obj.GetLabels()
	if l[slinkyv1beta1.LabelAppName] == slinkyv1beta1.AppName && l[slinkyv1beta1.LabelAppInstance] != "" {
		return obj.GetNamespace() + "/" + l[slinkyv1beta1.LabelAppInstance]
	}
	return ""
}

func metaOf(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, _ := obj.(metav1.Object)
	return m
}

func (c *Controller) enqueueOwner(obj any) {
	if m := metaOf(obj); m != nil {
		if key := ownerKey(m); key != "" {
			c.wq.Add(key)
		}
	}
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if key := ownerKey(pod); key != "" {
			c.exp.creationObserved(key)
		}
	}
	c.enqueueOwner(pod)
}

func (c *Controller) updatePod(old, cur any) {
	o, n := old.(*corev1.Pod), cur.(*corev1.Pod)
	if o.ResourceVersion == n.ResourceVersion {
		return
	}
	// A pod that starts terminating counts as deleted for the
	// expectations (see expectations).
	if n.DeletionTimestamp != nil && o.DeletionTimestamp == nil && metav1.GetControllerOf(n) != nil {
		if key := ownerKey(n); key != "" {
			c.exp.deletionObserved(key, n.UID)
		}
	}
	if ko, kn := ownerKey(o), ownerKey(n); ko != kn && ko != "" {
		c.wq.Add(ko)
	}
	c.enqueueOwner(n)
}

func (c *Controller) deletePod(obj any) {
	m := metaOf(obj)
	if m == nil {
		return
	}
	if metav1.GetControllerOf(m) != nil {
		if key := ownerKey(m); key != "" {
			c.exp.deletionObserved(key, m.GetUID())
		}
	}
	c.enqueueOwner(m)
}

// updateNode: a Kubernetes node (un)cordoned means its NodeSet pods must be
// (un)cordoned and their Slurm nodes drained or resumed.
func (c *Controller) updateNode(old, cur any) {
	o, n := old.(*corev1.Node), cur.(*corev1.Node)
	if o.Spec.Unschedulable == n.Spec.Unschedulable {
		return
	}
	objs, err := c.podIndex.ByIndex(podsByNodeIndex, n.Name)
	if err != nil {
		return
	}
	for _, obj := range objs {
		c.enqueueOwner(obj)
	}
}

// Interface checks.
var (
	_ framework.Controller  = &Controller{}
	_ framework.Preflighter = &Controller{}
)
