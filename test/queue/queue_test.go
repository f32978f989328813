package queue

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

const (
	open, closing, closed, unknown = v1beta1.QueueStateOpen, v1beta1.QueueStateClosing, v1beta1.QueueStateClosed, v1beta1.QueueStateUnknown
	openQ, closeQ, syncQ           = busv1alpha1.OpenQueueAction, busv1alpha1.CloseQueueAction, busv1alpha1.SyncQueueAction
)

// TestQueueController drives every transition of SPEC §4 through Commands
// against one real serve process, and the status bookkeeping around them.
func TestQueueController(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	p := startServe(t, "--controllers=queue")

	t.Run("root and default ensured", func(t *testing.T) {
		waitState(t, vc, keys.RootQueue, open)
		d := waitState(t, vc, keys.DefaultQueue, open)
		if d.Spec.Parent != keys.RootQueue {
			t.Fatalf("default's parent = %q", d.Spec.Parent)
		}
	})

	t.Run("new queue becomes Open with parent root", func(t *testing.T) {
		createQueue(t, vc, "t-new", "")
		q := waitState(t, vc, "t-new", open)
		eventually(t, "parent defaulted", func() (bool, error) {
			q = getQueue(t, vc, "t-new")
			return q.Spec.Parent == keys.RootQueue, nil
		})
		if !hasManager(q.ManagedFields, keys.QueueControllerManager, "status") {
			t.Fatalf("status not written by field manager %s: %+v", keys.QueueControllerManager, q.ManagedFields)
		}
	})

	t.Run("empty queue: Open, Closed, Open", func(t *testing.T) {
		q := createQueue(t, vc, "t-empty", "")
		waitState(t, vc, q.Name, open)
		for _, step := range []struct {
			action string
			want   v1beta1.QueueState
		}{{openQ, open}, {syncQ, open}, {closeQ, closed}, {closeQ, closed}, {syncQ, closed}, {openQ, open}} {
			cmd := command(t, vc, q, step.action)
			commandGone(t, vc, cmd)
			if got := getQueue(t, vc, q.Name).Status.State; got != step.want {
				t.Fatalf("after %s: state %s, want %s", step.action, got, step.want)
			}
		}
		// One StateChanged per change, and none for the first state a new
		// queue gets (as in Volcano: at a cold start of thousands of
		// queues those events were half of the writes).
		sel := fields.Set{"involvedObject.name": q.Name, "involvedObject.uid": string(q.UID), "reason": "StateChanged"}.String()
		want := []string{"queue is Closed (was Open)", "queue is Open (was Closed)"}
		var got []string
		eventually(t, "the StateChanged events of "+q.Name, func() (bool, error) {
			evs, err := kube.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
			if err != nil {
				return false, err
			}
			got = got[:0]
			for _, e := range evs.Items {
				for range max(e.Count, 1) {
					got = append(got, e.Message)
				}
			}
			slices.Sort(got)
			return slices.Equal(got, want), nil
		})
	})

	t.Run("with podgroups: Closing until the last one goes", func(t *testing.T) {
		q := createQueue(t, vc, "t-busy", "")
		waitState(t, vc, q.Name, open)
		podGroup(t, vc, "busy-1", q.Name, v1beta1.PodGroupRunning)
		podGroup(t, vc, "busy-2", q.Name, v1beta1.PodGroupPending)
		waitCounts(t, vc, q.Name, v1beta1.QueueStatus{State: open, Running: 1, Pending: 1})
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closing) // Open --Close--> Closing
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closing) // Closing --Close--> Closing
		commandGone(t, vc, command(t, vc, q, syncQ))
		waitState(t, vc, q.Name, closing) // Closing --Sync--> Closing
		commandGone(t, vc, command(t, vc, q, openQ))
		waitState(t, vc, q.Name, open) // Closing --Open--> Open
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closing)
		deletePodGroup(t, vc, "busy-1")
		eventually(t, "one podgroup left in status", func() (bool, error) {
			s := getQueue(t, vc, q.Name).Status
			return s.State == closing && s.Running == 0 && s.Pending == 1, nil
		})
		deletePodGroup(t, vc, "busy-2")
		waitState(t, vc, q.Name, closed) // Closing --Sync (last podgroup gone)--> Closed
	})

	t.Run("closing an empty queue that was Closing ends Closed", func(t *testing.T) {
		q := createQueue(t, vc, "t-closing-empty", "")
		waitState(t, vc, q.Name, open)
		setState(t, vc, q.Name, closing)
		controllerSawQueues(t, vc)
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closed) // Closing --Close, no podgroups--> Closed
	})

	t.Run("Unknown", func(t *testing.T) {
		q := createQueue(t, vc, "t-unknown", "")
		waitState(t, vc, q.Name, open)
		// Each Command is sent once the controller has seen the Unknown
		// state (and the podgroup), so that it is decided from there.
		setState(t, vc, q.Name, unknown)
		controllerSawQueues(t, vc)
		commandGone(t, vc, command(t, vc, q, syncQ))
		if s := getQueue(t, vc, q.Name).Status.State; s != unknown {
			t.Fatalf("Unknown --Sync--> %s, want Unknown", s)
		}
		commandGone(t, vc, command(t, vc, q, openQ))
		waitState(t, vc, q.Name, open) // Unknown --Open--> Open
		setState(t, vc, q.Name, unknown)
		controllerSawQueues(t, vc)
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closed) // Unknown --Close, empty--> Closed
		setState(t, vc, q.Name, unknown)
		controllerSawQueues(t, vc)
		podGroup(t, vc, "unknown-1", q.Name, v1beta1.PodGroupInqueue)
		waitCounts(t, vc, q.Name, v1beta1.QueueStatus{State: unknown, Inqueue: 1})
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closing) // Unknown --Close, podgroups--> Closing
	})

	t.Run("counts by phase, in status and metrics, deleted with the queue", func(t *testing.T) {
		q := createQueue(t, vc, "t-counts", "")
		waitState(t, vc, q.Name, open)
		phases := []v1beta1.PodGroupPhase{v1beta1.PodGroupInqueue, v1beta1.PodGroupPending, v1beta1.PodGroupPending,
			v1beta1.PodGroupRunning, v1beta1.PodGroupRunning, v1beta1.PodGroupRunning, v1beta1.PodGroupUnknown, v1beta1.PodGroupCompleted}
		for i, ph := range phases {
			podGroup(t, vc, "counts-"+string(rune('a'+i)), q.Name, ph)
		}
		want := v1beta1.QueueStatus{State: open, Inqueue: 1, Pending: 2, Running: 3, Unknown: 1, Completed: 1}
		eventually(t, "counts in status", func() (bool, error) {
			s := getQueue(t, vc, q.Name).Status
			return s.State == want.State && s.Inqueue == want.Inqueue && s.Pending == want.Pending &&
				s.Running == want.Running && s.Unknown == want.Unknown && s.Completed == want.Completed, nil
		})
		setPhase(t, vc, "counts-b", v1beta1.PodGroupRunning) // Pending -> Running
		eventually(t, "phase change counted", func() (bool, error) {
			s := getQueue(t, vc, q.Name).Status
			return s.Pending == 1 && s.Running == 4, nil
		})
		// serve sets the metrics after the status write returns, so the
		// status may be seen first: the metrics are read until they agree.
		for name, v := range map[string]float64{"inqueue": 1, "pending": 1, "running": 4, "unknown": 1, "completed": 1} {
			metric := "volcano_queue_pod_group_" + name + "_count"
			eventually(t, metric+" of t-counts", func() (bool, error) {
				got, ok := p.Metric(t, metric, `queue_name="t-counts"`)
				if !ok || got != v {
					return false, fmt.Errorf("%s = %v (present %t), want %v", metric, got, ok, v)
				}
				return true, nil
			})
		}
		// A podgroup moved to another queue leaves this one's counts.
		if _, err := vc.SchedulingV1beta1().PodGroups("default").Patch(ctx, "counts-a", types.MergePatchType,
			[]byte(`{"spec":{"queue":"t-counts-elsewhere"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "queue move counted", func() (bool, error) {
			s := getQueue(t, vc, q.Name).Status
			return s.Inqueue == 0 && s.Running == 4, nil
		})
		// Alone, the queue controller read those from Table rows
		// (plugins/queue watchPodGroups), not from podgroup objects.
		if log, err := os.ReadFile(p.Log); err != nil || !strings.Contains(string(log), `"podgroups read for counting" from="Tables per namespace"`) {
			t.Errorf("serve --controllers=queue did not count from Tables per namespace (%v); its log:\n%s", err, p.LastLog(20))
		}
		for i := range phases {
			deletePodGroup(t, vc, "counts-"+string(rune('a'+i)))
		}
		commandGone(t, vc, command(t, vc, q, closeQ))
		waitState(t, vc, q.Name, closed)
		if err := vc.SchedulingV1beta1().Queues().Delete(ctx, q.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "metrics of the deleted queue gone", func() (bool, error) {
			_, ok := p.Metric(t, "volcano_queue_pod_group_running_count", `queue_name="t-counts"`)
			return !ok, nil
		})
	})

	t.Run("Commands not for a queue are left alone", func(t *testing.T) {
		q := createQueue(t, vc, "t-other", "")
		waitState(t, vc, q.Name, open)
		other := &busv1alpha1.Command{
			ObjectMeta:   metav1.ObjectMeta{GenerateName: "job-abort-"},
			Action:       "AbortJob",
			TargetObject: &metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: q.Name, UID: q.UID},
		}
		other, err := vc.BusV1alpha1().Commands("default").Create(ctx, other, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A queue Command created after it is processed; the Job one stays.
		commandGone(t, vc, command(t, vc, q, closeQ))
		if _, err := vc.BusV1alpha1().Commands("default").Get(ctx, other.Name, metav1.GetOptions{}); err != nil {
			t.Fatalf("the Job Command was touched: %v", err)
		}
		_ = vc.BusV1alpha1().Commands("default").Delete(ctx, other.Name, metav1.DeleteOptions{})
	})

	t.Run("a Command for an earlier queue of the same name is discarded", func(t *testing.T) {
		q := createQueue(t, vc, "t-reborn", "")
		waitState(t, vc, q.Name, open)
		stale := q.DeepCopy()
		stale.UID = types.UID("00000000-0000-0000-0000-000000000001")
		cmd := command(t, vc, stale, closeQ)
		commandGone(t, vc, cmd)
		if s := getQueue(t, vc, q.Name).Status.State; s != open {
			t.Fatalf("stale Command acted on the queue: %s", s)
		}
	})

	t.Run("root is never closed", func(t *testing.T) {
		root := getQueue(t, vc, keys.RootQueue)
		commandGone(t, vc, command(t, vc, root, closeQ))
		if s := getQueue(t, vc, keys.RootQueue).Status.State; s != open {
			t.Fatalf("root is %s", s)
		}
	})
}

// TestHierarchy: closing a parent closes its open children and marks them;
// opening it re-opens only those; a child cannot open under a closed parent.
func TestHierarchy(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	startServe(t, "--controllers=queue", "--max-requeue-num=-1")

	parent := createQueue(t, vc, "h-parent", "")
	a := createQueue(t, vc, "h-a", parent.Name)
	createQueue(t, vc, "h-b", parent.Name)
	c := createQueue(t, vc, "h-c", parent.Name)
	grand := createQueue(t, vc, "h-a-grand", a.Name)
	for _, n := range []string{"h-parent", "h-a", "h-b", "h-c", "h-a-grand"} {
		waitState(t, vc, n, open)
	}
	podGroup(t, vc, "h-b-pg", "h-b", v1beta1.PodGroupRunning)
	// Closing the parent must find h-b holding a podgroup (Closing).
	waitCounts(t, vc, "h-b", v1beta1.QueueStatus{State: open, Running: 1})
	commandGone(t, vc, command(t, vc, c, closeQ)) // closed by the user, not the parent
	waitState(t, vc, "h-c", closed)

	commandGone(t, vc, command(t, vc, parent, closeQ))
	waitState(t, vc, "h-parent", closed)
	for n, want := range map[string]v1beta1.QueueState{"h-a": closed, "h-b": closing, "h-a-grand": closed} {
		q := waitState(t, vc, n, want)
		if q.Annotations[keys.ClosedByParent] != "true" {
			t.Errorf("%s closed without %s", n, keys.ClosedByParent)
		}
	}
	if getQueue(t, vc, "h-c").Annotations[keys.ClosedByParent] != "" {
		t.Errorf("h-c was closed by the user but is marked closed by parent")
	}

	// A child cannot be opened while its parent is closed: the Command stays
	// (retried) and the child stays closed. The controller says so on the
	// Command, which proves it has taken it up.
	blocked := command(t, vc, grand, openQ)
	waitCommandWaiting(t, kube, blocked)
	if _, err := vc.BusV1alpha1().Commands("default").Get(ctx, blocked.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Command to open a child under a closed parent was consumed: %v", err)
	}
	if s := getQueue(t, vc, "h-a-grand").Status.State; s != closed {
		t.Fatalf("child opened under a closed parent: %s", s)
	}

	commandGone(t, vc, command(t, vc, parent, openQ))
	for _, n := range []string{"h-parent", "h-a", "h-b", "h-a-grand"} {
		q := waitState(t, vc, n, open)
		eventually(t, n+" unmarked", func() (bool, error) {
			q = getQueue(t, vc, n)
			return q.Annotations[keys.ClosedByParent] == "", nil
		})
	}
	commandGone(t, vc, blocked) // applied once the parent is open
	if s := getQueue(t, vc, "h-c").Status.State; s != closed {
		t.Fatalf("h-c, closed by the user, was re-opened with its parent: %s", s)
	}

	// A queue created under a closed parent is closed at once.
	commandGone(t, vc, command(t, vc, parent, closeQ))
	waitState(t, vc, "h-a", closed)
	createQueue(t, vc, "h-late", parent.Name)
	q := waitState(t, vc, "h-late", closed)
	if q.Annotations[keys.ClosedByParent] != "true" {
		t.Fatalf("h-late not marked")
	}
	_, err := vc.SchedulingV1beta1().Queues().Get(ctx, "h-missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

func hasManager(mf []metav1.ManagedFieldsEntry, manager, subresource string) bool {
	for _, e := range mf {
		if e.Manager == manager && e.Subresource == subresource && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
