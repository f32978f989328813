// Package queueindex is the controller of 'kubectl vc serve' that keeps the
// admission policies' QueueIndexes: small objects holding, for the queues
// that need it, their state, children and resource lists, so that the API
// server checks a PodGroup, a Job or a queue write with one lookup rather
// than one evaluation per Queue (docs/admission.md, index mode). It also
// stamps each index refreshed at least every --queueindex-refresh: the
// policies refuse creates once an index is older than
// admissionv1alpha1.QueueIndexMaxAge, so that an index nobody keeps any
// more is never trusted for long.
package queueindex

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	admissionlisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/admission/v1alpha1"
	schedulinglisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// Name is the controller's name for --controllers and --workers-queueindex.
const Name = "queueindex"

// key is the one key of the work queue: the indexes are written from every
// queue at once, so any change asks for the same sync and the work queue
// folds a burst of changes into one.
const key = "indexes"

// DefaultBatchDelay is the least time between two syncs: at the creation of
// 10 000 queues, a few index writes rather than 10 000, while a queue made
// alone is indexed at once.
const DefaultBatchDelay = 50 * time.Millisecond

// DefaultRefresh is how often an index that did not change is stamped
// refreshed anyway: a quarter of QueueIndexMaxAge, so that a few failed
// writes in a row do not make the policies refuse creates.
const DefaultRefresh = admissionv1alpha1.QueueIndexMaxAge / 4

func init() {
	if err := framework.RegisterController(Name, func() framework.Controller { return New() }); err != nil {
		panic(err)
	}
}

// Controller keeps the QueueIndexes.
type Controller struct {
	vc         versioned.Interface
	queues     schedulinglisters.QueueLister
	indexes    admissionlisters.QueueIndexLister
	wq         workqueue.TypedRateLimitingInterface[string]
	recorder   record.EventRecorder
	synced     []cache.InformerSynced
	maxRequeue int

	delay   time.Duration
	refresh time.Duration
	// idle: the API server does not serve the QueueIndex kind.
	idle bool
	// lastSync is when the last sync ended (UnixNano).
	lastSync atomic.Int64
}

// New returns a queue index controller with its default settings.
func New() *Controller { return &Controller{delay: DefaultBatchDelay, refresh: DefaultRefresh} }

// Name implements framework.Controller.
func (c *Controller) Name() string { return Name }

// AddFlags implements framework.Controller.
func (c *Controller) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.delay, "queueindex-batch-delay", c.delay, "The least time between two writes of the admission QueueIndex (a change after a quiet spell is written at once)")
	fs.DurationVar(&c.refresh, "queueindex-refresh", c.refresh, fmt.Sprintf("How often an unchanged admission QueueIndex is stamped refreshed; the policies refuse creates once an index is %s old", admissionv1alpha1.QueueIndexMaxAge))
}

// Validate implements framework.Controller.
func (c *Controller) Validate() error {
	if c.refresh <= 0 || c.refresh > admissionv1alpha1.QueueIndexMaxAge/2 {
		return fmt.Errorf("--queueindex-refresh must be positive and at most %s (half the age at which the policies stop trusting an index), got %s", admissionv1alpha1.QueueIndexMaxAge/2, c.refresh)
	}
	if c.delay < 0 || c.delay > time.Minute {
		return fmt.Errorf("--queueindex-batch-delay must be between 0 and 1m, got %s", c.delay)
	}
	return nil
}

// CacheReads implements framework.Controller: of a queue, its parent,
// resource lists and state; the index whole.
func (c *Controller) CacheReads() []framework.CacheRead {
	return []framework.CacheRead{
		framework.ReadsOnly(func(dst, src *v1beta1.Queue) {
			dst.Spec.Parent = src.Spec.Parent
			dst.Spec.Capability = src.Spec.Capability
			dst.Spec.Deserved = src.Spec.Deserved
			dst.Spec.Guarantee.Resource = src.Spec.Guarantee.Resource
			dst.Status.State = src.Status.State
		}),
		framework.ReadsAll[admissionv1alpha1.QueueIndex](),
	}
}

// Initialize implements framework.Controller.
func (c *Controller) Initialize(_ context.Context, opt *framework.ControllerOption) error {
	if err := quantityguard.Register(opt.VolcanoInformerFactory, opt.VolcanoClient); err != nil {
		return err
	}
	c.vc = opt.VolcanoClient
	c.recorder = opt.Recorder
	c.maxRequeue = opt.MaxRequeueNum
	c.wq = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: Name, MetricsProvider: opt.WorkqueueMetrics},
	)
	// Without the QueueIndex kind (serve against a cluster where 'kubectl
	// vc install' has not run, or Volcano's CRDs alone) there is no index
	// to keep and no policy reads one: the controller stays idle rather
	// than hold every cache back waiting for a kind that is not served.
	served, err := indexServed(opt)
	if err != nil {
		return err
	}
	if !served {
		c.idle = true
		return nil
	}
	qInf := opt.VolcanoInformerFactory.Scheduling().V1beta1().Queues()
	c.queues = qInf.Lister()
	if _, err := qInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueue() },
		UpdateFunc: c.updateQueue,
		DeleteFunc: func(any) { c.enqueue() },
	}); err != nil {
		return err
	}
	iInf := opt.VolcanoInformerFactory.Admission().V1alpha1().QueueIndexes()
	c.indexes = iInf.Lister()
	if _, err := iInf.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			i, ok := obj.(*admissionv1alpha1.QueueIndex)
			return ok && slices.Contains(admissionv1alpha1.QueueIndexNames, i.Name)
		},
		// Someone else's write of the index (or its deletion) is undone.
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.enqueue() },
			UpdateFunc: func(_, _ any) { c.enqueue() },
			DeleteFunc: func(any) { c.enqueue() },
		},
	}); err != nil {
		return err
	}
	c.synced = []cache.InformerSynced{qInf.Informer().HasSynced, iInf.Informer().HasSynced}
	return nil
}

// updateQueue asks for a sync when what the index depends on changed: the
// parent, a resource list, or whether the state is Open. The controller's
// podgroup counts, most queue updates, change none of them.
func (c *Controller) updateQueue(oldObj, newObj any) {
	o, ok1 := oldObj.(*v1beta1.Queue)
	n, ok2 := newObj.(*v1beta1.Queue)
	if !ok1 || !ok2 {
		c.enqueue()
		return
	}
	if rules.EffectiveParent(o) != rules.EffectiveParent(n) ||
		rules.StateOrOpen(o.Status.State) != rules.StateOrOpen(n.Status.State) ||
		!apiequality.Semantic.DeepEqual(o.Spec.Capability, n.Spec.Capability) ||
		!apiequality.Semantic.DeepEqual(o.Spec.Deserved, n.Spec.Deserved) ||
		!apiequality.Semantic.DeepEqual(o.Spec.Guarantee.Resource, n.Spec.Guarantee.Resource) {
		c.enqueue()
	}
}

// enqueue asks for a sync: at once when none ran in the last delay (the
// policies see a queue just made only once it is indexed, so the sooner
// the better), else once delay has passed since the last, so that
// a burst of changes is written in a few syncs rather than one each.
func (c *Controller) enqueue() {
	last := time.Unix(0, c.lastSync.Load())
	if wait := c.delay - time.Since(last); wait > 0 {
		c.wq.AddAfter(key, wait)
		return
	}
	c.wq.Add(key)
}

// Run implements framework.Controller.
func (c *Controller) Run(ctx context.Context) {
	defer c.wq.ShutDown()
	if c.idle {
		klog.FromContext(ctx).Info("the API server does not serve queueindexes." + admissionv1alpha1.GroupName + ": no admission index to keep (kubectl vc install installs it)")
		<-ctx.Done()
		return
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	klog.FromContext(ctx).Info("queue index controller started")
	c.wq.Add(key)
	framework.Loop[string]{
		Queue: c.wq, Workers: 1, MaxRequeue: c.maxRequeue,
		Sync: func(ctx context.Context, _ string) error {
			defer func() { c.lastSync.Store(time.Now().UnixNano()) }()
			// The next refresh, whatever happens meanwhile: a sync given
			// up on is tried again then.
			c.wq.AddAfter(key, c.refresh)
			return c.sync(ctx)
		},
		KeyValues: func(string) []any { return nil }, // one index, no object to name
		Retrying: func(ctx context.Context, _ string, err error) {
			klog.FromContext(ctx).Error(err, "queue index not written; retrying")
		},
		Dropped: func(ctx context.Context, _ string, err error) {
			klog.FromContext(ctx).Error(err, "queue index not written; given up until a queue changes")
		},
	}.Run(ctx)
}

// sync writes the indexes from the queues in the cache, each when its
// entries changed or its last refresh is older than the refresh interval.
func (c *Controller) sync(ctx context.Context) error {
	queues, err := c.queues.List(labels.Everything())
	if err != nil {
		return err
	}
	// The indexes are install's to create, with the policies that read
	// them: where none exists nothing reads an index (no policies, or the
	// per-queue mode), and serve writes nothing. One that exists makes
	// serve keep them all.
	installed := false
	for _, name := range admissionv1alpha1.QueueIndexNames {
		if _, err := c.indexes.Get(name); err == nil {
			installed = true
		}
	}
	if !installed {
		return nil
	}
	want := rules.QueueIndexEntriesText(queues)
	for _, name := range admissionv1alpha1.QueueIndexNames {
		err := c.writeIndex(ctx, name, want[name])
		// The cache is behind an index just written (by this controller's
		// last sync, or by install): its event is on the way and asks for
		// the next sync, so there is nothing to retry or log.
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeIndex makes the index name hold want, stamped refreshed now,
// creating it when missing (one deleted while the others stay).
func (c *Controller) writeIndex(ctx context.Context, name string, want string) error {
	now := metav1.Now()
	cur, err := c.indexes.Get(name)
	if apierrors.IsNotFound(err) {
		idx := &admissionv1alpha1.QueueIndex{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": keys.ServeName}, ManagedFields: noManagedFields},
			Spec:       admissionv1alpha1.QueueIndexSpec{Entries: want, RefreshedAt: &now},
		}
		if _, err := c.vc.AdmissionV1alpha1().QueueIndexes().Create(ctx, idx, metav1.CreateOptions{FieldManager: keys.ServeName}); err != nil {
			return fmt.Errorf("create the queue index %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if cur.Spec.Entries == want && cur.Spec.RefreshedAt != nil && now.Sub(cur.Spec.RefreshedAt.Time) < c.refresh {
		return nil
	}
	next := cur.DeepCopy()
	next.Spec.Entries, next.Spec.RefreshedAt = want, &now
	next.ManagedFields = noManagedFields
	if _, err := c.vc.AdmissionV1alpha1().QueueIndexes().Update(ctx, next, metav1.UpdateOptions{FieldManager: keys.ServeName}); err != nil {
		if !apierrors.IsConflict(err) {
			c.recorder.Eventf(cur, corev1.EventTypeWarning, "IndexNotWritten", "the queue index %s could not be written (%d bytes): %v", name, len(want), err)
		}
		return fmt.Errorf("write the queue index %s (%d bytes): %w", name, len(want), err)
	}
	return nil
}

// noManagedFields, sent with a write, clears the object's managedFields
// (the API server's documented way to strip them). The policies read an
// index whole, turned into a CEL value by a JSON round trip on every
// evaluation, and managedFields would list every entry's keys a second time
// (docs/admission.md): nothing but serve and install writes an index, and
// install applies only its labels.
var noManagedFields = []metav1.ManagedFieldsEntry{{}}

// indexServed asks discovery whether the API server serves queueindexes.
// Only a definite "not found" counts as not served: on any other error the
// kind is assumed served and its informer retries as usual.
func indexServed(opt *framework.ControllerOption) (bool, error) {
	list, err := opt.KubeClient.Discovery().ServerResourcesForGroupVersion(admissionv1alpha1.SchemeGroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return true, nil
	}
	for _, r := range list.APIResources {
		if r.Name == "queueindexes" {
			return true, nil
		}
	}
	return false, nil
}
