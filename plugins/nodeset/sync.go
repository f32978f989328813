package nodeset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// Slurm drain reasons written by this controller. The reason is the record
// of *why* a node was drained: the controller only resumes nodes whose
// reason it wrote, never an administrator's drain.
const (
	reasonPrefix   = "kubectl-vc: "
	reasonScaleIn  = reasonPrefix + "scale-in"
	reasonUpdate   = reasonPrefix + "update"
	reasonCordoned = reasonPrefix + "pod cordoned"
)

func reasonNodeCordoned(node string) string {
	return reasonPrefix + "kubernetes node " + node + " cordoned"
}

// sync runs the phases of one NodeSet sync. It returns how soon to look
// again when waiting on Slurm (or for the periodic Slurm status refresh).
func (c *Controller) sync(key string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	// Phase 1: fetch. A NodeSet that is gone takes its expectations along,
	// or the map would grow with every deleted NodeSet.
	cached, err := c.nodeSets.NodeSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.exp.forget(key)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// Never modify the informer's copy.
	ns := cached.DeepCopy()

	// Phase 2: revisions.
	if err := c.adoptOrphanRevisions(ctx, ns); err != nil {
		return 0, err
	}
	revs, err := c.ownedRevisions(ns)
	if err != nil {
		return 0, err
	}
	update, collision, err := c.updateRevision(ctx, ns, revs)
	if err != nil {
		return 0, err
	}

	// Phase 3: the pods, adopting and releasing by selector.
	pods, err := c.claimPods(ctx, ns)
	if err != nil {
		return 0, err
	}

	// Slurm is asked once per sync; its answers feed both actions and status.
	slurmErr := c.cfg.Slurm.Refresh(ctx)
	if slurmErr != nil {
		klog.ErrorS(slurmErr, "cannot read Slurm node states", "nodeset", key)
	}

	requeue := c.cfg.Resync
	var syncErr error
	// Phase 4: expectations gate every action: until the cache shows our
	// last creations and deletions, its pod count is not to be trusted.
	if c.exp.satisfied(key) && ns.DeletionTimestamp == nil {
		var wait bool
		wait, syncErr = c.syncPods(ctx, key, ns, pods, update)
		if wait {
			requeue = c.cfg.DrainPoll
		}
		if syncErr == nil {
			syncErr = c.truncateHistory(ctx, ns, revs, pods, update)
		}
		if syncErr == nil {
			syncErr = c.ensureServiceAndPDB(ctx, ns)
		}
	}
	// Phase 7: status, even when actions were skipped or failed.
	if err := c.syncStatus(ctx, ns, pods, update, collision); err != nil {
		return 0, errors.Join(syncErr, err)
	}
	if syncErr != nil {
		return 0, syncErr
	}
	return requeue, nil
}

// canAdopt re-reads the NodeSet from the API server: the cache may still
// hold a NodeSet that was deleted and re-created under the same name, and
// adopting for the old one would hand its objects to a stranger.
func (c *Controller) canAdopt(ctx context.Context, ns *slinkyv1beta1.NodeSet) error {
	fresh, err := c.vc.SlinkyV1beta1().NodeSets(ns.Namespace).Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if fresh.UID != ns.UID {
		return fmt.Errorf("original NodeSet %s/%s is gone: got UID %s, wanted %s", ns.Namespace, ns.Name, fresh.UID, ns.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("NodeSet %s/%s is being deleted", ns.Namespace, ns.Name)
	}
	return nil
}

// ownerPatch adds (or removes) our controller reference. The uid in the
// patch makes the API server refuse it if the object was re-created.
func ownerPatch(ns *slinkyv1beta1.NodeSet, uid types.UID, remove bool, extraLabels map[string]string) []byte {
	ref := map[string]any{"uid": ns.UID}
	if remove {
		ref["$patch"] = "delete"
	} else {
		r := metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)
		ref = map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": r.UID,
			"controller": true, "blockOwnerDeletion": true}
	}
	meta := map[string]any{"ownerReferences": []any{ref}, "uid": uid}
	if len(extraLabels) > 0 {
		meta["labels"] = extraLabels
	}
	b, _ := json.Marshal(map[string]any{"metadata": meta})
	return b
}

func (c *Controller) adoptOrphanRevisions(ctx context.Context, ns *slinkyv1beta1.NodeSet) error {
	revs, err := c.revisions.ControllerRevisions(ns.Namespace).List(selectorOf(ns))
	if err != nil {
		return err
	}
	var orphans []*appsv1.ControllerRevision
	for _, r := range revs {
		if metav1.GetControllerOf(r) == nil && r.DeletionTimestamp == nil {
			orphans = append(orphans, r)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := c.canAdopt(ctx, ns); err != nil {
		return fmt.Errorf("cannot adopt ControllerRevisions: %w", err)
	}
	for _, r := range orphans {
		var extra map[string]string
		if _, ok := r.Labels[revisionHashLabel]; !ok {
			// Without a hash label the revision could not be found by hash;
			// its name ends in the hash it was created with.
			extra = map[string]string{revisionHashLabel: strings.TrimPrefix(r.Name, ns.Name+"-")}
		}
		_, err := c.kube.AppsV1().ControllerRevisions(r.Namespace).Patch(ctx, r.Name, types.StrategicMergePatchType,
			ownerPatch(ns, r.UID, false, extra), metav1.PatchOptions{FieldManager: FieldManager})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (c *Controller) ownedRevisions(ns *slinkyv1beta1.NodeSet) ([]*appsv1.ControllerRevision, error) {
	all, err := c.revisions.ControllerRevisions(ns.Namespace).List(selectorOf(ns))
	if err != nil {
		return nil, err
	}
	var owned []*appsv1.ControllerRevision
	for _, r := range all {
		if ref := metav1.GetControllerOf(r); ref != nil && ref.UID == ns.UID {
			owned = append(owned, r)
		}
	}
	sortRevisions(owned)
	return owned, nil
}

// updateRevision finds or creates the revision of the current template and
// returns it with the collision count to record in status.
func (c *Controller) updateRevision(ctx context.Context, ns *slinkyv1beta1.NodeSet, revs []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, int32, error) {
	data, err := revisionData(ns)
	if err != nil {
		return nil, 0, err
	}
	var collision int32
	if ns.Status.CollisionCount != nil {
		collision = *ns.Status.CollisionCount
	}
	next := nextRevisionNumber(revs)
	// An equal revision is reused (a rollback to an old template must not
	// make a duplicate); if it is not the newest, it is renumbered so the
	// history shows it as the latest.
	for i := len(revs) - 1; i >= 0; i-- {
		if !sameData(revs[i].Data.Raw, data) {
			continue
		}
		if i == len(revs)-1 {
			return revs[i], collision, nil
		}
		patch := fmt.Appendf(nil, `{"revision":%d}`, next)
		r, err := c.kube.AppsV1().ControllerRevisions(ns.Namespace).Patch(ctx, revs[i].Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		return r, collision, err
	}
	for range 100 {
		cand := newRevision(ns, data, next, collision)
		created, err := c.kube.AppsV1().ControllerRevisions(ns.Namespace).Create(ctx, cand, metav1.CreateOptions{FieldManager: FieldManager})
		if err == nil {
			return created, collision, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, collision, err
		}
		existing, err := c.kube.AppsV1().ControllerRevisions(ns.Namespace).Get(ctx, cand.Name, metav1.GetOptions{})
		if err != nil {
			return nil, collision, err
		}
		if metav1.IsControlledBy(existing, ns) && sameData(existing.Data.Raw, data) {
			// Ours, just not in the cache yet.
			return existing, collision, nil
		}
		// Same name, different content: a hash collision. Count it, so the
		// name changes and status remembers how we got there.
		collision++
	}
	return nil, collision, fmt.Errorf("too many revision name collisions for %s/%s", ns.Namespace, ns.Name)
}

// claimPods returns the NodeSet's pods: those it controls that still match,
// plus orphans it adopts (matching selector and name). Controlled pods that
// no longer match are released.
func (c *Controller) claimPods(ctx context.Context, ns *slinkyv1beta1.NodeSet) ([]*corev1.Pod, error) {
	all, err := c.pods.Pods(ns.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	sel := selectorOf(ns)
	var owned []*corev1.Pod
	var adoptErr error
	adoptChecked := false
	for _, p := range all {
		matches := sel.Matches(labels.Set(p.Labels)) && ordinalOf(ns, p) >= 0
		ref := metav1.GetControllerOf(p)
		if ref != nil {
			if ref.UID != ns.UID {
				continue
			}
			if matches {
				owned = append(owned, p)
				continue
			}
			if ns.DeletionTimestamp != nil || p.DeletionTimestamp != nil {
				continue
			}
			_, err := c.kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType,
				ownerPatch(ns, p.UID, true, nil), metav1.PatchOptions{FieldManager: FieldManager})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			continue
		}
		if !matches || p.DeletionTimestamp != nil || ns.DeletionTimestamp != nil {
			continue
		}
		if !adoptChecked {
			adoptErr, adoptChecked = c.canAdopt(ctx, ns), true
		}
		if adoptErr != nil {
			return nil, fmt.Errorf("cannot adopt pods: %w", adoptErr)
		}
		adopted, err := c.kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType,
			ownerPatch(ns, p.UID, false, nil), metav1.PatchOptions{FieldManager: FieldManager})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		owned = append(owned, adopted)
	}
	sortByOrdinal(ns, owned)
	return owned, nil
}

// podAction is what syncPods does to one pod's Slurm node and annotations.
func (c *Controller) setCordon(ctx context.Context, pod *corev1.Pod, cordon bool) error {
	var patch []byte
	if cordon {
		patch = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, slinkyv1beta1.AnnotationPodCordon)
	} else {
		patch = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null,%q:null}}}`,
			slinkyv1beta1.AnnotationPodCordon, slinkyv1beta1.AnnotationPodDeadline)
	}
	_, err := c.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// drain drains the pod's Slurm node unless it already is; a node Slurm does
// not know (slurmd never registered) needs nothing.
func (c *Controller) drain(ctx context.Context, pod *corev1.Pod, reason string) error {
	if st, ok := c.cfg.Slurm.Node(pod.Name); ok && st.Drain() {
		return nil
	}
	err := c.cfg.Slurm.Drain(ctx, pod.Name, reason)
	if errors.Is(err, slurm.ErrNodeNotFound) {
		return nil
	}
	return err
}

// undrain resumes the pod's Slurm node if this controller drained it.
func (c *Controller) undrain(ctx context.Context, pod *corev1.Pod) error {
	st, ok := c.cfg.Slurm.Node(pod.Name)
	if !ok || !st.Drain() || !strings.HasPrefix(st.Reason, reasonPrefix) {
		return nil
	}
	err := c.cfg.Slurm.Undrain(ctx, pod.Name)
	if errors.Is(err, slurm.ErrNodeNotFound) {
		return nil
	}
	return err
}

// retire moves a leaving pod one step: cordon, drain, and delete once Slurm
// reports the node drained. It returns true while the pod must be waited for.
func (c *Controller) retire(ctx context.Context, key string, pod *corev1.Pod, reason string) (bool, error) {
	if !isCordoned(pod) {
		if err := c.setCordon(ctx, pod, true); err != nil {
			return false, err
		}
	}
	if err := c.drain(ctx, pod, reason); err != nil {
		return false, err
	}
	drained, err := c.cfg.Slurm.IsDrained(ctx, pod.Name)
	if err != nil {
		return false, err
	}
	if !drained {
		c.setDeadline(ctx, pod)
		return true, nil
	}
	c.recorder.Eventf(pod, corev1.EventTypeNormal, "SlurmNodeDrained", "Slurm node %s drained (%s); deleting pod", pod.Name, reason)
	return false, c.deletePodExpected(ctx, key, pod)
}

// setDeadline records when the node's last job will end, so that users (and
// describe) see how long a drain may take.
func (c *Controller) setDeadline(ctx context.Context, pod *corev1.Pod) {
	t, err := c.cfg.Slurm.JobEndDeadline(ctx, pod.Name)
	if err != nil || t.IsZero() {
		return
	}
	v := t.UTC().Format(time.RFC3339)
	if pod.Annotations[slinkyv1beta1.AnnotationPodDeadline] == v {
		return
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, slinkyv1beta1.AnnotationPodDeadline, v)
	_, _ = c.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
}

func (c *Controller) deletePodExpected(ctx context.Context, key string, pod *corev1.Pod) error {
	c.exp.expect(key, 0, 1)
	uid := pod.UID
	err := c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil {
		// No delete event will come for a delete that did not happen.
		c.exp.deletionObserved(key)
		if apierrors.IsNotFound(err) {
			return nil
		}
	}
	return err
}

// syncPods is phases 5 and 6: Kubernetes node cordons, scale in and out,
// updates. It returns true when it waits for Slurm to drain a node.
func (c *Controller) syncPods(ctx context.Context, key string, ns *slinkyv1beta1.NodeSet, pods []*corev1.Pod, update *appsv1.ControllerRevision) (bool, error) {
	replicas := 1
	if ns.Spec.Replicas != nil {
		replicas = int(*ns.Spec.Replicas)
	}
	now := time.Now()
	var errs []error
	wait := false

	var active []*corev1.Pod
	terminating := map[string]bool{}
	for _, p := range pods {
		switch {
		case isTerminating(p):
			terminating[p.Name] = true
		case isFinished(p):
			// A finished slurmd pod is a dead node: replace it.
			terminating[p.Name] = true
			if err := c.deletePodExpected(ctx, key, p); err != nil {
				errs = append(errs, err)
			}
		default:
			active = append(active, p)
		}
	}

	// Kubernetes node cordon ⇒ pod cordon ⇒ Slurm drain, and back.
	nodeCordoned := map[string]bool{}
	for _, p := range active {
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := c.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		st, known := c.cfg.Slurm.Node(p.Name)
		switch {
		case node.Spec.Unschedulable:
			nodeCordoned[p.Name] = true
			if !isCordoned(p) {
				if err := c.setCordon(ctx, p, true); err != nil {
					errs = append(errs, err)
					continue
				}
				c.recorder.Eventf(p, corev1.EventTypeNormal, "Cordoned", "Kubernetes node %s is cordoned", node.Name)
			}
			if err := c.drain(ctx, p, reasonNodeCordoned(node.Name)); err != nil {
				errs = append(errs, err)
			}
		case isCordoned(p) && known && st.Drain() && st.Reason == reasonNodeCordoned(node.Name):
			if err := c.setCordon(ctx, p, false); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := c.undrain(ctx, p); err != nil {
				errs = append(errs, err)
			}
			delete(nodeCordoned, p.Name)
			p.Annotations = withoutCordon(p.Annotations)
			c.recorder.Eventf(p, corev1.EventTypeNormal, "Uncordoned", "Kubernetes node %s is schedulable again", node.Name)
		}
	}

	// Scale in: the pods to remove are, in order, those already cordoned
	// (a drain in progress is never abandoned for another pod), those not
	// ready, those whose Slurm node runs nothing, then the highest ordinals.
	condemned := map[string]bool{}
	if excess := len(active) - replicas; excess > 0 {
		cand := append([]*corev1.Pod(nil), active...)
		sort.SliceStable(cand, func(i, j int) bool {
			a, b := cand[i], cand[j]
			if isCordoned(a) != isCordoned(b) {
				return isCordoned(a)
			}
			if isReady(a) != isReady(b) {
				return !isReady(a)
			}
			ba, bb := c.busy(a), c.busy(b)
			if ba != bb {
				return !ba
			}
			return ordinalOf(ns, a) > ordinalOf(ns, b)
		})
		for _, p := range cand[:excess] {
			condemned[p.Name] = true
		}
		// Each retirement costs a few Slurm commands; run them side by side
		// so that a large scale-in is not paced by one command at a time.
		w, err := parallel(cand[:excess], func(p *corev1.Pod) (bool, error) { return c.retire(ctx, key, p, reasonScaleIn) })
		if err != nil {
			errs = append(errs, err)
		}
		wait = wait || w
	}

	// Cordon annotations set by hand (nodeset cordon) drain the node; a
	// removed annotation resumes a node we drained (also after a scale-in
	// was called off by scaling back up).
	for _, p := range active {
		if condemned[p.Name] || nodeCordoned[p.Name] {
			continue
		}
		st, known := c.cfg.Slurm.Node(p.Name)
		switch {
		case isCordoned(p) && known && (st.Reason == reasonScaleIn ||
			st.Reason == reasonUpdate && p.Labels[slinkyv1beta1.LabelRevisionHash] == update.Name):
			// Scale-in called off, or an update reverted before this pod
			// was replaced: it is wanted as it is.
			if err := c.setCordon(ctx, p, false); err != nil {
				errs = append(errs, err)
			} else if err := c.undrain(ctx, p); err != nil {
				errs = append(errs, err)
			}
		case isCordoned(p):
			if st.Reason == reasonUpdate {
				continue // the update below carries on
			}
			if err := c.drain(ctx, p, reasonCordoned); err != nil {
				errs = append(errs, err)
			}
			if known && st.Busy() {
				c.setDeadline(ctx, p)
			}
		case known && st.Drain():
			if err := c.undrain(ctx, p); err != nil {
				errs = append(errs, err)
			}
		}
	}

	// Scale out: lowest free ordinals, in slow-start batches (1, 2, 4, ...)
	// so that a failing template costs one error, not hundreds.
	if missing := replicas - len(active); missing > 0 {
		// An ordinal whose old pod is still terminating is waited for, not
		// skipped: the node keeps its name (and Slurm node) across restarts.
		// Names held by pods that are not ours (released, or made by
		// someone else) cannot be created: skip their ordinals.
		used := append([]*corev1.Pod(nil), active...)
		if all, err := c.pods.Pods(ns.Namespace).List(labels.Everything()); err == nil {
			for _, p := range all {
				if ref := metav1.GetControllerOf(p); (ref == nil || ref.UID != ns.UID) && ordinalOf(ns, p) >= 0 {
					used = append(used, p)
				}
			}
		}
		var ordinals []int
		for _, o := range lowestFreeOrdinals(ns, used, missing) {
			if terminating[podName(ns, o)] {
				wait = true
				continue
			}
			ordinals = append(ordinals, o)
		}
		if err := c.createPods(ctx, key, ns, ordinals, update.Name); err != nil {
			errs = append(errs, err)
		}
	} else if len(condemned) == 0 {
		w, err := c.rollingUpdate(ctx, key, ns, active, update, replicas, now)
		if err != nil {
			errs = append(errs, err)
		}
		wait = wait || w
	}
	return wait, errors.Join(errs...)
}

func withoutCordon(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if k != slinkyv1beta1.AnnotationPodCordon && k != slinkyv1beta1.AnnotationPodDeadline {
			out[k] = v
		}
	}
	return out
}

func (c *Controller) busy(p *corev1.Pod) bool {
	st, ok := c.cfg.Slurm.Node(p.Name)
	return ok && st.Busy()
}

func (c *Controller) createPods(ctx context.Context, key string, ns *slinkyv1beta1.NodeSet, ordinals []int, revision string) error {
	if len(ordinals) == 0 {
		return nil
	}
	c.exp.expect(key, len(ordinals), 0)
	batch := 1
	for len(ordinals) > 0 {
		n := min(batch, len(ordinals))
		errCh := make(chan error, n)
		for _, o := range ordinals[:n] {
			go func(o int) {
				pod := newPod(ns, o, revision)
				_, err := c.kube.CoreV1().Pods(ns.Namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: FieldManager})
				if err != nil {
					c.exp.creationObserved(key)
					if !apierrors.IsAlreadyExists(err) {
						c.recorder.Eventf(ns, corev1.EventTypeWarning, "FailedCreate", "create pod %s: %v", pod.Name, err)
						errCh <- err
						return
					}
				} else {
					c.recorder.Eventf(ns, corev1.EventTypeNormal, "SuccessfulCreate", "created pod %s", pod.Name)
				}
				errCh <- nil
			}(o)
		}
		var errs []error
		for range n {
			if err := <-errCh; err != nil {
				errs = append(errs, err)
			}
		}
		ordinals = ordinals[n:]
		if len(errs) > 0 {
			// The rest is not attempted: release its expectations.
			for range ordinals {
				c.exp.creationObserved(key)
			}
			return errors.Join(errs...)
		}
		batch *= 2
	}
	return nil
}

// rollingUpdate replaces pods not on the update revision, honouring
// maxUnavailable: unavailable pods first (replacing them costs nothing),
// then the highest ordinals. A replaced pod goes through the same
// cordon-drain-delete as a scale-in, so no job is killed by an update.
func (c *Controller) rollingUpdate(ctx context.Context, key string, ns *slinkyv1beta1.NodeSet, active []*corev1.Pod, update *appsv1.ControllerRevision, replicas int, now time.Time) (bool, error) {
	strategy := ns.Spec.UpdateStrategy.Type
	if strategy != "" && strategy != slinkyv1beta1.RollingUpdateNodeSetStrategyType {
		// OnDelete (and ScheduledUpdate, not implemented): only pods that
		// someone deletes come back on the new revision.
		return false, nil
	}
	maxUnavailable := intstr.FromString("25%")
	if ru := ns.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		maxUnavailable = *ru.MaxUnavailable
	}
	budget, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, replicas, true)
	if err != nil {
		return false, err
	}
	budget = max(budget, 1)

	var outdated []*corev1.Pod
	var inProgress []*corev1.Pod
	for _, p := range active {
		if p.Labels[slinkyv1beta1.LabelRevisionHash] == update.Name {
			if !isAvailable(p, ns.Spec.MinReadySeconds, now) {
				budget--
			}
			continue
		}
		if st, ok := c.cfg.Slurm.Node(p.Name); isCordoned(p) && ok && st.Reason == reasonUpdate {
			inProgress = append(inProgress, p)
			budget--
			continue
		}
		outdated = append(outdated, p)
	}
	wait := false
	var errs []error
	for _, p := range inProgress {
		w, err := c.retire(ctx, key, p, reasonUpdate)
		if err != nil {
			errs = append(errs, err)
		}
		wait = wait || w
	}
	sort.SliceStable(outdated, func(i, j int) bool {
		ai, aj := isAvailable(outdated[i], ns.Spec.MinReadySeconds, now), isAvailable(outdated[j], ns.Spec.MinReadySeconds, now)
		if ai != aj {
			return !ai
		}
		return ordinalOf(ns, outdated[i]) > ordinalOf(ns, outdated[j])
	})
	for _, p := range outdated {
		if isAvailable(p, ns.Spec.MinReadySeconds, now) {
			if budget <= 0 {
				break
			}
			budget--
		}
		w, err := c.retire(ctx, key, p, reasonUpdate)
		if err != nil {
			errs = append(errs, err)
		}
		wait = wait || w
	}
	return wait, errors.Join(errs...)
}

// truncateHistory deletes the oldest revisions beyond revisionHistoryLimit,
// never the update revision nor one that a pod still runs.
func (c *Controller) truncateHistory(ctx context.Context, ns *slinkyv1beta1.NodeSet, revs []*appsv1.ControllerRevision, pods []*corev1.Pod, update *appsv1.ControllerRevision) error {
	live := map[string]bool{update.Name: true}
	for _, p := range pods {
		live[p.Labels[slinkyv1beta1.LabelRevisionHash]] = true
	}
	var limit int32
	if ns.Spec.RevisionHistoryLimit != nil {
		limit = *ns.Spec.RevisionHistoryLimit
	}
	for _, r := range revisionsToPrune(revs, live, limit) {
		err := c.kube.AppsV1().ControllerRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// retireParallelism bounds the Slurm commands and API calls in flight for
// one NodeSet.
const retireParallelism = 8

// parallel runs fn for every pod, at most retireParallelism at once, and
// reports whether any must be waited for, and all errors.
func parallel(pods []*corev1.Pod, fn func(*corev1.Pod) (bool, error)) (bool, error) {
	type result struct {
		wait bool
		err  error
	}
	results := make([]result, len(pods))
	sem := make(chan struct{}, retireParallelism)
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			w, err := fn(p)
			results[i] = result{w, err}
		}()
	}
	wg.Wait()
	wait := false
	var errs []error
	for _, r := range results {
		wait = wait || r.wait
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return wait, errors.Join(errs...)
}
