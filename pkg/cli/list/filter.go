package list

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// QueuePhase is --queue and --phase, the filters of the kinds that are
// scheduled from a queue and have a phase (jobs, podgroups): the API
// server cannot select custom resources by spec or status fields, so the
// list keeps what matches.
type QueuePhase struct {
	Queue string
	Phase string
}

// AddFlags adds --queue, completed by queues (the queue Kind's NameFlag,
// which this package, imported by the queue's, cannot name), and --phase
// (one of phases, in any case); plural names the kind ("jobs").
func (q *QueuePhase) AddFlags(cmd *cobra.Command, queues completion.Func, plural string, phases []string) {
	cmd.Flags().StringVar(&q.Queue, "queue", "", "Only "+plural+" of this queue")
	util.AddEnumFlag(cmd, &q.Phase, "phase", "", "Only "+plural+" in this phase", phases)
	_ = cmd.RegisterFlagCompletionFunc("queue", queues)
}

// Validate checks --queue, and --phase against phases, making it the
// phase's own spelling.
func (q *QueuePhase) Validate(phases []string) error {
	if q.Queue != "" {
		if errs := validation.IsDNS1123Subdomain(q.Queue); len(errs) > 0 {
			return util.UsageErrorf("invalid --queue %q: %s", q.Queue, errs[0])
		}
	}
	phase, err := util.Enum("phase", q.Phase, phases)
	q.Phase = phase
	return err
}

// Keeps reports whether an object of queue and phase passes the filters.
func (q *QueuePhase) Keeps(queue, phase string) bool {
	return (q.Queue == "" || queue == q.Queue) && (q.Phase == "" || phase == q.Phase)
}
