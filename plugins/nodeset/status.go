package nodeset

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkyac "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/slinky/v1beta1"
)

// computeStatus counts the NodeSet's pods and their Slurm node states.
func (s *nodeSetSync) computeStatus() slinkyv1beta1.NodeSetStatus {
	c, ns, pods, collision := s.c, s.set, s.pods, s.collision
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
		node, ok := c.cfg.Slurm.Node(p.Name)
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
	st.UnavailableReplicas = max(replicas-st.AvailableReplicas, 0)
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
	a.OrdinalToNode, b.OrdinalToNode = nil, nil
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
func (s *nodeSetSync) syncStatus() error {
	ctx, ns, collision := s.ctx, s.set, s.collision
	st := s.computeStatus()
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
	_, err := s.c.vc.SlinkyV1beta1().NodeSets(ns.Namespace).ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func ownerRefAC(ns *slinkyv1beta1.NodeSet) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(slinkyv1beta1.SchemeGroupVersion.String()).
		WithKind(slinkyv1beta1.NodeSetKind.Kind).
		WithName(ns.Name).
		WithUID(ns.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// ensureServiceAndPDB applies the worker headless Service (pod DNS names for
// slurmctld) and the PodDisruptionBudget that keeps evictions (node drains
// by cluster admins) within the NodeSet's maxUnavailable. Both are applied
// when missing or when the NodeSet's spec changed.
func (c *Controller) ensureServiceAndPDB(ctx context.Context, ns *slinkyv1beta1.NodeSet) error {
	changed := ns.Status.ObservedGeneration != ns.Generation
	sel := selectorLabels(ns)
	if _, err := c.services.Services(ns.Namespace).Get(serviceName(ns)); changed || apierrors.IsNotFound(err) {
		svc := corev1ac.Service(serviceName(ns), ns.Namespace).
			WithLabels(sel).
			WithOwnerReferences(ownerRefAC(ns)).
			WithSpec(corev1ac.ServiceSpec().
				WithClusterIP(corev1.ClusterIPNone).
				WithSelector(sel).
				// slurmctld must resolve a node before it is ready, to hear
				// it register.
				WithPublishNotReadyAddresses(true).
				WithPorts(corev1ac.ServicePort().WithName("slurmd").WithPort(6818).WithTargetPort(intstr.FromInt32(6818))))
		if _, err := c.kube.CoreV1().Services(ns.Namespace).Apply(ctx, svc, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return err
		}
	}
	if ns.Spec.WorkloadDisruptionProtection != nil && !*ns.Spec.WorkloadDisruptionProtection {
		return nil
	}
	if _, err := c.pdbs.PodDisruptionBudgets(ns.Namespace).Get(ns.Name); changed || apierrors.IsNotFound(err) {
		maxUnavailable := intstr.FromInt32(1)
		if ru := ns.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
			maxUnavailable = *ru.MaxUnavailable
		}
		pdb := policyv1ac.PodDisruptionBudget(ns.Name, ns.Namespace).
			WithLabels(sel).
			WithOwnerReferences(ownerRefAC(ns)).
			WithSpec(policyv1ac.PodDisruptionBudgetSpec().
				WithSelector(metav1ac.LabelSelector().WithMatchLabels(sel)).
				WithMaxUnavailable(maxUnavailable))
		if _, err := c.kube.PolicyV1().PodDisruptionBudgets(ns.Namespace).Apply(ctx, pdb, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return err
		}
	}
	return nil
}
