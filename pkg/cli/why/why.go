// Package why implements 'kubectl vc why': why a Volcano job, podgroup,
// pod or queue does not run. The command reads the objects that decide it
// once (package verdict, whose one-line verdict the describe pages end
// with); the analysis, pure logic over those objects, is in package
// analysis.
package why

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/job"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/podgroup"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queue"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queueline"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/verdict"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// The kinds 'why' explains.
const (
	Job      = analysis.Job
	PodGroup = analysis.PodGroup
	Pod      = analysis.Pod
	Queue    = analysis.Queue
)

// kindNames maps what a user may type to a kind, as kubectl's names and
// short names.
var kindNames = map[string]analysis.Kind{
	"job": Job, "jobs": Job, "vcjob": Job, "vj": Job,
	"podgroup": PodGroup, "podgroups": PodGroup, "pg": PodGroup,
	"pod": Pod, "pods": Pod, "po": Pod,
	"queue": Queue, "queues": Queue, "q": Queue,
}

// Options holds the input of 'why'.
type Options struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Output string
	// SchedulerNames are the names Volcano's scheduler answers to (its
	// --scheduler-name); its leader Lease has the first one's name.
	SchedulerNames []string
	// ControllersNamespace is where Volcano's scheduler and controllers,
	// and serve, keep their leader-election Leases.
	ControllersNamespace string
	ChunkSize            int64
	// Line names the scheduler configuration a waiting group's place in
	// line is predicted from (position.go).
	Line queueline.ConfigFlags

	Kind      analysis.Kind
	Name      string
	Namespace string

	vc   versioned.Interface
	kube kubernetes.Interface
	now  func() time.Time
}

// NewCmd returns the 'why' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "why (job|podgroup|pod|queue) NAME",
		Short: "Explain why a job, podgroup, pod or queue's work is not running",
		Long: templates.LongDesc(`
			Explain why a Volcano job, podgroup or pod is not running, or what keeps a
			queue's work from running. It walks from the object to everything that decides
			its fate and prints the reasons that block it first, one line each with the
			evidence and what to do, then what it checked and found fine:

			* the scheduler the pods name: one nothing in the cluster answers to (a typo),
			  or Volcano's scheduler not running (no fresh leader Lease in
			  --controllers-namespace, no recent event);
			* the PodGroup: missing, in another namespace, waiting for a controller that does
			  not run (serve's or Volcano's), minMember larger than the pods that exist;
			* the queue: missing, Closed or Closing (and who closed it: a Command, the
			  parent), a queue above it closed, not a leaf;
			* capacity, per resource with numbers: the queue's or a parent's capability
			  reached (status.allocated plus what waits Inqueue against spec.capability),
			  the deserved share reached while other queues wait, minResources larger than
			  a capability or than all Ready nodes offer, finished podgroups still counted;
			* the scheduler's own words: the PodGroup's Unschedulable condition with the gang
			  arithmetic, the pods' PodScheduled condition, the latest events, quoted.
			* the network topology (HyperNodes), for a group with a network-topology
			  constraint: the HyperNodes within its tier against what it needs, a broken tree
			  (two parents, a cycle), a tier name no HyperNode has or a configuration without
			  the network-topology-aware plugin (the constraint is ignored), soft mode, and
			  where a running group was placed; and a group the overcommit plugin does not
			  admit because Inqueue groups (one that can never run) hold the headroom;
			* its place in line, for a group that waits (Pending or Inqueue): its position in
			  its queue as 'queue pending' orders it from the scheduler's configuration
			  (--scheduler-config), who is ahead and why, and what it waits for.

			-o json|yaml prints the report for scripts: every reason has a stable code
			(reason), its evidence and its fix (see docs/why.md). The exit code is 0 when
			nothing blocks the object and 1 when something does (the report is printed
			either way); bad input and unreadable objects also exit 1, with one line on
			stderr and nothing on stdout. Lists are read --chunk-size objects at a time.`),
		Example: templates.Examples(`
			# Why is this job still Pending?
			kubectl vc why job train -n research

			# A pod that stays Pending without any event
			kubectl vc why pod train-worker-0 -n research

			# What keeps the work of queue team-a from running
			kubectl vc why queue team-a

			# In a script: the blocking reason codes
			kubectl vc why podgroup train-7f3c -n research -o json | jq -r '.reasons[] | select(.blocking) | .reason'`),
		Args:              cobra.MaximumNArgs(2),
		ValidArgsFunction: o.complete(f),
		RunE:              util.RunE(o),
	}
	util.AddOutputFlag(cmd, &o.Output, "json", "yaml")
	cmd.Flags().StringSliceVar(&o.SchedulerNames, "scheduler-name", []string{verdict.DefaultSchedulerName}, "Names Volcano's scheduler answers to (repeatable); its leader Lease is named after the first")
	cmd.Flags().StringVar(&o.ControllersNamespace, "controllers-namespace", keys.VolcanoNamespace, "Namespace of the Leases of Volcano's scheduler and controllers and of serve")
	chunk.AddFlag(cmd, &o.ChunkSize)
	o.Line.AddFlags(cmd)
	return cmd
}

// Complete reads the kind and name and resolves the namespace and clients.
func (o *Options) Complete(args []string) error {
	if len(args) == 0 {
		return util.UsageErrorf("name what to explain: kubectl vc why (job|podgroup|pod|queue) NAME")
	}
	k, ok := kindNames[strings.ToLower(args[0])]
	if !ok {
		return util.UsageErrorf("unknown kind %q: use job, podgroup, pod or queue", args[0])
	}
	o.Kind = k
	if len(args) < 2 {
		return util.UsageErrorf("name the %s to explain, e.g. 'kubectl vc why %s NAME'", k, k)
	}
	o.Name = args[1]
	var err error
	if k != Queue {
		if o.Namespace, err = util.Namespace(o.Factory); err != nil {
			return err
		}
	}
	if o.vc, o.kube, err = util.Clients(o.Factory); err != nil {
		return err
	}
	if o.now == nil {
		o.now = time.Now
	}
	return nil
}

// Validate checks the name and the flags.
func (o *Options) Validate() error {
	if err := util.ValidateOutput(o.Output, "json", "yaml"); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return util.UsageErrorf("invalid %s name %q: %s", o.Kind, o.Name, errs[0])
	}
	if len(o.SchedulerNames) == 0 {
		return util.UsageErrorf("--scheduler-name must name at least one scheduler")
	}
	for _, n := range o.SchedulerNames {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return util.UsageErrorf("invalid --scheduler-name %q: %s", n, errs[0])
		}
	}
	if errs := validation.IsDNS1123Label(o.ControllersNamespace); len(errs) > 0 {
		return util.UsageErrorf("invalid --controllers-namespace %q: %s", o.ControllersNamespace, errs[0])
	}
	if err := o.Line.Validate(); err != nil {
		return err
	}
	return chunk.Validate(o.ChunkSize)
}

// Run reads the snapshot, analyses it and prints the report; a blocked
// object fails the command after the report is printed.
func (o *Options) Run(ctx context.Context) error {
	r := o.reader()
	snap, err := r.Read(ctx, o.Kind, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	if o.Kind != Queue {
		o.readEvictions(ctx, snap)
		// The configuration tells which plugins enforce what (the
		// network-topology-aware plugin, overcommit's admission).
		conf, err := o.Line.ReadConfig(ctx, o.kube)
		if err != nil {
			return err
		}
		snap.SchedulerConfig = &conf
	}
	rep := analysis.Analyze(snap)
	if err := o.addPosition(ctx, snap, &rep); err != nil {
		return err
	}
	if !vcprinters.WriteData(o.Out, o.Output, rep) {
		PrintText(o.Out, rep)
	}
	if rep.Blocked {
		codes := rep.Blocking()
		var s []string
		for _, c := range codes {
			s = append(s, string(c))
		}
		return fmt.Errorf("%s is blocked: %s", subject(rep), strings.Join(s, ", "))
	}
	return nil
}

// readEvictions adds the evictions of the namespace to the snapshot (the
// analysis keeps the object's own); what cannot be read is said, not
// guessed.
func (o *Options) readEvictions(ctx context.Context, snap *analysis.Snapshot) {
	r := evictions.Reader{Kube: o.kube, VC: o.vc, ChunkSize: o.ChunkSize}
	in, _, err := r.Read(ctx, o.Namespace)
	if err != nil {
		snap.Unreadable = append(snap.Unreadable, analysis.Unreadable{What: "the scheduler's Evict events in namespace " + o.Namespace, Error: util.Message(err)})
		return
	}
	snap.Evictions = infer.Evictions(in)
}

func (o *Options) reader() *verdict.Reader {
	return &verdict.Reader{VC: o.vc, Kube: o.kube, ChunkSize: o.ChunkSize, SchedulerNames: o.SchedulerNames,
		ControllersNamespace: o.ControllersNamespace, Now: o.now}
}

// subject names the report's object as the text output does.
func subject(r analysis.Report) string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// PrintText writes the report for people: a headline, then one line per
// reason (BLOCK first, then NOTE) with its evidence and fix, then one line
// per check found fine (OK).
func PrintText(w io.Writer, r analysis.Report) {
	n := len(r.Blocking())
	switch {
	case n == 0:
		fmt.Fprintf(w, "%s is %s: nothing blocks it\n", subject(r), r.Status)
	case n == 1:
		fmt.Fprintf(w, "%s is %s: 1 reason blocks it\n", subject(r), r.Status)
	default:
		fmt.Fprintf(w, "%s is %s: %d reasons block it\n", subject(r), r.Status, n)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, x := range r.Reasons {
		status := "NOTE"
		if x.Blocking {
			status = "BLOCK"
		}
		line := x.Message
		if len(x.Evidence) > 0 {
			line += " [" + strings.Join(x.Evidence, "; ") + "]"
		}
		if x.Fix != "" {
			line += "; to fix: " + x.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", status, x.Reason, oneLine(line))
	}
	for _, c := range r.Checked {
		fmt.Fprintf(tw, "OK\t%s\t%s\n", c.Check, oneLine(c.Message))
	}
	_ = tw.Flush()
}

// oneLine keeps a line one line whatever a quoted message holds.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// complete completes the kind, then the names of that kind: a Volcano
// kind's with its Kind, pods with the Kubernetes client.
func (o *Options) complete(f util.Factory) completion.Func {
	kinds := []string{string(Job), string(PodGroup), string(Pod), string(Queue)}
	pods := completion.Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
		c, err := f.KubeClient()
		if err != nil {
			return nil, err
		}
		return c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	}}
	names := map[analysis.Kind]completion.Func{
		Job:      job.Kind.NameArg(f),
		PodGroup: podgroup.Kind.NameArg(f),
		Pod:      pods.Name(f),
		Queue:    queue.Kind.NameArg(f),
	}
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return completion.Filter(kinds, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
		case 1:
			if k, ok := kindNames[strings.ToLower(args[0])]; ok {
				return names[k](cmd, nil, toComplete)
			}
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
