package nodeset

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestSlinkyChartNodeSet: the NodeSet Slinky's slurm chart makes with its
// defaults (testdata/slinky-chart-nodeset.yaml, rendered by hand from the
// chart) is acted on whole: SpecSupported=True, listing nothing; its pod
// is named as the operator names it (pod slurm-worker-slinky-0, host and
// Slurm node slinky-0), carries the logfile sidecar, and its Slurm node is
// read under that name.
func TestSlinkyChartNodeSet(t *testing.T) {
	ns := readNodeSet(t, "testdata/slinky-chart-nodeset.yaml")
	e := start(t, "slinky", 1)
	e.create(ns)
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	e.MarkAllReady()
	pod := e.Pods()["slurm-worker-slinky-0"]
	if pod == nil || pod.Spec.Hostname != "slinky-0" || pod.Labels[slinkyv1beta1.LabelPodHostname] != "slinky-0" ||
		pod.Labels["helm.sh/chart"] != "slurm-1.3.0-rc1" || len(pod.Spec.InitContainers) != 1 ||
		pod.Spec.InitContainers[0].Image != "docker.io/library/alpine:latest" || pod.Spec.NodeSelector[corev1.LabelOSStable] != "linux" {
		t.Fatalf("pod: %+v", pod)
	}
	e.Eventually("spec supported, Slurm node read by its hostname", func() (bool, string) {
		c := e.condition("slurm-worker-slinky", "SpecSupported")
		st := e.Get("slurm-worker-slinky").Status
		return c != nil && c.Status == metav1.ConditionTrue && st.SlurmIdle == 1 && st.ReadyReplicas == 1, fmt.Sprintf("%v %+v", c, st)
	})
}
