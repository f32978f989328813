package leases

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestHeld(t *testing.T) {
	now := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	lease := func(holder string, renewedAgo time.Duration, seconds int32) *coordinationv1.Lease {
		l := &coordinationv1.Lease{}
		if holder != "" {
			l.Spec.HolderIdentity = ptr.To(holder)
		}
		if renewedAgo >= 0 {
			l.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-renewedAgo)}
		}
		if seconds > 0 {
			l.Spec.LeaseDurationSeconds = ptr.To(seconds)
		}
		return l
	}
	for _, tc := range []struct {
		name  string
		l     *coordinationv1.Lease
		grace time.Duration
		want  bool
	}{
		{"nil", nil, Grace, false},
		{"no holder", lease("", time.Second, 15), Grace, false},
		{"never renewed", lease("a", -1, 15), Grace, false},
		{"renewed within its duration", lease("a", 10*time.Second, 15), 0, true},
		{"past its duration", lease("a", 20*time.Second, 15), 0, false},
		{"past its duration, within grace", lease("a", 20*time.Second, 15), Grace, true},
		{"default duration is 15 s", lease("a", 16*time.Second, 0), 0, false},
	} {
		if got := Of(tc.l).Held(now, tc.grace); got != tc.want {
			t.Errorf("%s: Held = %v, want %v", tc.name, got, tc.want)
		}
	}
}
