package why

// Where is it in line? A waiting podgroup's place in its queue's line, as
// 'queue pending' shows it (package queueline), and what holds an Inqueue
// group that does not run.

import (
	"context"
	"fmt"
	"strings"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queueline"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/verdict"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/joborder"
)

// QueuePosition is the note giving a waiting podgroup's place in its
// queue's line: "position 2 of 5 in queue dev; ahead: team/train-3
// (priority 1000 > 10)".
const QueuePosition analysis.Code = "QueuePosition"

// aheadShown is how many of those ahead the note names.
const aheadShown = 3

// addPosition adds the QueuePosition note to the report of a job, pod or
// podgroup whose podgroup waits (Pending or Inqueue), after the blocking
// reasons. A scheduler configuration that cannot be read is an error; any
// other object that cannot be read leaves the note out.
func (o *Options) addPosition(ctx context.Context, snap *analysis.Snapshot, rep *analysis.Report) error {
	pg := waitingGroup(snap)
	if pg == nil {
		return nil
	}
	conf := snap.SchedulerConfig
	if conf == nil {
		c, err := o.Line.ReadConfig(ctx, o.kube)
		if err != nil {
			return err
		}
		conf = &c
	}
	r := &queueline.Reader{VC: o.vc, Kube: o.kube, ChunkSize: o.ChunkSize, Config: *conf}
	res, err := r.Read(ctx, rules.QueueOf(pg.Spec.Queue))
	if err != nil {
		return nil // the queue's own reasons say why (QueueMissing, NotChecked)
	}
	line, e := res.Find(pg.Namespace, pg.Name)
	if e == nil {
		return nil
	}
	note := analysis.Reason{Reason: QueuePosition, Object: "podgroup/" + pg.Namespace + "/" + pg.Name,
		Message: positionText(res, line, e), Evidence: []string{res.OrderText()}}
	if s := res.UnknownText(); s != "" {
		note.Evidence = append(note.Evidence, s)
	}
	note.Evidence = append(note.Evidence, res.Notes...)
	note.Fix = "see the whole line: kubectl vc queue pending " + line.Queue
	i := len(rep.Blocking())
	rep.Reasons = append(rep.Reasons[:i], append([]analysis.Reason{note}, rep.Reasons[i:]...)...)
	return nil
}

// positionText is the note's message: the position, who is ahead and why,
// and, for the head or an Inqueue group, what it waits for.
func positionText(res *queueline.Result, line *queueline.Line, e *queueline.Entry) string {
	s := fmt.Sprintf("position %d of %d in queue %s", e.Position, len(line.Entries), line.Queue)
	if e.Position > 1 {
		order := joborder.New(res.Config)
		var ahead []string
		for i := e.Position - 2; i >= 0 && len(ahead) < aheadShown; i-- {
			a := &line.Entries[i]
			ahead = append(ahead, fmt.Sprintf("%s (%s)", a.Ref(), order.Explain(&a.Job, &e.Job)))
		}
		s += "; ahead: " + strings.Join(ahead, ", ")
		if more := e.Position - 1 - len(ahead); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
	}
	inqueue := e.Phase == string(schedulingv1beta1.PodGroupInqueue)
	if e.Position > 1 && !inqueue {
		return s
	}
	wants := res.Wants(e)
	switch {
	case inqueue && len(wants) == 0:
		s += "; Inqueue (admitted) but not running: nothing it needs is short by its queue's deserved share or the idle nodes; its pods wait to be placed"
	case inqueue:
		s += "; Inqueue (admitted) but not running: it waits for " + joborder.Shorts(wants)
	case len(wants) > 0:
		s += "; it waits for " + joborder.Shorts(wants)
	default:
		s += "; it is considered next"
	}
	return s
}

// waitingGroup is the podgroup of the object asked about, when it waits.
func waitingGroup(s *analysis.Snapshot) *schedulingv1beta1.PodGroup {
	pg := s.PodGroup
	if pg == nil {
		for i := range s.PodGroups {
			g := &s.PodGroups[i]
			if g.Namespace != s.Namespace {
				continue
			}
			switch {
			case s.Kind == Pod && s.GroupName != "" && g.Name == s.GroupName:
				pg = g
			case s.Kind == Job && s.Job != nil && (g.Name == s.Name || g.Name == s.Name+"-"+string(s.Job.UID) || verdict.ControlledBy(g, s.Job.UID)):
				pg = g
			}
		}
	}
	if pg == nil || !joborder.Waiting(pg) {
		return nil
	}
	return pg
}
