package queue

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCrashSafety: 250 open/close Commands over 50 queues while serve is
// SIGKILLed and restarted; afterwards every queue is in the state of its
// last Command and no Command remains. Volcano deletes a Command before
// applying it, so a kill between the two would lose it; we apply first.
func TestCrashSafety(t *testing.T) {
	fresh(t)
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
	fresh(t)
	vc, _ := clients(t)
	const n = 30
	first := startServe(t, "--controllers=queue")
	qs := make([]*v1beta1.Queue, n)
	for i := range n {
		qs[i] = createQueue(t, vc, fmt.Sprintf("steady-%02d", i), "")
		podGroup(t, vc, qs[i].Name+"-pg", qs[i].Name, v1beta1.PodGroupRunning)
	}
	// A queue closed before the controller counted its podgroup would end
	// Closed, not Closing: close only once the podgroups are counted.
	for _, q := range qs {
		waitCounts(t, vc, q.Name, v1beta1.QueueStatus{State: open, Running: 1})
	}
	for i, q := range qs {
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
	// serve counts a request once its answer is back, which may be a
	// moment after the write is seen: wait for the write to be counted,
	// then there must be no other.
	eventually(t, "the status apply counted in serve's metrics", func() (bool, error) {
		return p.Writes(t) >= 1, nil
	})
	if w := p.Writes(t); w != 1 {
		t.Fatalf("%v API writes after label edits and one phase change, want exactly 1 (the status apply)", w)
	}
}

// TestLeaderElection: two serve processes; only the lease holder writes;
// when it is killed the other takes over; SIGTERM releases the lease.
func TestLeaderElection(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	ensureNamespace(t, kube, "le-test")
	// The Lease is removed when the test ends (after both serves are
	// stopped), so that a run after a failed one does not wait for a lease
	// left held.
	t.Cleanup(func() { _ = kube.CoordinationV1().Leases("le-test").Delete(ctx, "serve", metav1.DeleteOptions{}) })
	// serve's defaults: the leader renews every 2 s and gives up after 10 s
	// without a renewal, so a CPU stall of several seconds on a loaded
	// machine (2-3 s is common in CI) neither costs the leader its lease
	// nor lets the standby take it while the leader runs. The price is the
	// takeover after a crash, which waits for the lease to expire; its
	// deadline below is derived from these values.
	const (
		leaseDuration = 15 * time.Second
		renewDeadline = 10 * time.Second
		retryPeriod   = 2 * time.Second
	)
	le := []string{"--controllers=queue", "--leader-elect", "--leader-elect-resource-namespace=le-test",
		"--leader-elect-resource-name=serve", "--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=" + renewDeadline.String(), "--leader-elect-retry-period=" + retryPeriod.String()}
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

	// After SIGKILL, b takes the lease once it has seen no renewal for
	// leaseDuration, at its next attempt: client-go's elector retries
	// every retryPeriod with a jitter of up to 1.2 times it. The deadline
	// adds a minute for a loaded machine; it bounds a broken run only.
	a.Kill()
	takeover := leaseDuration + retryPeriod + time.Duration(1.2*float64(retryPeriod)) + time.Minute
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, takeover, true, func(context.Context) (bool, error) {
		return holder() == "b", nil
	}); err != nil {
		t.Fatalf("b did not take the lease within %v of a's crash; holder %q", takeover, holder())
	}
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
