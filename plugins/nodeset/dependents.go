package nodeset

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// The dependents of a NodeSet: its headless Service (pod DNS names for
// slurmctld) and, while workload disruption protection is on, its
// PodDisruptionBudget. Both are named after the NodeSet and controlled by
// it. An object of that name someone else made is never taken over: the
// NodeSet gets a Warning event and a False condition until it is gone.

func ownerRefAC(ns *slinkyv1beta1.NodeSet) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(slinkyv1beta1.SchemeGroupVersion.String()).
		WithKind(slinkyv1beta1.NodeSetKind.Kind).
		WithName(ns.Name).
		WithUID(ns.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// protectionOn says whether busy pods are protected from eviction
// (workloadDisruptionProtection, default true).
func protectionOn(ns *slinkyv1beta1.NodeSet) bool {
	return ns.Spec.WorkloadDisruptionProtection == nil || *ns.Spec.WorkloadDisruptionProtection
}

// protectedSelector selects the NodeSet's pods whose Slurm node is busy.
func protectedSelector(ns *slinkyv1beta1.NodeSet) map[string]string {
	sel := selectorLabels(ns)
	sel[slinkyv1beta1.LabelPodProtect] = "true"
	return sel
}

// taken reports an object of ours that someone else made: an event and a
// False condition, no error (there is nothing to retry until they act).
func (s *nodeSetSync) taken(kind, name, condition string) {
	msg := fmt.Sprintf("%s %s/%s exists and is not controlled by this NodeSet; it is left alone", kind, s.set.Namespace, name)
	s.setFalseWithWarning(condition, "NameTaken", kind+"NameTaken", msg)
}

// syncService creates the headless Service, or puts it right if it drifted.
func (s *nodeSetSync) syncService(ctx context.Context) error {
	ns, name := s.set, serviceName(s.set)
	sel := selectorLabels(ns)
	cur, err := s.c.services.Services(ns.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Namespace, Labels: owned(sel),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)}},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: sel, PublishNotReadyAddresses: true,
				Ports: []corev1.ServicePort{{Name: "slurmd", Port: 6818, TargetPort: intstr.FromInt32(6818)}}},
		}
		// Create, not apply: a Service made since the cache was read fails
		// it, rather than being taken over; the next sync sees whose it is.
		_, err = s.c.kube.CoreV1().Services(ns.Namespace).Create(ctx, svc, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			// One the cache cannot show, without serve's label (owned.go):
			// read once, and labelled below if it is ours.
			cur, err = s.c.kube.CoreV1().Services(ns.Namespace).Get(ctx, name, metav1.GetOptions{})
		} else if err == nil {
			s.setCondition(conditions.ServiceReady, true, "Owned", "headless Service "+name+" selects the NodeSet's pods")
			return nil
		}
	}
	switch {
	case err != nil:
		return err
	case !metav1.IsControlledBy(cur, ns):
		s.taken("Service", name, conditions.ServiceReady)
		return nil
	case !serviceAsWanted(cur, sel):
		svc := corev1ac.Service(name, ns.Namespace).
			WithLabels(owned(sel)).
			WithOwnerReferences(ownerRefAC(ns)).
			WithSpec(corev1ac.ServiceSpec().
				WithClusterIP(corev1.ClusterIPNone).
				WithSelector(sel).
				// slurmctld must resolve a node before it is ready, to hear
				// it register.
				WithPublishNotReadyAddresses(true).
				WithPorts(corev1ac.ServicePort().WithName("slurmd").WithPort(6818).WithTargetPort(intstr.FromInt32(6818))))
		if _, err := s.c.kube.CoreV1().Services(ns.Namespace).Apply(ctx, svc, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return err
		}
	}
	s.setCondition(conditions.ServiceReady, true, "Owned", "headless Service "+name+" selects the NodeSet's pods")
	return nil
}

func serviceAsWanted(svc *corev1.Service, sel map[string]string) bool {
	return labelledOwn(svc.Labels) && svc.Spec.ClusterIP == corev1.ClusterIPNone && maps.Equal(svc.Spec.Selector, sel) &&
		svc.Spec.PublishNotReadyAddresses && len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].Port == 6818
}

// syncDisruptionBudget keeps the PodDisruptionBudget that refuses the
// eviction of pods whose Slurm node runs jobs (those labelled pod-protect,
// see protect.go; maxUnavailable 0), as Slinky's does; idle pods are not
// selected, so a node drain evicts them freely. With protection off the
// NodeSet's budget is deleted.
func (s *nodeSetSync) syncDisruptionBudget(ctx context.Context) error {
	ns := s.set
	name := ns.Name
	cur, err := s.c.pdbs.PodDisruptionBudgets(ns.Namespace).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if !protectionOn(ns) {
		if err == nil && metav1.IsControlledBy(cur, ns) {
			uid := cur.UID
			err := s.c.kube.PolicyV1().PodDisruptionBudgets(ns.Namespace).Delete(ctx, name,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			s.c.recorder.Eventf(ns, corev1.EventTypeNormal, "DisruptionBudgetDeleted",
				"workloadDisruptionProtection is off: PodDisruptionBudget %s deleted", name)
		}
		s.setCondition(conditions.DisruptionBudgetReady, true, "ProtectionOff", "workloadDisruptionProtection is off: no PodDisruptionBudget")
		return nil
	}
	sel := protectedSelector(ns)
	const ready = "PodDisruptionBudget %s refuses evicting pods whose Slurm node runs jobs"
	if apierrors.IsNotFound(err) {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Namespace, Labels: owned(selectorLabels(ns)),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)}},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
				MaxUnavailable: ptr.To(intstr.FromInt32(0))},
		}
		_, err = s.c.kube.PolicyV1().PodDisruptionBudgets(ns.Namespace).Create(ctx, pdb, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			// One the cache cannot show, without serve's label (owned.go):
			// read once, and labelled below if it is ours.
			cur, err = s.c.kube.PolicyV1().PodDisruptionBudgets(ns.Namespace).Get(ctx, name, metav1.GetOptions{})
		} else if err == nil {
			s.setCondition(conditions.DisruptionBudgetReady, true, "Owned", fmt.Sprintf(ready, name))
			return nil
		}
	}
	switch {
	case err != nil:
		return err
	case !metav1.IsControlledBy(cur, ns):
		s.taken("PodDisruptionBudget", name, conditions.DisruptionBudgetReady)
		return nil
	case !pdbAsWanted(cur, sel):
		// A budget of an earlier version (all pods, the update's
		// maxUnavailable) is replaced by this one.
		pdb := policyv1ac.PodDisruptionBudget(name, ns.Namespace).
			WithLabels(owned(selectorLabels(ns))).
			WithOwnerReferences(ownerRefAC(ns)).
			WithSpec(policyv1ac.PodDisruptionBudgetSpec().
				WithSelector(metav1ac.LabelSelector().WithMatchLabels(sel)).
				WithMaxUnavailable(intstr.FromInt32(0)))
		if _, err := s.c.kube.PolicyV1().PodDisruptionBudgets(ns.Namespace).Apply(ctx, pdb, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return err
		}
	}
	s.setCondition(conditions.DisruptionBudgetReady, true, "Owned", fmt.Sprintf(ready, name))
	return nil
}

func pdbAsWanted(pdb *policyv1.PodDisruptionBudget, sel map[string]string) bool {
	return labelledOwn(pdb.Labels) && pdb.Spec.Selector != nil && maps.Equal(pdb.Spec.Selector.MatchLabels, sel) && len(pdb.Spec.Selector.MatchExpressions) == 0 &&
		pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable != nil && *pdb.Spec.MaxUnavailable == intstr.FromInt32(0)
}
