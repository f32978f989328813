package podgroup

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestPodGroupListNamed: 'podgroup list NAME...' prints the named
// podgroups in the order given, and with --watch follows only them (it
// used to fail at once: podgroups read with Get give no resourceVersion to
// watch from).
func TestPodGroupListNamed(t *testing.T) {
	// A namespace of this run's own (-count=2 would meet the last one's).
	ns := namespace(t)
	ctx := context.Background()
	pgs := env.vc.SchedulingV1beta1().PodGroups(ns)
	for _, n := range []string{"a", "b"} {
		if _, err := pgs.Create(ctx, &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPhase := func(name string, phase schedulingv1beta1.PodGroupPhase) {
		t.Helper()
		patch := []byte(`{"status":{"phase":"` + string(phase) + `"}}`)
		// The PodGroup CRD has no status subresource (as upstream).
		if _, err := pgs.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	r := mustVC(t, "pg", "list", "b", "a", "-n", ns, "-o", "name")
	if got := strings.Fields(r.Stdout); strings.Join(got, " ") != "podgroup.scheduling.volcano.sh/b podgroup.scheduling.volcano.sh/a" {
		t.Errorf("pg list b a: %q, want b then a", r.Stdout)
	}

	out := startWatch(t, "pg", "list", "a", "-n", ns, "--watch", "--no-headers")
	if f := out.WaitFor(t, "a"); len(f) < 2 || f[1] != "Pending" {
		t.Fatalf("listed row: %v", f)
	}
	setPhase("b", schedulingv1beta1.PodGroupRunning) // not named: no row
	setPhase("a", schedulingv1beta1.PodGroupInqueue)
	if f := out.WaitFor(t, "a"); len(f) < 2 || f[1] != "Inqueue" {
		t.Fatalf("watched row: %v", f)
	}
	for _, l := range out.Seen {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "b" {
			t.Errorf("the watch of a printed b: %q", l)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pg", "list", "a", "nope", "-n", ns}, `podgroup "nope" not found in namespace "` + ns + `"`},
		{[]string{"pg", "list", "a", "nope", "-n", ns, "--watch"}, `podgroup "nope" not found in namespace "` + ns + `"`},
		{[]string{"pg", "list", "a", "-n", ns, "-l", "x=y"}, "give podgroup names or --selector, not both"},
		{[]string{"nodeset", "list", "a", "-n", ns, "-l", "x=y"}, "give NodeSet names or --selector, not both"},
	} {
		r := runVC(t, c.args...)
		if r.Code == 0 || strings.TrimSpace(r.Stderr) != "error: "+c.want || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a non-zero exit, nothing on stdout and the one line %q",
				c.args, r.Code, r.Stdout, r.Stderr, "error: "+c.want)
		}
	}
}
