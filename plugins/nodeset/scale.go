package nodeset

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// sortPods splits the claimed pods into s.active and s.terminating; a
// finished pod is deleted on the way.
func (s *nodeSetSync) sortPods(ctx context.Context) {
	s.terminating = map[string]bool{}
	for _, p := range s.pods {
		switch {
		case isTerminating(p):
			s.terminating[p.Name] = true
		case isFinished(p):
			// A finished slurmd pod is a dead node: replace it.
			s.terminating[p.Name] = true
			if err := s.deletePodExpected(ctx, p); err != nil {
				s.errs = append(s.errs, err)
			}
		default:
			s.active = append(s.active, p)
		}
	}
}

// burst caps the pods one sync creates, or starts retiring, as Slinky's
// operator caps them (burstReplicas): the rest waits for the next sync.
const burst = 250

// deletionCost is the pod's pod-deletion-cost annotation (0 if absent or
// not an integer).
func deletionCost(p *corev1.Pod) int64 {
	n, err := strconv.ParseInt(p.Annotations[slinkyv1beta1.AnnotationPodDeletionCost], 10, 32)
	if err != nil {
		return 0
	}
	return n
}

// scaleIn retires the pods beyond the desired count (at most burst per
// sync) and records them in s.condemned. The pods to remove are, in order,
// those already cordoned (a drain in progress is never abandoned for
// another pod), those not ready, those of lower pod-deletion-cost, those
// whose Slurm node runs nothing, then the highest ordinals.
func (s *nodeSetSync) scaleIn(ctx context.Context) {
	ns := s.set
	if excess := min(len(s.active)-s.replicas, burst); excess > 0 {
		cand := append([]*corev1.Pod(nil), s.active...)
		sort.SliceStable(cand, func(i, j int) bool {
			a, b := cand[i], cand[j]
			if isCordoned(a) != isCordoned(b) {
				return isCordoned(a)
			}
			if isReady(a) != isReady(b) {
				return !isReady(a)
			}
			if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
				return ca < cb
			}
			ba, bb := s.busy(a), s.busy(b)
			if ba != bb {
				return !ba
			}
			return ordinalOf(ns, a) > ordinalOf(ns, b)
		})
		for _, p := range cand[:excess] {
			s.condemned[p.Name] = true
		}
		// Each retirement costs a few Slurm commands; run them side by side
		// so that a large scale-in is not paced by one command at a time.
		w, err := parallel(cand[:excess], func(p *corev1.Pod) (bool, error) { return s.retire(ctx, p, reasonScaleIn) })
		if err != nil {
			s.errs = append(s.errs, err)
		}
		s.wait = s.wait || w
	}
}

// scaleOut creates the missing pods (at most burst per sync): lowest free
// ordinals, in slow-start batches (1, 2, 4, ...) so that a failing template
// costs one error, not hundreds.
func (s *nodeSetSync) scaleOut(ctx context.Context, missing int) {
	ns := s.set
	// An ordinal whose old pod is still terminating is waited for, not
	// skipped: the node keeps its name (and Slurm node) across restarts.
	// Names held by pods that are not ours (released, or made by
	// someone else) cannot be created: skip their ordinals.
	used := append([]*corev1.Pod(nil), s.active...)
	if all, err := s.c.pods.Pods(ns.Namespace).List(labels.Everything()); err == nil {
		for _, p := range all {
			if ref := metav1.GetControllerOf(p); (ref == nil || ref.UID != ns.UID) && ordinalOf(ns, p) >= 0 {
				used = append(used, p)
			}
		}
	}
	// Only as many free ordinals as this sync may create are looked for:
	// the burst, plus the terminating ones skipped on the way. replicas can
	// be anything up to 2^31-1, and what a sync allocates must not grow
	// with a number an object states.
	var ordinals []int
	for _, o := range lowestFreeOrdinals(ns, used, min(missing, burst+len(s.terminating))) {
		if s.terminating[podName(ns, o)] {
			s.wait = true
			continue
		}
		ordinals = append(ordinals, o)
	}
	if len(ordinals) > burst {
		ordinals = ordinals[:burst]
	}
	if len(ordinals) > 0 && s.sshHold {
		return // ssh.go: SSHConfigReady says why
	}
	if len(ordinals) > 0 {
		s.c.recorder.Eventf(ns, corev1.EventTypeNormal, "ScaleUp", "creating %d pod(s) towards %d replicas", len(ordinals), s.replicas)
	}
	if err := s.c.createPods(ctx, s.key, ns, ordinals, s.updateHash); err != nil {
		s.errs = append(s.errs, err)
	}
}

// createPods creates the pods of the given ordinals from the revision with
// the given hash (createFrom). It is the one writer that takes its inputs
// as parameters, not from a nodeSetSync: its test drives it alone.
func (c *Controller) createPods(ctx context.Context, key string, ns *slinkyv1beta1.NodeSet, ordinals []int, revision string) error {
	base := c.podBaseFor(ctx, ns) // slurmdpod.go
	return c.createFrom(ctx, key, ns, len(ordinals), func(i int) *corev1.Pod {
		pod := newPod(ns, base, ordinals[i], revision)
		c.pin(ctx, ns, pod, ordinals[i])
		return pod
	})
}

// createFrom creates n pods, the i-th built by build(i), in slow-start
// batches (1, 2, 4, ...); the first failing batch stops the rest, so that
// a failing template costs one error, not hundreds.
func (c *Controller) createFrom(ctx context.Context, key string, ns *slinkyv1beta1.NodeSet, n int, build func(i int) *corev1.Pod) error {
	if n <= 0 {
		return nil
	}
	c.exp.expectCreations(key, n)
	batch := 1
	for next := 0; next < n; {
		size := min(batch, n-next)
		errCh := make(chan error, size)
		for i := next; i < next+size; i++ {
			go func(i int) {
				pod := build(i)
				err := c.createClaims(ctx, ns, pod)
				if err == nil {
					_, err = c.podControl.CreatePod(ctx, ns.Namespace, pod)
				}
				if err == nil {
					c.metrics.created.Inc()
				}
				// Successes are not an event each: the sync's ScaleUp event
				// counts them, and hundreds of events on the NodeSet would
				// exhaust its event budget (the recorder's spam filter) and
				// hide the next Warning.
				if err != nil {
					c.exp.CreationObserved(key)
					if !apierrors.IsAlreadyExists(err) {
						c.recorder.Eventf(ns, corev1.EventTypeWarning, "FailedCreate", "create pod %s: %v", pod.Name, err)
						errCh <- err
						return
					}
				}
				errCh <- nil
			}(i)
		}
		var errs []error
		for range size {
			if err := <-errCh; err != nil {
				errs = append(errs, err)
			}
		}
		next += size
		if len(errs) > 0 {
			// The rest is not attempted: release its expectations.
			for range n - next {
				c.exp.CreationObserved(key)
			}
			return errors.Join(errs...)
		}
		batch *= 2
	}
	return nil
}

// deletePodExpected deletes the pod (UID precondition) and records the
// deletion in the NodeSet's expectations.
func (s *nodeSetSync) deletePodExpected(ctx context.Context, pod *corev1.Pod) error {
	c, key := s.c, s.key
	uid := pod.UID
	c.exp.expectDeletion(key, uid)
	err := c.podControl.DeletePod(ctx, pod.Namespace, pod.Name, uid)
	if err == nil {
		c.metrics.deleted.Inc()
	}
	if err != nil {
		// No event will come for a delete that did not happen.
		c.exp.DeletionObserved(key, uid)
		if apierrors.IsNotFound(err) {
			return nil
		}
	}
	return err
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

// retireDaemonPods is StatefulSet mode's counterpart: pods made in
// DaemonSet mode (before scalingMode changed) leave s.active and retire,
// as Slinky's operator deletes the pods of the other mode.
func (s *nodeSetSync) retireDaemonPods(ctx context.Context) {
	var keep, leave []*corev1.Pod
	for _, p := range s.active {
		if isDaemonPod(p) {
			leave = append(leave, p)
			s.condemned[p.Name] = true
			continue
		}
		keep = append(keep, p)
	}
	s.active = keep
	if len(leave) == 0 {
		return
	}
	if len(leave) > burst { // at most burst per sync: the rest at the next
		leave, s.wait = leave[:burst], true
	}
	w, err := parallel(leave, func(p *corev1.Pod) (bool, error) { return s.retire(ctx, p, reasonScaleIn) })
	if err != nil {
		s.errs = append(s.errs, err)
	}
	s.wait = s.wait || w
}
