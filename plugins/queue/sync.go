package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/klog/v2"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	schedulingac "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// freshest returns the newer of the lister's copy of a queue and the object
// our last write returned.
func (c *Controller) freshest(name string) (*v1beta1.Queue, error) {
	q, err := c.queues.Get(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.written[name]
	if err != nil {
		return nil, err
	}
	if w == nil || w.UID != q.UID {
		delete(c.written, name)
		return q, nil
	}
	if cmp, cerr := resourceversion.CompareResourceVersion(w.ResourceVersion, q.ResourceVersion); cerr == nil && cmp > 0 {
		return w, nil
	}
	// The informer has caught up with (or passed) our write.
	delete(c.written, name)
	return q, nil
}

func (c *Controller) remember(q *v1beta1.Queue) {
	c.mu.Lock()
	c.written[q.Name] = q
	c.mu.Unlock()
}

// pendingCommands returns the Commands for a queue in creation order. The
// resourceVersion of a Command is that of its creation (Commands are never
// updated), which orders creations exactly even within one second, where
// creationTimestamp ties.
func (c *Controller) pendingCommands(queue string) []*busv1alpha1.Command {
	if c.cmdIndex == nil {
		return nil
	}
	objs, _ := c.cmdIndex.ByIndex(byTargetIndex, queue)
	cmds := make([]*busv1alpha1.Command, 0, len(objs))
	for _, o := range objs {
		cmd := o.(*busv1alpha1.Command)
		if cmd.DeletionTimestamp == nil {
			cmds = append(cmds, cmd)
		}
	}
	sort.Slice(cmds, func(i, j int) bool {
		a, b := cmds[i], cmds[j]
		if cmp, err := resourceversion.CompareResourceVersion(a.ResourceVersion, b.ResourceVersion); err == nil && cmp != 0 {
			return cmp < 0
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return cmds
}

// parentOf reads what the sync needs to know of a queue's parent: its
// state, whether it exists, and whether the queue is in a parent cycle
// (found by following parents through the cache, each queue at most once).
func (c *Controller) parentOf(q *v1beta1.Queue) parentView {
	v := parentView{name: rules.EffectiveParent(q)}
	if v.name == "" {
		return v
	}
	a, err := rules.WalkUp(q.Name, func(name string) (*v1beta1.Queue, error) {
		if name == q.Name {
			return q, nil
		}
		o, err := c.freshest(name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return o, err
	})
	if err == nil && a.InCycle() {
		v.cycle = a.Cycle()
	}
	p, err := c.freshest(v.name)
	if err != nil {
		// The lister only fails with NotFound.
		v.missing = true
		return v
	}
	v.state = p.Status.State
	return v
}

// sync brings one queue to where its Commands, podgroups and parent say it
// should be, with as few writes as possible:
//
//  1. default spec.parent to root;
//  2. run the pending Commands through the state machine in creation order;
//  3. repair parent/child consistency (closed-by-parent), and report a
//     parent cycle or a missing parent (rules.HierarchyProblemAnnotation);
//  4. a final SyncQueue (Closing becomes Closed once the podgroups are gone);
//  5. write the annotations and the status, each only if it changed;
//  6. only then delete the applied Commands.
//
// A crash anywhere before 6 leaves the Commands in place and the next run
// applies them again, which is harmless: applying them gives the same state.
func (c *Controller) sync(ctx context.Context, name string) error {
	q, err := c.freshest(name)
	if apierrors.IsNotFound(err) {
		// A Command for a queue not (yet) in the cache stays: it is applied
		// once the queue appears, and is visible in 'command list' meanwhile.
		return nil
	}
	if err != nil {
		return err
	}

	if rules.NeedsDefaultParent(q) {
		patch := []byte(`{"spec":{"parent":"` + keys.RootQueue + `"}}`)
		out, err := c.patch(ctx, q.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controllerName})
		if err != nil {
			return fmt.Errorf("default parent of queue %s: %w", q.Name, err)
		}
		c.remember(out)
		q = out
	}
	n := c.podGroups.counts(q.Name)
	hadMark := q.Annotations[keys.ClosedByParent] == "true"
	hadProblem := q.Annotations[rules.HierarchyProblemAnnotation]
	d := decide(q, c.pendingCommands(q.Name), int(n.Total), c.parentOf(q))
	for _, e := range d.events {
		c.recorder.Eventf(q, corev1.EventTypeWarning, e.reason, "%s", e.message)
	}
	c.reportWaiting(ctx, q, d.waiting)
	state, mark, done, applyErr := d.state, d.mark, d.done, d.applyErr

	// Both annotations in one merge patch; nil removes one.
	annotations := map[string]any{}
	if mark != hadMark {
		annotations[keys.ClosedByParent] = nil
		if mark {
			annotations[keys.ClosedByParent] = "true"
		}
	}
	if d.problem != hadProblem {
		annotations[rules.HierarchyProblemAnnotation] = nil
		if d.problem != "" {
			annotations[rules.HierarchyProblemAnnotation] = d.problem
		}
	}
	if len(annotations) > 0 {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		out, err := c.patch(ctx, q.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controllerName})
		if err != nil {
			return fmt.Errorf("annotate queue %s (closed-by-parent=%t, hierarchy problem %q): %w", q.Name, mark, d.problem, err)
		}
		c.remember(out)
	}

	oldState := q.Status.State
	if state != oldState || !n.SamePhases(rules.FromQueueStatus(q.Status)) {
		ac := schedulingac.Queue(q.Name).WithStatus(schedulingac.QueueStatus().
			WithState(state).WithInqueue(n.Inqueue).WithPending(n.Pending).WithRunning(n.Running).
			WithUnknown(n.Unknown).WithCompleted(n.Completed))
		out, err := c.applyStatus(ctx, ac)
		if err != nil {
			return fmt.Errorf("write status of queue %s: %w", q.Name, err)
		}
		c.remember(out)
		// A queue's first state (a new queue, or one whose status was
		// lost) is not a change anyone made: no event, as in Volcano. At
		// the cold start of 10 000 queues those were 10 000 event writes
		// competing with the status writes.
		if state != oldState && oldState != "" {
			c.recorder.Eventf(q, corev1.EventTypeNormal, "StateChanged", "queue is %s (was %s)", state, oldState)
		}
	}
	c.metrics.set(q.Name, n)

	for _, cmd := range done {
		c.forgetWaiting(cmd.UID)
		uid := cmd.UID
		err := c.vc.BusV1alpha1().Commands(cmd.Namespace).Delete(ctx, cmd.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete applied Command %s/%s: %w", cmd.Namespace, cmd.Name, err)
		}
		klog.FromContext(ctx).V(3).Info("applied Command", "command", cmd.Namespace+"/"+cmd.Name, "action", cmd.Action, "state", state)
	}
	if applyErr != nil {
		return applyErr
	}
	c.metrics.syncs.Inc()
	return nil
}

// reportWaiting tells why a Command waits, once per Command and reason:
// a Warning event on the queue and one on the Command (which 'kubectl vc
// command list -o wide' shows), and a log line. The sync that finds it
// waiting is retried with backoff; the report is not repeated on every
// retry, only when what it says changes.
func (c *Controller) reportWaiting(ctx context.Context, q *v1beta1.Queue, w *waitingCommand) {
	if w == nil {
		return
	}
	c.mu.Lock()
	seen := c.waiting[w.cmd.UID] == w.message
	c.waiting[w.cmd.UID] = w.message
	c.mu.Unlock()
	if seen {
		return
	}
	c.recorder.Eventf(q, corev1.EventTypeWarning, w.reason, "%s", w.message)
	c.recorder.Eventf(w.cmd, corev1.EventTypeWarning, w.reason, "%s", w.message)
	klog.FromContext(ctx).Info("Command waits", "command", w.cmd.Namespace+"/"+w.cmd.Name, "action", w.cmd.Action, "reason", w.reason, "message", w.message)
}

// forgetWaiting drops what reportWaiting remembers of a Command that was
// applied or deleted.
func (c *Controller) forgetWaiting(uid types.UID) {
	c.mu.Lock()
	delete(c.waiting, uid)
	c.mu.Unlock()
}

// ensureDefaultQueues creates root and default when they are missing.
func (c *Controller) ensureDefaultQueues(ctx context.Context) error {
	one := int32(1)
	for _, q := range []*v1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: keys.RootQueue}, Spec: v1beta1.QueueSpec{Weight: one}},
		{ObjectMeta: metav1.ObjectMeta{Name: keys.DefaultQueue}, Spec: v1beta1.QueueSpec{Weight: one, Parent: keys.RootQueue}},
	} {
		if _, err := c.queues.Get(q.Name); err == nil {
			continue
		}
		_, err := c.vc.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{FieldManager: controllerName})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create queue %s: %w", q.Name, err)
		}
	}
	return nil
}

// patch patches a queue. Through the REST client, the object returned is
// decoded as the guarded informer decodes it (quantityguard): a queue's
// resource lists may hold quantities a typed client would parse for
// minutes. A fake clientset (the unit tests) is patched as it is.
func (c *Controller) patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*v1beta1.Queue, error) {
	if rc, ok := quantityguard.REST(c.vc); ok {
		return quantityguard.Patch[v1beta1.Queue](ctx, rc, "queues", "", name, pt, data, opts, subresources...)
	}
	return c.vc.SchedulingV1beta1().Queues().Patch(ctx, name, pt, data, opts, subresources...)
}

// applyStatus applies a queue's status with server-side apply as the
// queue controller's field manager, through patch.
func (c *Controller) applyStatus(ctx context.Context, ac *schedulingac.QueueApplyConfiguration) (*v1beta1.Queue, error) {
	opts := metav1.ApplyOptions{FieldManager: keys.QueueControllerManager, Force: true}
	if _, ok := quantityguard.REST(c.vc); !ok {
		return c.vc.SchedulingV1beta1().Queues().ApplyStatus(ctx, ac, opts)
	}
	body, err := json.Marshal(ac)
	if err != nil {
		return nil, err
	}
	return c.patch(ctx, *ac.Name, types.ApplyPatchType, body, opts.ToPatchOptions(), "status")
}
