package rules

import "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"

// PodGroupCounts are a queue's podgroups by phase, as a queue's status
// reports them.
type PodGroupCounts struct {
	Inqueue, Pending, Running, Unknown, Completed int32
	// Total is every podgroup, including those with no phase yet: a
	// podgroup the scheduler has not looked at still keeps its queue
	// Closing, though no phase column counts it.
	Total int32
}

// Add counts one podgroup of the given phase. A podgroup with no phase (or
// one no version of Volcano defines) is counted in Total only, as Volcano's
// queue controller does: its status has no column for it.
func (c *PodGroupCounts) Add(phase v1beta1.PodGroupPhase) { c.add(phase, 1) }

// Remove uncounts one podgroup of the given phase: the reverse of Add, for
// counts kept up to date as podgroups change.
func (c *PodGroupCounts) Remove(phase v1beta1.PodGroupPhase) { c.add(phase, -1) }

func (c *PodGroupCounts) add(phase v1beta1.PodGroupPhase, n int32) {
	c.Total += n
	switch phase {
	case v1beta1.PodGroupInqueue:
		c.Inqueue += n
	case v1beta1.PodGroupPending:
		c.Pending += n
	case v1beta1.PodGroupRunning:
		c.Running += n
	case v1beta1.PodGroupUnknown:
		c.Unknown += n
	case v1beta1.PodGroupCompleted:
		c.Completed += n
	}
}

// FromQueueStatus reads the counts a controller wrote into a queue's
// status. The status has no total, so Total is the sum of the phases.
func FromQueueStatus(s v1beta1.QueueStatus) PodGroupCounts {
	c := PodGroupCounts{Inqueue: s.Inqueue, Pending: s.Pending, Running: s.Running, Unknown: s.Unknown, Completed: s.Completed}
	c.Total = c.Inqueue + c.Pending + c.Running + c.Unknown + c.Completed
	return c
}

// SamePhases is true when both have the same count in every phase (what a
// queue's status records), whatever their totals.
func (c PodGroupCounts) SamePhases(o PodGroupCounts) bool {
	c.Total, o.Total = 0, 0
	return c == o
}

// Active is what still holds a Closing queue open: every podgroup that has
// not completed.
func (c PodGroupCounts) Active() int32 { return c.Total - c.Completed }
