package hostile

// The row of issue 58's item 7: with --slurm-namespaces, a NodeSet written
// in a namespace serve does not serve makes serve write nothing but its
// status there (install then grants those writes only in the named
// namespaces: test/install TestServedNamespacesOnly).

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

func init() { rows = append(rows, rowNotServed) }

// servedElsewhere is the namespace the row's serve serves: not the row's.
const servedElsewhere = "hostile-served-elsewhere"

var rowNotServed = row{
	name: "a NodeSet in a namespace serve does not serve",
	// A reachable Slurm (the stand-in), served only elsewhere.
	flags: func(t *testing.T, w *world) []string {
		return append(newStandIn(t, nil, nil).flags(t), "--slurm-namespaces="+servedElsewhere)
	},
	apply: func(t *testing.T, w *world) {
		// Everything a NodeSet makes serve write: pods, a claim each,
		// the headless Service, the budget, the ssh ConfigMap, revisions.
		nodeSet(t, w, "not-served", 3, func(s *slinkyv1beta1.NodeSet) {
			s.Spec.SSH = &slinkyv1beta1.NodeSetSSH{Enabled: true,
				SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}, Key: "sssd.conf"}}
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			}}
		})
	},
	handled: func(t *testing.T, w *world) {
		ctx := context.Background()
		var cond *metav1.Condition
		eventually(t, "the NodeSet synced (a SlurmReachable condition)", func() (bool, error) {
			ns, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).Get(ctx, "not-served", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			cond = meta.FindStatusCondition(ns.Status.Conditions, "SlurmReachable")
			return cond != nil, nil
		})
		if cond.Status != metav1.ConditionFalse || cond.Reason != "NamespaceNotServed" || !strings.Contains(cond.Message, servedElsewhere) {
			t.Errorf("SlurmReachable %s, reason %s: %q; want False, NamespaceNotServed, naming %s", cond.Status, cond.Reason, cond.Message, servedElsewhere)
		}
		// A few resyncs more, then count what serve made for it.
		time.Sleep(3 * time.Second)
		var made []string
		sel := metav1.ListOptions{LabelSelector: setLabel + "=not-served"}
		pods, err := env.kube.CoreV1().Pods(w.ns).List(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			made = append(made, "pod/"+p.Name)
		}
		get := func(kind string, err error) {
			if err == nil {
				made = append(made, kind)
			}
		}
		_, err = env.kube.CoreV1().Services(w.ns).Get(ctx, "not-served", metav1.GetOptions{})
		get("service", err)
		_, err = env.kube.PolicyV1().PodDisruptionBudgets(w.ns).Get(ctx, "not-served", metav1.GetOptions{})
		get("poddisruptionbudget", err)
		_, err = env.kube.CoreV1().ConfigMaps(w.ns).Get(ctx, "not-served"+slinkyv1beta1.SSHConfigSuffix, metav1.GetOptions{})
		get("configmap", err)
		for i := range 3 {
			_, err = env.kube.CoreV1().PersistentVolumeClaims(w.ns).Get(ctx, fmt.Sprintf("data-not-served-%d", i), metav1.GetOptions{})
			get("claim", err)
		}
		revs, err := env.kube.AppsV1().ControllerRevisions(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range revs.Items {
			if metav1.GetControllerOf(&r) != nil && metav1.GetControllerOf(&r).Name == "not-served" {
				made = append(made, "controllerrevision/"+r.Name)
			}
		}
		if len(made) > 0 {
			t.Errorf("serve made %s for a NodeSet of %s, a namespace its --slurm-namespaces (%s) does not name", strings.Join(made, ", "), w.ns, servedElsewhere)
		}
	},
}
