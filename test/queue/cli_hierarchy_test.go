package queue

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestQueueCreateUpdateHierarchy: 'queue create' and 'queue update' check
// the rules an admission policy cannot fully see (it looks at one other
// queue at a time) before writing: a cycle through any number of queues,
// the sum of the children's guarantees and deserved shares, the capability
// of ancestors beyond the parent and of queues below the children. Each
// refusal is one line on stderr, a non-zero exit, and nothing written. No
// admission policy is installed here: these are the CLI's own checks.
func TestQueueCreateUpdateHierarchy(t *testing.T) {
	fresh(t)
	ctx := context.Background()
	mustVC(t, "queue", "create", "hc-team", "--capability", "cpu=8", "--deserved", "cpu=6", "--guarantee", "cpu=4")
	mustVC(t, "queue", "create", "hc-t1", "--parent", "hc-team", "--deserved", "cpu=3", "--guarantee", "cpu=3")
	mustVC(t, "queue", "create", "hc-mid", "--parent", "hc-team")
	mustVC(t, "queue", "create", "hc-deep", "--parent", "hc-mid", "--capability", "cpu=7")
	mustVC(t, "queue", "create", "hc-a")
	mustVC(t, "queue", "create", "hc-b", "--parent", "hc-a")
	mustVC(t, "queue", "create", "hc-c", "--parent", "hc-b")
	// A queue made elsewhere, waiting for a parent that does not exist yet.
	if _, err := env.vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "hc-waiting"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "hc-later"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"create: deserved above capability", []string{"queue", "create", "hc-x", "--capability", "cpu=2", "--deserved", "cpu=4"},
			"--deserved cpu=4 exceeds --capability cpu=2: capability must be at least the deserved"},
		{"create: guarantee above capability", []string{"queue", "create", "hc-x", "--capability", "cpu=2", "--guarantee", "cpu=4"},
			"--guarantee cpu=4 exceeds --capability cpu=2"},
		{"create: children's guarantees above the parent's", []string{"queue", "create", "hc-x", "--parent", "hc-team", "--deserved", "cpu=2", "--guarantee", "cpu=2"},
			`--guarantee cpu=2 would make the guarantees of the children of queue "hc-team" add up to cpu=5 (hc-t1, hc-x), more than its guarantee cpu=4`},
		{"create: children's deserved shares above the parent's", []string{"queue", "create", "hc-x", "--parent", "hc-team", "--deserved", "cpu=4"},
			`would make the deserved shares of the children of queue "hc-team" add up to cpu=7`},
		{"create: capability above the parent's", []string{"queue", "create", "hc-x", "--parent", "hc-team", "--capability", "cpu=9"},
			`--capability cpu=9 exceeds the capability cpu=8 of queue "hc-team" above it`},
		{"create: capability above a grandparent's", []string{"queue", "create", "hc-x", "--parent", "hc-mid", "--capability", "cpu=16"},
			`--capability cpu=16 exceeds the capability cpu=8 of queue "hc-team" above it`},
		{"create: a cycle through a queue made elsewhere", []string{"queue", "create", "hc-later", "--parent", "hc-waiting"},
			`invalid --parent "hc-waiting": it is below "hc-later", which would make a cycle (hc-later -> hc-waiting -> hc-later)`},
		{"update: a cycle of three", []string{"queue", "update", "hc-a", "--parent", "hc-c"},
			`invalid --parent "hc-c": it is below "hc-a", which would make a cycle (hc-a -> hc-c -> hc-b -> hc-a)`},
		{"update: guarantee below the children's", []string{"queue", "update", "hc-team", "--guarantee", "cpu=2"},
			"--guarantee cpu=2 is less than the guarantees of its children, cpu=3 in all (hc-t1)"},
		{"update: capability below a queue two levels under it", []string{"queue", "update", "hc-team", "--capability", "cpu=6"},
			`--capability cpu=6 is below the capability cpu=7 of queue "hc-deep" under it`},
		{"update: deserved above own capability", []string{"queue", "update", "hc-team", "--deserved", "cpu=9"},
			"--deserved cpu=9 exceeds --capability cpu=8"},
		{"update: moving under a parent it would overflow", []string{"queue", "update", "hc-a", "--parent", "hc-team", "--capability", "cpu=20"},
			`--capability cpu=20 exceeds the capability cpu=8 of queue "hc-team" above it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t)
			r := runVC(t, tc.args...)
			after := snapshot(t)
			if r.Code == 0 {
				t.Fatalf("%v succeeded:\n%s", tc.args, r)
			}
			lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], tc.want) {
				t.Errorf("want one 'error:' line containing %q:\n%s", tc.want, r)
			}
			if strings.TrimSpace(r.Stdout) != "" {
				t.Errorf("stdout not empty:\n%s", r.Stdout)
			}
			if before != after {
				t.Errorf("server changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}

	// Within the bounds, the same commands work.
	mustVC(t, "queue", "create", "hc-t2", "--parent", "hc-team", "--deserved", "cpu=1", "--guarantee", "cpu=1", "--capability", "cpu=8")
	mustVC(t, "queue", "update", "hc-team", "--guarantee", "cpu=5")
	mustVC(t, "queue", "update", "hc-c", "--parent", "hc-a")
	mustVC(t, "queue", "create", "hc-later", "--parent", "hc-a")
	if q := getQueue(t, env.vc, "hc-t2"); q.Spec.Parent != "hc-team" || q.Spec.Capability.Cpu().String() != "8" {
		t.Errorf("hc-t2: %+v", q.Spec)
	}
	if q := getQueue(t, env.vc, "hc-c"); q.Spec.Parent != "hc-a" {
		t.Errorf("hc-c not moved: %+v", q.Spec)
	}
}
