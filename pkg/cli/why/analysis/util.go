package analysis

import (
	"fmt"
	"strings"
	"time"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"

	"github.com/kubectl-vc/kubectl-vc/pkg/leases"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// RecentEvents is how old a scheduler's latest event may be for a
// scheduler without a Lease to count as running.
const RecentEvents = 10 * time.Minute

// leaseState says whether a Lease is held and renewed within its
// duration (and leases.Grace), and describes it.
func leaseState(l *coordinationv1.Lease, now time.Time) (bool, string) {
	st := leases.Of(l)
	if st.Holder == "" || st.Renewed.IsZero() {
		return false, "has no holder"
	}
	since := st.Since(now)
	if !st.Held(now, leases.Grace) {
		return false, fmt.Sprintf("expired: held by %s, last renewed %s ago (duration %s)", st.Holder, human(since), st.Duration)
	}
	return true, fmt.Sprintf("held by %s, renewed %s ago", st.Holder, human(since))
}

// human writes a duration as kubectl's AGE column does.
func human(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return duration.HumanDuration(d)
}

// EventTime is when an event last happened, whichever way it was recorded.
func EventTime(e *corev1.Event) time.Time { return vcprinters.LastSeen(e) }

// eventSource is who wrote an event.
func eventSource(e *corev1.Event) string {
	switch {
	case e.Source.Component != "":
		return e.Source.Component
	case e.ReportingController != "":
		return e.ReportingController
	}
	return "<unknown>"
}

// eventCount is how often an event happened.
func eventCount(e *corev1.Event) int32 {
	if e.Series != nil && e.Series.Count > 0 {
		return e.Series.Count
	}
	if e.Count > 0 {
		return e.Count
	}
	return 1
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func (a *analyzer) objectRef() string {
	s := a.s
	switch s.Kind {
	case Queue:
		return "queue/" + s.Name
	}
	return string(s.Kind) + "/" + s.Namespace + "/" + s.Name
}

func groupRef(pg *schedulingv1beta1.PodGroup) string {
	return "podgroup/" + pg.Namespace + "/" + pg.Name
}

func pgPhase(pg *schedulingv1beta1.PodGroup) string {
	if pg.Status.Phase == "" {
		return string(schedulingv1beta1.PodGroupPending)
	}
	return string(pg.Status.Phase)
}

func pgQueue(pg *schedulingv1beta1.PodGroup) string { return rules.QueueOf(pg.Spec.Queue) }

func queueState(q *schedulingv1beta1.Queue) string {
	if !rules.QueueStatusKept(q) {
		return string(rules.StateOrOpen(q.Status.State)) + " (no status yet)"
	}
	return string(q.Status.State)
}

func orPending(s string) string {
	if s == "" {
		return "Pending"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func listSuffix(names []string, n int) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) <= n {
		return ": " + strings.Join(names, ", ")
	}
	return fmt.Sprintf(": %s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
