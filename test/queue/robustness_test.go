package queue

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCrashSafety: 250 open/close Commands over 50 queues while serve is
// SIGKILLed and restarted; afterwards every queue is in the state of its
// last Command and no Command remains. Volcano deletes a Command before
// applying it, so a kill between the two would lose it; we apply first.
func TestCrashSafety(t *testing.T) {
	vc, _ := clients(t)
	const nQueues, rounds, perRound = 50, 5, 50
	queues := make([]*v1beta1.Queue, nQueues)
	for i := range queues {
		queues[i] = createQueue(t, vc, fmt.Sprintf("crash-%02d", i), "")
	}
	last := map[string]v1beta1.QueueState{}
	rng := rand.New(rand.NewSource(42))
	total := 0
	for r := range rounds {
		p := startServe(t, "--controllers=queue", "--max-requeue-num=-1")
		for range perRound {
			q := queues[rng.Intn(nQueues)]
			action, state := closeQ, closed
			if rng.Intn(2) == 0 {
				action, state = openQ, open
			}
			command(t, vc, q, action)
			last[q.Name] = state
			total++
		}
		if r == rounds-1 {
			p.Terminate(t) // the last round ends with a clean stop, not a crash
		} else {
			p.Kill()
		}
	}
	t.Logf("%d Commands over %d queues, serve killed %d times", total, nQueues, rounds-1)

	startServe(t, "--controllers=queue", "--max-requeue-num=-1")
	eventually(t, "every Command applied and deleted", func() (bool, error) {
		list, err := vc.BusV1alpha1().Commands("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range list.Items {
			if strings.HasPrefix(c.TargetObject.Name, "crash-") {
				return false, nil
			}
		}
		return true, nil
	})
	for _, q := range queues {
		want, ok := last[q.Name]
		if !ok {
			want = open
		}
		waitState(t, vc, q.Name, want)
	}
}

// TestSteadyStateNoWrites: a serve started on queues whose status is already
// right writes nothing, and events that cannot change a count (label edits)
// cause no write either; one phase change causes exactly one.
func TestSteadyStateNoWrites(t *testing.T) {
	vc, _ := clients(t)
	const n = 30
	first := startServe(t, "--controllers=queue")
	for i := range n {
		q := createQueue(t, vc, fmt.Sprintf("steady-%02d", i), "")
		podGroup(t, vc, q.Name+"-pg", q.Name, v1beta1.PodGroupRunning)
		if i%3 == 0 {
			command(t, vc, q, closeQ)
		}
	}
	for i := range n {
		name := fmt.Sprintf("steady-%02d", i)
		want := open
		if i%3 == 0 {
			want = closing
		}
		eventually(t, name+" settled", func() (bool, error) {
			s := getQueue(t, vc, name).Status
			return s.State == want && s.Running == 1, nil
		})
	}
	if err := first.Terminate(t); err != nil {
		t.Fatalf("serve did not exit cleanly on SIGTERM: %v", err)
	}

	p := startServe(t, "--controllers=queue")
	all, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every queue synced once", func() (bool, error) {
		v, _ := p.Metric(t, "queue_controller_syncs_total")
		return v >= float64(len(all.Items)), nil
	})
	if w := p.Writes(t); w != 0 {
		t.Fatalf("steady state: %v API writes at start-up, want 0", w)
	}
	for i := range n {
		name := fmt.Sprintf("steady-%02d", i)
		patch := []byte(`{"metadata":{"labels":{"touched":"yes"}}}`)
		if _, err := vc.SchedulingV1beta1().Queues().Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := vc.SchedulingV1beta1().PodGroups("default").Patch(ctx, name+"-pg", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The podgroup informer delivers events in order: once this phase change
	// is counted, every label edit before it has been seen.
	setPhase(t, vc, "steady-01-pg", v1beta1.PodGroupCompleted)
	eventually(t, "phase change counted", func() (bool, error) {
		s := getQueue(t, vc, "steady-01").Status
		return s.Completed == 1 && s.Running == 0, nil
	})
	if w := p.Writes(t); w != 1 {
		t.Fatalf("%v API writes after label edits and one phase change, want exactly 1 (the status apply)", w)
	}
}

// TestLeaderElection: two serve processes; only the lease holder writes;
// when it is killed the other takes over; SIGTERM releases the lease.
func TestLeaderElection(t *testing.T) {
	vc, kube := clients(t)
	ensureNamespace(t, kube, "le-test")
	le := []string{"--controllers=queue", "--leader-elect", "--leader-elect-resource-namespace=le-test",
		"--leader-elect-resource-name=serve", "--leader-elect-lease-duration=3s",
		"--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=250ms"}
	holder := func() string {
		l, err := kube.CoordinationV1().Leases("le-test").Get(ctx, "serve", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	a := startServe(t, append(le, "--leader-elect-identity=a")...)
	eventually(t, "a leads", func() (bool, error) { return holder() == "a", nil })
	b := startServe(t, append(le, "--leader-elect-identity=b")...)

	q := createQueue(t, vc, "le-q", "")
	waitState(t, vc, q.Name, open)
	commandGone(t, vc, command(t, vc, q, closeQ))
	waitState(t, vc, q.Name, closed)
	if holder() != "a" {
		t.Fatalf("leadership moved unexpectedly to %q", holder())
	}
	if w := b.Writes(t); w != 0 {
		t.Fatalf("the standby made %v API writes", w)
	}
	if w := a.Writes(t); w == 0 {
		t.Fatalf("the leader made no writes")
	}

	a.Kill()
	eventually(t, "b takes over", func() (bool, error) { return holder() == "b", nil })
	commandGone(t, vc, command(t, vc, q, openQ))
	waitState(t, vc, q.Name, open)
	if w := b.Writes(t); w == 0 {
		t.Fatalf("the new leader made no writes")
	}

	if err := b.Terminate(t); err != nil {
		t.Fatalf("serve did not exit cleanly on SIGTERM: %v", err)
	}
	if h := holder(); h != "" {
		t.Fatalf("lease still held by %q after SIGTERM", h)
	}
}
