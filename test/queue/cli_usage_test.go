package queue

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setAllocated plays Volcano's scheduler: it writes the queue's
// status.allocated through the status subresource.
func setAllocated(t *testing.T, name string, allocated corev1.ResourceList) {
	t.Helper()
	q := getQueue(t, env.vc, name)
	q.Status.Allocated = allocated
	if _, err := env.vc.SchedulingV1beta1().Queues().UpdateStatus(context.Background(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status of %s: %v", name, err)
	}
}

// describeUsage returns the rows of the Usage table of 'queue describe',
// each as its fields.
func describeUsage(t *testing.T, out string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Usage:"):
			in = true
		case in && strings.HasPrefix(l, "  "):
			rows = append(rows, strings.Fields(l))
		case in:
			return rows
		}
	}
	return rows
}

func TestQueueDescribeUsage(t *testing.T) {
	fresh(t)
	mustVC(t, "queue", "create", "e2e-usage", "--deserved", "cpu=16,memory=32Gi", "--capability", "cpu=20,memory=64Gi")
	r := mustVC(t, "queue", "describe", "e2e-usage")
	rows := describeUsage(t, r.Stdout)
	want := [][]string{
		{"Resource", "Allocated", "Deserved", "Capability", "%", "Deserved", "%", "Capability"},
		{"cpu", "0", "16", "20", "0%", "0%"},
		{"memory", "0", "32Gi", "64Gi", "0%", "0%"},
	}
	if !equalRows(rows, want) {
		t.Errorf("usage before allocation = %q, want %q\n%s", rows, want, r.Stdout)
	}

	setAllocated(t, "e2e-usage", corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("40Gi"), corev1.ResourcePods: resource.MustParse("3"),
	})
	r = mustVC(t, "queue", "describe", "e2e-usage")
	rows = describeUsage(t, r.Stdout)
	want = [][]string{
		want[0],
		{"cpu", "12", "16", "20", "75%", "60%"},
		{"memory", "40Gi", "32Gi", "64Gi", "125%", "62%"},
		{"pods", "3", "-", "-", "-", "-"},
	}
	if !equalRows(rows, want) {
		t.Errorf("usage after allocation = %q, want %q\n%s", rows, want, r.Stdout)
	}

	r = mustVC(t, "queue", "list", "e2e-usage", "-o", "wide")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want header and one row:\n%s", r.Stdout)
	}
	h, f := strings.Fields(lines[0]), strings.Fields(lines[1])
	if len(h) != 14 || h[13] != "USAGE" || len(f) != 14 || f[13] != "cpu=12/16(75%),memory=40Gi/32Gi(125%),pods=3/-" {
		t.Errorf("wide usage column:\n%s", r.Stdout)
	}
	r = mustVC(t, "queue", "list", "e2e-usage")
	if strings.Contains(r.Stdout, "USAGE") {
		t.Errorf("usage shown without -o wide:\n%s", r.Stdout)
	}
}

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], " ") != strings.Join(b[i], " ") {
			return false
		}
	}
	return true
}
