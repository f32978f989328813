package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestQueueListCountsFromTables: queues without a status (no controller
// runs here) are counted from the podgroups' QUEUE and STATUS columns,
// read as server-side Tables without the objects: in one request unless
// --chunk-size is given, then paged as it says; the counts per phase are
// those of the objects, a podgroup with no phase counts in no phase.
func TestQueueListCountsFromTables(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "queue-counts")
	groups := map[string][]schedulingv1beta1.PodGroupPhase{
		"qcount-a": {"Running", "Running", "Pending", "Inqueue", "Completed", ""},
		"qcount-b": {"Unknown"},
		"qcount-c": nil,
	}
	i := 0
	for q, phases := range groups {
		deleteQueuesAfter(t, q)
		if _, err := env.vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: q, Labels: map[string]string{"queue-counts-test": "yes"}},
			Spec:       schedulingv1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, phase := range phases {
			// PodGroup has no status subresource: the phase is written
			// with the object.
			if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &schedulingv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg-%d", i)},
				Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: q},
				Status:     schedulingv1beta1.PodGroupStatus{Phase: phase},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}
	want := map[string]string{
		// INQUEUE PENDING RUNNING UNKNOWN COMPLETED
		"qcount-a": "1 1 2 0 1",
		"qcount-b": "0 0 0 1 0",
		"qcount-c": "0 0 0 0 0",
	}
	proxy := binary.NewRecordingProxy(t, env.cp.AdminConfig())
	kc := proxy.Kubeconfig(t)
	// "" is the default: no --chunk-size, one request.
	for _, chunk := range []string{"2", "0", ""} {
		t.Run("--chunk-size="+chunk, func(t *testing.T) {
			proxy.Reset()
			args := []string{"queue", "list", "-l", "queue-counts-test=yes"}
			if chunk != "" {
				args = append(args, "--chunk-size", chunk)
			}
			r := runCmd(t, command(kc, args...))
			if r.Code != 0 {
				t.Fatalf("queue list:\n%s", r)
			}
			got := countColumns(t, r.Stdout)
			for q, w := range want {
				if got[q] != w {
					t.Errorf("queue %s: INQUEUE PENDING RUNNING UNKNOWN COMPLETED = %q, want %q\n%s", q, got[q], w, r.Stdout)
				}
			}
			reads := proxy.Lists("/apis/scheduling.volcano.sh/v1beta1/podgroups")
			if len(reads) == 0 {
				t.Fatal("no podgroup read")
			}
			for n, q := range reads {
				if q.Get("includeObject") != "None" {
					t.Errorf("podgroup read %d is not a Table without objects: %v", n, q)
				}
				if limit := q.Get("limit"); (chunk == "0" || chunk == "") && limit != "" || chunk == "2" && limit != chunk {
					t.Errorf("podgroup read %d: limit %q with --chunk-size %q", n, limit, chunk)
				}
			}
			if chunk != "2" && len(reads) != 1 {
				t.Errorf("--chunk-size 0 read the podgroups in %d requests, want 1", len(reads))
			}
		})
	}
}

// countColumns reads the INQUEUE..COMPLETED columns of 'queue list' by
// queue, as one space-separated string.
func countColumns(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	header := strings.Fields(lines[0])
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	got := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		var cells []string
		for _, h := range []string{"INQUEUE", "PENDING", "RUNNING", "UNKNOWN", "COMPLETED"} {
			i, ok := col[h]
			if !ok || i >= len(f) {
				t.Fatalf("no %s column in:\n%s", h, out)
			}
			cells = append(cells, f[i])
		}
		got[f[col["NAME"]]] = strings.Join(cells, " ")
	}
	return got
}
