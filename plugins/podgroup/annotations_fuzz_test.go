package podgroup

import (
	"math"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The annotations read here are written by users on their pods and
// workloads, so they are untrusted input for a controller that runs with
// write access to every namespace. Each fuzzer states what must hold for
// any value: no panic, and nothing the PodGroup CRD schema would refuse
// (which would leave the pod without a group, forever retried).

// FuzzMinMember: the result is never negative (the CRD's minimum is 0), an
// absent or unreadable value means 1, and a readable one is kept as is.
func FuzzMinMember(f *testing.F) {
	for _, s := range []string{"", "0", "1", "3", "-1", "+4", "007", "2147483647", "2147483648",
		"-2147483649", "1e3", "0x10", " 2", "2 ", "3.0", "٣", "99999999999999999999"} {
		f.Add(s, true)
	}
	f.Add("", false)
	f.Fuzz(func(t *testing.T, s string, present bool) {
		ann := map[string]string{"other": s}
		if present {
			ann[keys.GroupMinMember] = s
		}
		got := MinMember(ann)
		if got < 0 {
			t.Fatalf("MinMember(%q) = %d: the CRD refuses a negative minMember", s, got)
		}
		if !present {
			if got != 1 {
				t.Fatalf("no annotation: MinMember = %d, want 1", got)
			}
			return
		}
		v, err := strconv.ParseInt(s, 10, 32)
		switch {
		case err != nil || v < 0:
			if got != 1 {
				t.Fatalf("MinMember(%q) = %d: an unreadable value must mean 1", s, got)
			}
		case int64(got) != v:
			t.Fatalf("MinMember(%q) = %d, want %d", s, got, v)
		}
	})
}

// FuzzNetworkTopology: the mode is always hard or soft, a tier is either a
// valid integer kept as is or reported as a Problem, and every Problem is
// one line (it becomes an event message).
func FuzzNetworkTopology(f *testing.F) {
	f.Add("hard", true, "1", true)
	f.Add("soft", true, "0", true)
	f.Add("", false, "", false)
	f.Add("HARD", true, "", false)
	f.Add("", false, "2", true)
	f.Add("soft\n", true, "x", true)
	f.Add("hard", true, "9223372036854775808", true)
	f.Add("hard", true, "-1", true)
	f.Add("hard", true, " 1", true)
	f.Fuzz(func(t *testing.T, mode string, hasMode bool, tier string, hasTier bool) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		if hasMode {
			pod.Annotations[keys.NetworkTopologyMode] = mode
		}
		if hasTier {
			pod.Annotations[keys.NetworkTopologyHighestTier] = tier
		}
		spec, problems := NetworkTopology(pod)
		if !hasMode && !hasTier {
			if spec != nil || problems != nil {
				t.Fatalf("no annotations: got %+v, %v", spec, problems)
			}
			return
		}
		if spec == nil {
			t.Fatalf("mode=%q tier=%q: no spec", mode, tier)
		}
		if spec.Mode != v1beta1.HardNetworkTopologyMode && spec.Mode != v1beta1.SoftNetworkTopologyMode {
			t.Fatalf("mode=%q: spec mode %q", mode, spec.Mode)
		}
		// The mode is read without regard to case, as Volcano reads it.
		lower := strings.ToLower(mode)
		validMode := !hasMode || lower == "hard" || lower == "soft"
		if !validMode && spec.Mode != v1beta1.HardNetworkTopologyMode {
			t.Fatalf("unknown mode %q must fall back to hard, got %q", mode, spec.Mode)
		}
		if hasMode && validMode && string(spec.Mode) != lower {
			t.Fatalf("mode %q read as %q", mode, spec.Mode)
		}
		want := 0
		if !validMode {
			want++
		}
		if hasTier {
			if v, err := strconv.Atoi(tier); err == nil && v >= 0 {
				if spec.HighestTierAllowed == nil || *spec.HighestTierAllowed != v {
					t.Fatalf("tier %q: got %v, want %d", tier, spec.HighestTierAllowed, v)
				}
			} else {
				want++
				if spec.HighestTierAllowed != nil {
					t.Fatalf("unreadable tier %q kept as %d", tier, *spec.HighestTierAllowed)
				}
			}
		}
		if spec.HighestTierAllowed != nil && *spec.HighestTierAllowed < 0 {
			t.Fatalf("tier %q: highestTierAllowed %d is refused by the CRD (minimum 0)", tier, *spec.HighestTierAllowed)
		}
		if len(problems) != want {
			t.Fatalf("mode=%q tier=%q: %d problems %v, want %d", mode, tier, len(problems), problems, want)
		}
		for _, p := range problems {
			if p.Reason == "" || strings.ContainsAny(p.Message, "\n\r") {
				t.Fatalf("problem %+v is not a one-line event", p)
			}
		}
	})
}

// FuzzBuild runs the whole group construction on a pod whose annotations
// and labels (queue, cooldown, preemptable, revocable zone, disruption
// budget, topology) and owner's min-member are arbitrary. For every input:
// no panic; the cooldown and the other pass-through values reach the group
// verbatim (the scheduler, not us, parses them); minMember is never
// negative and minResources holds count/pods = minMember; and Merge of the
// result into itself, or into an old group, is stable (a second sync writes
// nothing), so no input makes the controller write in a loop.
func FuzzBuild(f *testing.F) {
	f.Add("q1", "30m", "true", "zone-a", "1", "", "3", "hard", "1")
	f.Add("", "", "", "", "", "2", "", "", "")
	f.Add("default", "-5s", "yes", "", "50%", "1", "0", "soft", "x")
	f.Add("q\n", "1h\n", "\x00", "é", "0", "0", "2147483647", "bogus", "0")
	f.Add("queue-a", "forever", "false", "*", "", "", "-3", "", "99")
	f.Fuzz(func(t *testing.T, queue, cooldown, preempt, zone, jdbMin, jdbMax, minMember, mode, tier string) {
		set := func(m map[string]string, k, v string) {
			if v != "" {
				m[k] = v
			}
		}
		ann, labels := map[string]string{}, map[string]string{}
		set(ann, keys.QueueName, queue)
		set(ann, keys.CooldownTime, cooldown)
		set(labels, keys.CooldownTime, cooldown)
		set(ann, keys.Preemptable, preempt)
		set(ann, keys.RevocableZone, zone)
		set(ann, keys.JDBMinAvailable, jdbMin)
		set(ann, keys.JDBMaxUnavailable, jdbMax)
		set(ann, keys.NetworkTopologyMode, mode)
		set(ann, keys.NetworkTopologyHighestTier, tier)
		upper := map[string]string{}
		set(upper, keys.GroupMinMember, minMember)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: types.UID("u1"), Annotations: ann, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: res("cpu", "250m", "memory", "64Mi"),
			}}}},
		}
		pg, problems := Build(pod, upper, true, now)
		if pg.Name != GroupNamePrefix+"u1" {
			t.Fatalf("group name %q", pg.Name)
		}
		if pg.Spec.MinMember < 0 || pg.Spec.MinMember > math.MaxInt32 {
			t.Fatalf("minMember %d", pg.Spec.MinMember)
		}
		if pg.Spec.MinResources == nil {
			t.Fatal("no minResources")
		}
		if n := (*pg.Spec.MinResources)[countPods]; n.Value() != int64(pg.Spec.MinMember) {
			t.Fatalf("count/pods %s for minMember %d", n.String(), pg.Spec.MinMember)
		}
		if cooldown != "" && (pg.Annotations[keys.CooldownTime] != cooldown || pg.Labels[keys.CooldownTime] != cooldown) {
			t.Fatalf("cooldown %q not passed through: annotations %q labels %q", cooldown, pg.Annotations[keys.CooldownTime], pg.Labels[keys.CooldownTime])
		}
		if queue != "" && pg.Spec.Queue != queue {
			t.Fatalf("queue %q became %q", queue, pg.Spec.Queue)
		}
		if jdbMin != "" {
			if pg.Annotations[keys.JDBMinAvailable] != jdbMin {
				t.Fatalf("jdb-min-available %q lost", jdbMin)
			}
			if _, both := pg.Annotations[keys.JDBMaxUnavailable]; both {
				t.Fatal("both disruption budget keys on the group")
			}
		} else if jdbMax != "" && pg.Annotations[keys.JDBMaxUnavailable] != jdbMax {
			t.Fatalf("jdb-max-unavailable %q lost", jdbMax)
		}
		for _, p := range problems {
			if strings.ContainsAny(p.Message, "\n\r") {
				t.Fatalf("problem %+v is not a one-line event", p)
			}
		}
		merged, _ := Merge(pg, pg)
		if _, changed := Merge(merged, pg); changed {
			t.Fatal("Merge of a group into itself is not stable: the controller would write every sync")
		}
		old := &v1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: pg.Name, Namespace: "ns",
			Labels: map[string]string{"keep": "me", keys.CooldownTime: "old"}, Annotations: map[string]string{keys.VolcanoAnnotationPrefix + "stale": "x"}}}
		once, _ := Merge(old, pg)
		if _, changed := Merge(once, pg); changed {
			t.Fatal("second Merge changed the group again")
		}
		if once.Labels["keep"] != "me" {
			t.Fatal("Merge dropped a label it does not manage")
		}
	})
}
