package joborder

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Job is what the scheduler's job-order functions look at in one
// podgroup.
type Job struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	Created   time.Time `json:"created"`
	Phase     string    `json:"phase"`

	// PriorityClass is the podgroup's spec.priorityClassName; Priority
	// its value as the scheduler takes it (the class's value, else the
	// cluster's default class's, else 0).
	PriorityClass string `json:"priorityClass,omitempty"`
	Priority      int32  `json:"priority"`

	// MinMember and ReadyPods decide the gang plugin's order: a job is
	// ready when ReadyPods reaches MinMember.
	MinMember int32 `json:"minMember"`
	ReadyPods int32 `json:"readyPods"`
	// Placed is set when the scheduler has placed the gang: at least one
	// pod is bound or running, and those with the succeeded ones reach
	// MinMember. Such a group no longer waits, whatever its phase says
	// until the scheduler's next cycle writes Running.
	Placed bool `json:"-"`

	// Share is the drf plugin's dominant share: the largest fraction of
	// any resource of the cluster that the job's placed pods hold;
	// DominantResource names that resource.
	Share            float64 `json:"share"`
	DominantResource string  `json:"dominantResource,omitempty"`

	// WaitingTime is the sla plugin's waiting time for the job (its own
	// annotation, else the plugin's argument); nil when it has none.
	WaitingTime *time.Duration `json:"waitingTime,omitempty"`
}

// Ready is the gang plugin's readiness (JobInfo.IsReady).
func (j *Job) Ready() bool { return j.ReadyPods >= j.MinMember }

// Ref is namespace/name.
func (j *Job) Ref() string { return j.Namespace + "/" + j.Name }

// The keys that can decide between two jobs, besides the plugins' names.
const (
	ByCreation = "creation"
	ByUID      = "uid"
)

// Order is the job order of one scheduler configuration.
type Order struct {
	// Plugins are the enabled job-order plugins modelled here, in the
	// order the scheduler asks them.
	Plugins []string
	// Unknown are the enabled plugins whose job order cannot be known
	// from objects: tdm (its order depends on its revocable-zone
	// windows) and plugins Volcano does not ship.
	Unknown []string
	// Disabled are job-order plugins the configuration names with
	// enableJobOrder: false.
	Disabled  []string
	slaGlobal *time.Duration
}

// New builds the order the configuration gives: every plugin of every
// tier, in order, whose enableJobOrder is on and that orders jobs
// (Session.JobOrderCompareFn).
func New(c Config) Order {
	o := Order{slaGlobal: c.slaWaitingTime()}
	seen := map[string]bool{}
	for _, t := range c.Tiers {
		for _, p := range t.Plugins {
			on := p.EnableJobOrder == nil || *p.EnableJobOrder
			switch {
			case !on:
				if orders(p.Name) || !volcanoPlugins[p.Name] {
					o.Disabled = append(o.Disabled, p.Name)
				}
			case seen[p.Name]:
			case p.Name == TDM || !volcanoPlugins[p.Name]:
				o.Unknown = append(o.Unknown, p.Name)
			case orders(p.Name):
				o.Plugins = append(o.Plugins, p.Name)
			}
			if on {
				seen[p.Name] = true
			}
		}
	}
	return o
}

// SLAWaitingTime is the sla plugin's global waiting time, nil when unset.
func (o Order) SLAWaitingTime() *time.Duration { return o.slaGlobal }

// Compare returns -1 when l comes before r, 1 when after, and which key
// decided (a plugin's name, ByCreation or ByUID); 0 only for the same UID.
func (o Order) Compare(l, r *Job) (int, string) {
	for _, p := range o.Plugins {
		if c := comparePlugin(p, l, r); c != 0 {
			return c, p
		}
	}
	if !l.Created.Equal(r.Created) {
		if l.Created.Before(r.Created) {
			return -1, ByCreation
		}
		return 1, ByCreation
	}
	switch {
	case l.UID < r.UID:
		return -1, ByUID
	case l.UID > r.UID:
		return 1, ByUID
	}
	return 0, ByUID
}

// comparePlugin is one plugin's job order.
func comparePlugin(p string, l, r *Job) int {
	switch p {
	case Priority:
		// priority.go's jobOrderFn: the higher value first.
		return cmpDesc(int64(l.Priority), int64(r.Priority))
	case Gang:
		// gang.go's jobOrderFn: a job not ready yet before a ready one.
		lr, rr := l.Ready(), r.Ready()
		switch {
		case lr == rr:
			return 0
		case lr:
			return 1
		}
		return -1
	case DRF:
		// drf.go's jobOrderFn: the smaller dominant share first.
		switch {
		case l.Share == r.Share:
			return 0
		case l.Share < r.Share:
			return -1
		}
		return 1
	case SLA:
		// sla.go's jobOrderFn: jobs with a waiting time before those
		// without; between two, the earlier deadline (creation + waiting
		// time) first.
		switch {
		case l.WaitingTime == nil && r.WaitingTime == nil:
			return 0
		case l.WaitingTime == nil:
			return 1
		case r.WaitingTime == nil:
			return -1
		}
		ld, rd := l.Created.Add(*l.WaitingTime), r.Created.Add(*r.WaitingTime)
		switch {
		case ld.Before(rd):
			return -1
		case ld.After(rd):
			return 1
		}
	}
	return 0
}

func cmpDesc(l, r int64) int {
	switch {
	case l > r:
		return -1
	case l < r:
		return 1
	}
	return 0
}

// Sort orders jobs as the scheduler pops them from a queue's job heap
// (util.NewPriorityQueue(ssn.JobOrderFn)): Compare is a total order, so
// the heap's order is the sorted order.
func (o Order) Sort(jobs []Job) {
	sort.SliceStable(jobs, func(i, j int) bool {
		c, _ := o.Compare(&jobs[i], &jobs[j])
		return c < 0
	})
}

// Explain says why ahead comes before behind, in a few words:
// "priority 1000 > 10", "created 3m earlier".
func (o Order) Explain(ahead, behind *Job) string {
	_, key := o.Compare(ahead, behind)
	switch key {
	case Priority:
		return fmt.Sprintf("priority %d > %d", ahead.Priority, behind.Priority)
	case Gang:
		return fmt.Sprintf("gang: not ready (%d/%d pods) before ready", ahead.ReadyPods, ahead.MinMember)
	case DRF:
		return fmt.Sprintf("drf: dominant share %s < %s", fmtShare(ahead.Share), fmtShare(behind.Share))
	case SLA:
		if behind.WaitingTime == nil {
			return fmt.Sprintf("sla: waiting time %s, the other none", ahead.WaitingTime)
		}
		return fmt.Sprintf("sla: deadline %s before %s", ahead.Created.Add(*ahead.WaitingTime).UTC().Format(time.RFC3339),
			behind.Created.Add(*behind.WaitingTime).UTC().Format(time.RFC3339))
	case ByCreation:
		return fmt.Sprintf("created %s earlier", behind.Created.Sub(ahead.Created).Round(time.Second))
	}
	return fmt.Sprintf("same creation time, UID %s < %s", ahead.UID, behind.UID)
}

// fmtShare writes a share as a percentage with up to 2 decimals.
func fmtShare(s float64) string {
	return fmt.Sprintf("%.4g%%", s*100)
}
