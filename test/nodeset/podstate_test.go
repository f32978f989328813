package nodeset

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
)

// slurmConditions lists a pod's SlurmNodeState* conditions that are True,
// as "Type(message)", sorted.
func slurmConditions(p *corev1.Pod) string {
	var out []string
	for _, c := range p.Status.Conditions {
		if strings.HasPrefix(string(c.Type), "SlurmNodeState") && c.Status == corev1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s(%s)", c.Type, c.Message))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// TestPodSlurmConditions: each pod carries its Slurm node's state as pod
// conditions, as Slinky's operator writes them (SlurmNodeState<Base> and
// one per flag, the reason as message), kept in step with Slurm; the
// kubelet's Ready condition is left alone.
func TestPodSlurmConditions(t *testing.T) {
	e := start(t, "pst", 1)
	e.NewNodeSet("pst", 1)
	e.Eventually("ready pod", func() (bool, string) { n := e.MarkAllReady(); return n == 1, fmt.Sprint(n) })
	state := func(want string) {
		t.Helper()
		e.Eventually("pod conditions "+want, func() (bool, string) {
			p := e.Pods()["pst-0"]
			return p != nil && slurmConditions(p) == want && isReadyPod(p), slurmConditions(p)
		})
	}
	state("SlurmNodeStateIdle()")
	job, err := e.Slurm.Allocate(e.Ctx, "pst-0", 30)
	if err != nil {
		t.Fatal(err)
	}
	state("SlurmNodeStateAllocated()")
	if _, err := e.Slurm.Scontrol(e.Ctx, "update", "nodename=pst-0", "state=drain", "reason=bad dimm"); err != nil {
		t.Fatal(err)
	}
	// A busy drained node: allocated and draining, the reason in both.
	state("SlurmNodeStateAllocated(bad dimm),SlurmNodeStateDrain(bad dimm)")
	if err := e.Slurm.EndJob(e.Ctx, job, "pst-0"); err != nil {
		t.Fatal(err)
	}
	// The job over: with a real slurmd (REST suites) the node is IDLE and
	// drained; Debian 12's slurmctld without slurmd ends it by setting the
	// node DOWN (slurmtest.Cluster.EndJob).
	ended := "SlurmNodeStateDown(bad dimm),SlurmNodeStateDrain(bad dimm)"
	if _, rest := e.Slurm.(*nodesets.RESTBackend); rest {
		ended = "SlurmNodeStateDrain(bad dimm),SlurmNodeStateIdle(bad dimm)"
	}
	state(ended)
	// Ready stays the kubelet's: set it false, the Slurm conditions stay.
	patch := `{"status":{"conditions":[{"type":"Ready","status":"False"}]}}`
	if _, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, "pst-0", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if p := e.Pods()["pst-0"]; isReadyPod(p) || slurmConditions(p) != ended {
		t.Fatalf("conditions: %+v", p.Status.Conditions)
	}
}

func isReadyPod(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
