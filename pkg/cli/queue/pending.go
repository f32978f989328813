package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queueline"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/joborder"
)

// pendingOutputs are the -o values of 'queue pending' besides the table.
var pendingOutputs = []string{"name", "json", "yaml", "wide"}

// watchSettle is how long --watch waits after a change for the next one
// before it prints the line again (a job's pods and podgroup change together).
const watchSettle = 300 * time.Millisecond

// PendingOptions holds the input of 'queue pending'.
type PendingOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Queue         string
	AllQueues     bool
	Output        string
	NoHeaders     bool
	Watch         bool
	ChunkSize     int64
	Configuration queueline.ConfigFlags

	vc   versioned.Interface
	kube kubernetes.Interface
	now  func() time.Time
}

func newPendingCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PendingOptions{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "pending (QUEUE | -A)",
		Short: "List the podgroups waiting in a queue in the order Volcano's scheduler considers them",
		Long: templates.LongDesc(`
			List the podgroups waiting in a queue (Pending: not yet admitted; Inqueue: admitted,
			not yet running) in the order Volcano's scheduler considers them, and what the
			first one waits for.

			The scheduler orders a queue's jobs by the job-order functions of the plugins its
			configuration enables, tier by tier: the first plugin that tells two jobs apart
			decides; then the older job comes first, then the smaller UID. Modelled here:
			priority (the value of the podgroup's priority class, higher first; no class or
			a missing one takes the default class's value, else 0), gang (a group whose
			running pods do not yet reach minMember before one that does), drf (the smaller
			dominant share of the cluster held by the group's placed pods first) and sla (a
			group with a waiting time before one without, the earlier deadline first).

			The configuration is read from the ConfigMap Volcano installs for its scheduler
			(--scheduler-config, key volcano-scheduler.conf) or from a file
			(--scheduler-config-file); without one, Volcano's defaults, and the output says so.
			A plugin that orders jobs in a way not modelled here (tdm, or one Volcano does not
			ship) is named in one line: the order may differ.

			For the head of each line: the resources it lacks, with numbers, against its
			queue's capability (Pending), its deserved share (Inqueue) or the Ready nodes'
			idle resources. A prediction holds for the objects as read: priorities, shares
			and capacity change while a job waits, and the scheduler may admit a later, smaller
			job that fits before the head that does not.`),
		Example: templates.Examples(`
			# Who is ahead in queue dev
			kubectl vc queue pending dev

			# Every queue's line, with each podgroup's gang, share and why it is behind
			kubectl vc queue pending -A -o wide

			# The names in line order, for a script
			kubectl vc queue pending dev -o name

			# With the scheduler's configuration from a file
			kubectl vc queue pending dev --scheduler-config-file volcano-scheduler.conf

			# Watch the line change
			kubectl vc queue pending dev --watch`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	cmd.Flags().BoolVarP(&o.AllQueues, "all-queues", "A", false, "The lines of every queue that has waiting podgroups")
	util.AddOutputFlag(cmd, &o.Output, pendingOutputs...)
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Don't print the table's header")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After the line, print it again whenever a podgroup changes")
	o.Configuration.AddFlags(cmd)
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// Complete reads the queue and resolves the clients.
func (o *PendingOptions) Complete(args []string) error {
	switch {
	case o.AllQueues && len(args) > 0:
		return util.UsageErrorf("give a queue or -A, not both")
	case !o.AllQueues && len(args) != 1:
		return util.UsageErrorf("name one queue, e.g. 'kubectl vc queue pending dev', or -A for every queue")
	case len(args) == 1:
		o.Queue = args[0]
	}
	var err error
	if o.vc, o.kube, err = util.Clients(o.Factory); err != nil {
		return err
	}
	if o.now == nil {
		o.now = time.Now
	}
	return nil
}

// Validate checks the queue's name and the flags.
func (o *PendingOptions) Validate() error {
	if o.Queue != "" {
		if err := validateName(o.Queue); err != nil {
			return err
		}
	}
	if err := util.ValidateOutput(o.Output, pendingOutputs...); err != nil {
		return err
	}
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	return o.Configuration.Validate()
}

// Run reads the scheduler's configuration, then the line, and prints it;
// with --watch again after every change of a podgroup.
func (o *PendingOptions) Run(ctx context.Context) error {
	conf, err := o.Configuration.ReadConfig(ctx, o.kube)
	if err != nil {
		return err
	}
	r := &queueline.Reader{VC: o.vc, Kube: o.kube, ChunkSize: o.ChunkSize, Config: conf}
	res, err := o.read(ctx, r)
	if err != nil {
		return err
	}
	if err := o.print(res, true); err != nil || !o.Watch {
		return err
	}
	return o.watch(ctx, r)
}

func (o *PendingOptions) read(ctx context.Context, r *queueline.Reader) (*queueline.Result, error) {
	if o.AllQueues {
		return r.Read(ctx)
	}
	return r.Read(ctx, o.Queue)
}

// watch prints the line again whenever a podgroup changes, once changes
// settle, until interrupted.
func (o *PendingOptions) watch(ctx context.Context, r *queueline.Reader) error {
	for {
		w, err := o.vc.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		changed := false
		var settle <-chan time.Time
	events:
		for {
			select {
			case <-ctx.Done():
				w.Stop()
				return nil
			case _, ok := <-w.ResultChan():
				if !ok {
					break events // the server closed the watch: start another
				}
				changed = true
				settle = time.After(watchSettle)
			case <-settle:
				if !changed {
					continue
				}
				changed = false
				res, err := o.read(ctx, r)
				if err != nil {
					w.Stop()
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				if err := o.print(res, false); err != nil {
					w.Stop()
					return err
				}
			}
		}
		w.Stop()
	}
}

// print writes the lines in the chosen format; the table is followed by
// what each head waits for and how the lines were ordered.
func (o *PendingOptions) print(res *queueline.Result, first bool) error {
	if vcprinters.WriteData(o.Out, o.Output, res) {
		return nil
	}
	if o.Output == "name" {
		for _, l := range res.Lines {
			for _, e := range l.Entries {
				fmt.Fprintf(o.Out, "podgroup.scheduling.volcano.sh/%s\n", e.Name)
			}
		}
		return nil
	}
	n := 0
	for _, l := range res.Lines {
		n += len(l.Entries)
	}
	if !first {
		fmt.Fprintln(o.Out)
	}
	if n == 0 {
		if o.AllQueues {
			fmt.Fprintln(o.ErrOut, "No podgroups wait in any queue.")
		} else {
			fmt.Fprintf(o.ErrOut, "No podgroups wait in queue %s.\n", o.Queue)
		}
	} else {
		o.table(res)
	}
	for _, l := range res.Lines {
		if len(l.Entries) == 0 {
			continue
		}
		h := l.Entries[0]
		if len(l.HeadWaits) == 0 {
			fmt.Fprintf(o.Out, "head of %s: %s/%s lacks nothing its queue's capability%s or the idle nodes show; it is considered next\n",
				l.Queue, h.Namespace, h.Name, deservedWord(h.Phase))
		} else {
			fmt.Fprintf(o.Out, "head of %s: %s/%s waits for %s\n", l.Queue, h.Namespace, h.Name, joborder.Shorts(l.HeadWaits))
		}
	}
	fmt.Fprintln(o.Out, res.OrderText())
	if s := res.UnknownText(); s != "" {
		fmt.Fprintln(o.Out, s)
	}
	for _, s := range res.Notes {
		fmt.Fprintln(o.Out, "note: "+s)
	}
	return nil
}

func deservedWord(phase string) string {
	if phase == "Inqueue" {
		return ", deserved share"
	}
	return ""
}

// table writes one row per waiting podgroup, in line order.
func (o *PendingOptions) table(res *queueline.Result) {
	tw := tabwriter.NewWriter(o.Out, 0, 8, 3, ' ', 0)
	defer tw.Flush()
	header := []string{"POSITION", "NAMESPACE", "NAME", "PRIORITY", "MIN RESOURCES", "PHASE", "WAITING"}
	if o.AllQueues {
		header = append([]string{"QUEUE"}, header...)
	}
	wide := o.Output == "wide"
	if wide {
		header = append(header, "PRIORITY CLASS", "GANG", "DRF SHARE", "SLA DEADLINE", "BEHIND BECAUSE")
	}
	if !o.NoHeaders {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	now := o.now()
	for _, l := range res.Lines {
		for _, e := range l.Entries {
			row := []string{strconv.Itoa(e.Position), e.Namespace, e.Name, strconv.Itoa(int(e.Priority)),
				vcprinters.OrNone(vcprinters.Resources(e.MinResources)), e.Phase,
				duration.HumanDuration(queueline.Waited(&e, now))}
			if o.AllQueues {
				row = append([]string{l.Queue}, row...)
			}
			if wide {
				row = append(row, vcprinters.OrNone(e.PriorityClass), readyWord(&e.Job),
					fmt.Sprintf("%.4g", e.Share), slaDeadline(&e.Job), vcprinters.OrNone(e.Behind))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
}

// readyWord is the gang plugin's view: "ready 3/3" or "not ready 1/3".
func readyWord(j *joborder.Job) string {
	if j.Ready() {
		return fmt.Sprintf("ready %d/%d", j.ReadyPods, j.MinMember)
	}
	return fmt.Sprintf("not ready %d/%d", j.ReadyPods, j.MinMember)
}

func slaDeadline(j *joborder.Job) string {
	if j.WaitingTime == nil {
		return "<none>"
	}
	return j.Created.Add(*j.WaitingTime).UTC().Format(time.RFC3339)
}
