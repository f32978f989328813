package nodeset

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkyac "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/slinky/v1beta1"
)

// computeStatus counts the NodeSet's pods and their Slurm node states.
func (s *nodeSetSync) computeStatus(ctx context.Context) slinkyv1beta1.NodeSetStatus {
	ns, pods, collision := s.set, s.pods, s.collision
	replicas := int32(1)
	if ns.Spec.Replicas != nil {
		replicas = *ns.Spec.Replicas
	}
	now := time.Now()
	st := slinkyv1beta1.NodeSetStatus{
		ObservedGeneration: ns.Generation,
		Desired:            replicas,
		NodeSetHash:        s.updateHash,
		CollisionCount:     &collision,
		Selector:           selectorOf(ns).String(),
	}
	if daemonSetMode(ns) {
		// As Slinky's operator counts it: the nodes that should run a pod.
		if n := s.daemonDesired(ctx); n >= 0 {
			st.Desired = int32(n)
		} else {
			st.Desired = ns.Status.Desired
		}
	}
	for _, p := range pods {
		if isTerminating(p) {
			continue
		}
		st.Replicas++
		if isReady(p) {
			st.ReadyReplicas++
		}
		if isAvailable(p, ns.Spec.MinReadySeconds, now) {
			st.AvailableReplicas++
		}
		if s.upToDate(p) {
			st.UpdatedReplicas++
		}
		if s.slurmErr != nil {
			continue
		}
		node, ok := s.slurm.Node(slinkyv1beta1.SlurmNodeName(p))
		if !ok {
			continue
		}
		switch {
		case node.Down():
			st.SlurmDown++
		case node.Busy():
			st.SlurmAllocated++
		case node.Idle():
			st.SlurmIdle++
		}
		if node.Drain() {
			st.SlurmDrain++
		}
	}
	// As Slinky's operator counts it: pods that exist and are not available.
	st.UnavailableReplicas = max(st.Replicas-st.AvailableReplicas, 0)
	st.OrdinalToNode = s.ordinalToNode(ctx)
	if s.slurmErr != nil {
		// Unknown: the counts stay as last read.
		st.SlurmIdle, st.SlurmAllocated, st.SlurmDown, st.SlurmDrain =
			ns.Status.SlurmIdle, ns.Status.SlurmAllocated, ns.Status.SlurmDown, ns.Status.SlurmDrain
	}
	st.Conditions = s.mergedConditions()
	return st
}

func sameStatus(a, b slinkyv1beta1.NodeSetStatus) bool {
	ca, cb := int32(0), int32(0)
	if a.CollisionCount != nil {
		ca = *a.CollisionCount
	}
	if b.CollisionCount != nil {
		cb = *b.CollisionCount
	}
	a.CollisionCount, b.CollisionCount = nil, nil
	a.Conditions, b.Conditions = ownedOnly(a.Conditions), ownedOnly(b.Conditions)
	return ca == cb && equality.Semantic.DeepEqual(a, b)
}

// ownedOnly are the conditions of our types, in our order.
func ownedOnly(conds []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, typ := range ownedConditions {
		if c := meta.FindStatusCondition(conds, typ); c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// syncStatus is the last phase of a sync, run even when actions were
// skipped or failed: it applies the status with server-side apply, as its
// own field manager, and only when it changed.
func (s *nodeSetSync) syncStatus(ctx context.Context) error {
	st := s.computeStatus(ctx)
	return s.applyStatus(ctx, st)
}

// applyStatus writes st (its CollisionCount set) unless the NodeSet
// already has it.
func (s *nodeSetSync) applyStatus(ctx context.Context, st slinkyv1beta1.NodeSetStatus) error {
	ns, collision := s.set, *st.CollisionCount
	s.c.metrics.set(ns.Namespace, ns.Name, st)
	if sameStatus(st, ns.Status) {
		return nil
	}
	status := slinkyac.NodeSetStatus()
	for _, c := range st.Conditions {
		status.WithConditions(metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).
			WithMessage(c.Message).WithObservedGeneration(c.ObservedGeneration).WithLastTransitionTime(c.LastTransitionTime))
	}
	ac := slinkyac.NodeSet(ns.Name, ns.Namespace).WithStatus(status.
		WithObservedGeneration(st.ObservedGeneration).
		WithDesired(st.Desired).
		WithReplicas(st.Replicas).
		WithReadyReplicas(st.ReadyReplicas).
		WithAvailableReplicas(st.AvailableReplicas).
		WithUnavailableReplicas(st.UnavailableReplicas).
		WithUpdatedReplicas(st.UpdatedReplicas).
		WithSlurmIdle(st.SlurmIdle).
		WithSlurmAllocated(st.SlurmAllocated).
		WithSlurmDown(st.SlurmDown).
		WithSlurmDrain(st.SlurmDrain).
		WithNodeSetHash(st.NodeSetHash).
		WithCollisionCount(collision).
		WithSelector(st.Selector))
	if len(st.OrdinalToNode) > 0 {
		ac.Status.WithOrdinalToNode(st.OrdinalToNode)
	}
	_, err := s.c.vc.SlinkyV1beta1().NodeSets(ns.Namespace).ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// daemonDesired counts the nodes a DaemonSet-mode NodeSet should run a pod
// on, for status.desired; -1 when the nodes cannot be listed.
func (s *nodeSetSync) daemonDesired(ctx context.Context) int {
	nodes, err := s.c.nodes.List(labels.Everything())
	if err != nil {
		return -1
	}
	template := templatePod(s.set, s.c.podBaseFor(ctx, s.set))
	logger := klog.FromContext(ctx)
	n := 0
	for _, node := range nodes {
		if run, _ := nodeWantsPod(logger, template, node); run {
			n++
		}
	}
	return n
}
