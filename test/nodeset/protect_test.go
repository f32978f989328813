package nodeset

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

func (e *env) evict(pod string) error {
	return e.Kube.PolicyV1().Evictions(e.NS).Evict(e.Ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: e.NS}})
}

func protected(p *corev1.Pod) bool {
	return p != nil && p.Labels[slinkyv1beta1.LabelPodProtect] == "true"
}

// TestBusyPodsProtected runs against kube-controller-manager, whose
// disruption controller computes what the Eviction API enforces. A pod
// whose Slurm node runs a job is labelled pod-protect and selected by the
// NodeSet's PodDisruptionBudget (maxUnavailable 0): evicting it (what
// 'kubectl drain' does) is refused; an idle pod is evicted. Once the job
// ends the pod is evictable too. With workloadDisruptionProtection off the
// budget and the labels go.
func TestBusyPodsProtected(t *testing.T) {
	plane := cptest.StartLevel(t, controlplane.Controllers)
	e := startOn(t, plane, "prot", 3)
	e.RunController()
	ns := e.NewNodeSet("prot", 3)
	e.Eventually("three pods", func() (bool, string) { return len(e.Pods()) == 3, names(e.Pods()) })
	e.MarkAllReady()
	// Jobs are started now: slurmctld, with no slurmd to answer its pings,
	// soon sets idle nodes NOT_RESPONDING, and then allocates them no more.
	var jobs []string
	for _, node := range []string{"prot-1", "prot-2"} {
		job, err := e.Slurm.Allocate(e.Ctx, node, 30)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	e.Eventually("the busy pods protected, the idle one not", func() (bool, string) {
		p := e.Pods()
		return protected(p["prot-1"]) && protected(p["prot-2"]) && !protected(p["prot-0"]), fmt.Sprint(p["prot-1"].Labels)
	})
	pdb, err := e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "prot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(pdb, ns) || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 0 ||
		pdb.Spec.Selector.MatchLabels[slinkyv1beta1.LabelPodProtect] != "true" {
		t.Fatalf("budget: %+v", pdb.Spec)
	}
	// The disruption controller finds the NodeSet's scale through a
	// discovery mapper it refreshes every 30s. cptest installs the CRDs
	// before kube-controller-manager starts, so it knows NodeSets from the
	// first moment (this wait took 40 s before that, 15 s since); should
	// it still fail the budget (refusing everything), it looks again only
	// when the budget or a pod changes: poke it.
	pokes, last := 0, time.Now()
	e.Eventually("the disruption controller counts the protected pod", func() (bool, string) {
		pdb, err := e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "prot", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if time.Since(last) > 5*time.Second {
			pokes, last = pokes+1, time.Now()
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.kubectl-vc.io/poke":"%d"}}}`, pokes)
			_, _ = e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).Patch(e.Ctx, "prot", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
		return pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 2 && pdb.Status.ExpectedPods == 3,
			fmt.Sprintf("%+v", pdb.Status)
	})

	if err := e.evict("prot-1"); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting the busy pod: %v, want refused (429)", err)
	}
	if err := e.evict("prot-0"); err != nil {
		t.Fatalf("evicting the idle pod: %v", err)
	}
	if got := e.SlurmState("prot-1"); got != "ALLOCATED" {
		t.Fatalf("prot-1 in Slurm: %s", got)
	}
	if p := e.Pods()["prot-1"]; p == nil || p.DeletionTimestamp != nil {
		t.Fatal("the busy pod is gone")
	}

	// The job ends: the pod is no longer protected, and can be evicted.
	if err := e.Slurm.EndJob(e.Ctx, jobs[0], "prot-1"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("protection lifted", func() (bool, string) {
		p := e.Pods()["prot-1"]
		return p != nil && !protected(p), fmt.Sprint(p)
	})
	uid := e.Pods()["prot-1"].UID
	e.Eventually("the idle pod evicted", func() (bool, string) {
		err := e.evict("prot-1")
		p := e.Pods()["prot-1"]
		return err == nil || p == nil || p.UID != uid, fmt.Sprint(err)
	})

	// Protection off: the budget and the labels go; prot-2 still runs its job.
	e.PatchNodeSet("prot", `{"spec":{"workloadDisruptionProtection":false}}`)
	e.Eventually("budget deleted, label removed", func() (bool, string) {
		_, err := e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "prot", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && !protected(e.Pods()["prot-2"]), fmt.Sprint(err)
	})
}
