package queue

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueUsage(t *testing.T) {
	q := &schedulingv1beta1.Queue{
		Spec: schedulingv1beta1.QueueSpec{
			Deserved:   corev1.ResourceList{"cpu": resource.MustParse("16"), "memory": resource.MustParse("32Gi")},
			Capability: corev1.ResourceList{"cpu": resource.MustParse("20"), "nvidia.com/gpu": resource.MustParse("2")},
		},
		Status: schedulingv1beta1.QueueStatus{Allocated: corev1.ResourceList{"cpu": resource.MustParse("12"), "pods": resource.MustParse("3")}},
	}
	rows := queueUsage(q)
	var got []string
	for _, r := range rows {
		got = append(got, usageCell(r))
	}
	want := []string{"cpu 12/16 (75%)", "memory 0/32Gi (0%)", "nvidia.com/gpu 0/-", "pods 3/-"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %q, want %q", i, got[i], want[i])
		}
	}
	if p := percent(rows[0].Allocated, rows[0].Capability); p != "60%" {
		t.Errorf("cpu of capability = %s, want 60%%", p)
	}
}

func TestPercent(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	for _, c := range []struct {
		alloc, of *resource.Quantity
		want      string
	}{
		{q("500m"), q("2"), "25%"},
		{q("3"), q("2"), "150%"},
		{q("1Gi"), q("1024Mi"), "100%"},
		{nil, q("2"), "0%"},
		{q("1"), nil, "-"},
		{q("1"), q("0"), "-"},
		// Rounded down, as kubectl top does, and exactly: 290m/1 is 28.999…
		// in floating point.
		{q("40Gi"), q("64Gi"), "62%"},
		{q("999m"), q("1"), "99%"},
		{q("290m"), q("1"), "29%"},
		{q("1"), q("3"), "33%"},
		{q("2"), q("3"), "66%"},
		// Beyond int64 the percentage is capped.
		{q("1Ei"), q("1m"), "9223372036854775807%"},
	} {
		if got := percent(c.alloc, c.of); got != c.want {
			t.Errorf("percent(%v, %v) = %s, want %s", c.alloc, c.of, got, c.want)
		}
	}
}

func TestUsageCompact(t *testing.T) {
	q := &schedulingv1beta1.Queue{
		Spec: schedulingv1beta1.QueueSpec{
			Deserved:   corev1.ResourceList{"cpu": resource.MustParse("16")},
			Capability: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")},
		},
		Status: schedulingv1beta1.QueueStatus{Allocated: corev1.ResourceList{"cpu": resource.MustParse("12"), "pods": resource.MustParse("3")}},
	}
	if got := usageCompact(queueUsage(q)); got != "cpu=12/16(75%),pods=3/-" {
		t.Errorf("usageCompact = %q", got)
	}
	if got := usageCompact(queueUsage(&schedulingv1beta1.Queue{})); got != "<none>" {
		t.Errorf("usageCompact of empty queue = %q", got)
	}
}
