// Package evictions implements 'kubectl vc evictions': every eviction
// Volcano's scheduler made (preempt, reclaim, gangpreempt, gangreclaim,
// shuffle), with the workload it made room for, inferred from the
// preemptor's records and marked as inferred. The records are read once
// (Reader); the inference, pure logic over them, is in package infer.
package evictions

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// EventTTL is how long the API server keeps events unless told otherwise
// (kube-apiserver --event-ttl).
const EventTTL = time.Hour

// Settle is how long --watch waits after a new Evict event before it
// infers the preemptor: the scheduler writes the preemptor's record when
// its session closes, after the eviction.
var Settle = 2 * time.Second

// Options holds the input of 'evictions'.
type Options struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Namespace     string
	AllNamespaces bool
	Queue         string
	Since         time.Duration
	Watch         bool
	Output        string
	NoHeaders     bool
	ChunkSize     int64

	reader  *Reader
	now     func() time.Time
	printed map[string]bool
	tw      io.Writer
}

// List is what -o json|yaml prints.
type List struct {
	Kind  string           `json:"kind"`
	Items []infer.Eviction `json:"items"`
	// Unreadable says what could not be read, so that an eviction with no
	// preemptor is not taken for one that had none.
	Unreadable []string `json:"unreadable,omitempty"`
}

// NewCmd returns the 'evictions' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:     "evictions",
		Aliases: []string{"eviction", "ev"},
		Short:   "List the evictions Volcano's scheduler made, and for whom",
		Long: templates.LongDesc(`
			List every eviction Volcano's scheduler made in a namespace (-n) or in all
			(-A), oldest first: its time, the scheduler's action (preempt, reclaim,
			gangpreempt, gangreclaim, shuffle), the pod evicted, its podgroup, queue and
			node, and FOR, the workload it made room for.

			The scheduler records only the victim's side: an Evict event on the pod
			("Pod is evicted, because of ACTION") and on its podgroup, and the pod's
			DisruptionTarget condition. FOR is inferred, and marked so, from the
			preemptor's own record: a pod whose FailedScheduling event says it "can
			possibly be assigned to NODE, once resource is released" on the victim's
			node in the same scheduling cycle, with a priority above the victim's for
			preempt, in another queue for reclaim. -o wide shows the evidence and what
			could not be told.

			Events are kept one hour by default (kube-apiserver --event-ttl): older
			evictions are gone. Where a preemptor cannot be named (its records expired,
			or it is a pod in a namespace you cannot read) the row says so; nothing is
			guessed. A Volcano Job's evicted pod comes back under the same name: the
			records are matched by the pod's UID.

			--queue keeps the evictions the queue suffered or caused. --watch prints
			new evictions as they happen.`),
		Example: templates.Examples(`
			# The evictions of the last hour in namespace research
			kubectl vc evictions -n research

			# Every eviction in the cluster that involved queue team-a, with the evidence
			kubectl vc evictions -A --queue team-a -o wide

			# The last ten minutes, as JSON
			kubectl vc evictions -A --since 10m -o json

			# Watch evictions as they happen
			kubectl vc evictions -A --watch`),
		Args: cobra.NoArgs,
		RunE: util.RunE(o),
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List the evictions of every namespace")
	cmd.Flags().StringVar(&o.Queue, "queue", "", "Only evictions whose victim or preemptor is in this queue")
	queues := completion.Kind{List: func(ctx context.Context, f util.Factory, _ string) (runtime.Object, error) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, err
		}
		return c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	}}
	_ = cmd.RegisterFlagCompletionFunc("queue", queues.Name(f))
	cmd.Flags().DurationVar(&o.Since, "since", 0, "Only evictions newer than this (e.g. 10m); events older than the API server's --event-ttl (1h by default) are gone anyway")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, print new evictions as they happen")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "When using the default or wide output format, don't print headers")
	util.AddOutputFlag(cmd, &o.Output, "wide", "json", "yaml")
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// Complete resolves the namespace and the clients.
func (o *Options) Complete(args []string) error {
	var err error
	if o.Namespace, err = util.ListNamespace(o.Factory, o.AllNamespaces); err != nil {
		return err
	}
	vc, kube, err := util.Clients(o.Factory)
	if err != nil {
		return err
	}
	o.reader = &Reader{Kube: kube, VC: vc, ChunkSize: o.ChunkSize}
	if o.now == nil {
		o.now = time.Now
	}
	o.printed = map[string]bool{}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if err := util.ValidateOutput(o.Output, "wide", "json", "yaml"); err != nil {
		return err
	}
	if o.Since < 0 {
		return util.UsageErrorf("invalid --since %s: give a positive duration such as 10m", o.Since)
	}
	if o.Queue != "" {
		if errs := validation.IsDNS1123Subdomain(o.Queue); len(errs) > 0 {
			return util.UsageErrorf("invalid --queue %q: %s", o.Queue, errs[0])
		}
	}
	if o.Watch && (o.Output == "json" || o.Output == "yaml") {
		return util.UsageErrorf("--watch prints rows: use it with the default or wide output, not -o %s", o.Output)
	}
	return chunk.Validate(o.ChunkSize)
}

// Run lists the evictions, then with --watch prints new ones.
func (o *Options) Run(ctx context.Context) error {
	items, unreadable, rv, err := o.read(ctx)
	if err != nil {
		return err
	}
	if vcprinters.WriteData(o.Out, o.Output, List{Kind: "EvictionList", Items: orEmpty(items), Unreadable: unreadable}) {
		return nil
	}
	if len(items) == 0 && !o.Watch {
		fmt.Fprintln(o.ErrOut, o.none())
	}
	if err := o.print(items); err != nil {
		return err
	}
	o.notes(unreadable)
	if !o.Watch {
		return nil
	}
	return o.watch(ctx, rv)
}

func orEmpty(items []infer.Eviction) []infer.Eviction {
	if items == nil {
		return []infer.Eviction{}
	}
	return items
}

// read reads and infers the evictions the flags select.
func (o *Options) read(ctx context.Context) ([]infer.Eviction, []string, string, error) {
	in, rv, err := o.reader.Read(ctx, o.Namespace)
	if err != nil {
		return nil, nil, "", err
	}
	all := infer.Evictions(in)
	var out []infer.Eviction
	for _, ev := range all {
		if o.Since > 0 && ev.Time.Time.Before(o.now().Add(-o.Since)) {
			continue
		}
		if o.Queue != "" && ev.Queue != o.Queue && (ev.For == nil || ev.For.Queue != o.Queue) {
			continue
		}
		out = append(out, ev)
	}
	return out, in.Unreadable, rv, nil
}

func (o *Options) none() string {
	msg := "No evictions found"
	if o.Namespace != "" {
		msg += fmt.Sprintf(" in %s namespace", o.Namespace)
	}
	if o.Queue != "" {
		msg += fmt.Sprintf(" for queue %s", o.Queue)
	}
	return msg + fmt.Sprintf(" (events are kept %s by default: older evictions are gone).", EventTTL)
}

// notes says on stderr what could not be read, once.
func (o *Options) notes(unreadable []string) {
	for _, u := range unreadable {
		// A record that says its own consequence (priority classes) is
		// printed as it is; the others are where a preemptor may be.
		if !strings.Contains(u, "; ") {
			u += "; a preemptor there cannot be named"
		}
		fmt.Fprintf(o.ErrOut, "note: could not read %s\n", u)
	}
	if o.Since > EventTTL {
		fmt.Fprintf(o.ErrOut, "note: --since %s is longer than the %s events are kept by default (kube-apiserver --event-ttl): older evictions may be gone\n", o.Since, EventTTL)
	}
}

// print prints the rows of the evictions not printed yet.
func (o *Options) print(items []infer.Eviction) error {
	var fresh []infer.Eviction
	for _, ev := range items {
		k := key(ev)
		if o.printed[k] {
			continue
		}
		o.printed[k] = true
		fresh = append(fresh, ev)
	}
	if len(fresh) == 0 {
		return nil
	}
	p := printers.NewTablePrinter(printers.PrintOptions{NoHeaders: o.NoHeaders || len(o.printed) > len(fresh), Wide: o.Output == "wide"})
	if o.tw == nil {
		o.tw = printers.GetNewTabWriter(o.Out)
	}
	if err := p.PrintObj(Table(fresh, o.AllNamespaces), o.tw); err != nil {
		return err
	}
	if f, ok := o.tw.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

func key(ev infer.Eviction) string {
	if ev.VictimUID != "" {
		return string(ev.VictimUID)
	}
	return fmt.Sprintf("%s/%s/%s/%s", ev.Namespace, ev.Group, ev.Action, ev.Time.UTC().Format(time.RFC3339))
}

// Table is the table of 'evictions'; allNamespaces adds NAMESPACE first.
func Table(items []infer.Eviction, allNamespaces bool) *metav1.Table {
	var cols []vcprinters.Column
	if allNamespaces {
		cols = append(cols, vcprinters.Column{Name: "NAMESPACE"})
	}
	cols = append(cols, vcprinters.Column{Name: "TIME"}, vcprinters.Column{Name: "ACTION"}, vcprinters.Column{Name: "VICTIM"},
		vcprinters.Column{Name: "GROUP"}, vcprinters.Column{Name: "QUEUE"}, vcprinters.Column{Name: "NODE"}, vcprinters.Column{Name: "FOR"},
		vcprinters.Column{Name: "PRIORITY", Wide: true}, vcprinters.Column{Name: "EVIDENCE", Wide: true}, vcprinters.Column{Name: "UNKNOWN", Wide: true})
	rows := make([][]any, 0, len(items))
	for i := range items {
		ev := &items[i]
		var row []any
		if allNamespaces {
			row = append(row, ev.Namespace)
		}
		victim := ev.Victim
		if victim == "" {
			victim = "<expired>"
		}
		prio := "<unknown>"
		if ev.Priority != nil {
			prio = fmt.Sprint(*ev.Priority)
		}
		var evidence []string
		if ev.For != nil {
			evidence = append(evidence, ev.For.Evidence...)
		}
		row = append(row, ev.Time.UTC().Format(time.RFC3339), ev.Action, victim, orUnknown(ev.Group), orUnknown(ev.Queue), orUnknown(ev.Node),
			ev.Describe(), prio, vcprinters.OrNone(oneLine(strings.Join(evidence, "; "))), vcprinters.OrNone(oneLine(strings.Join(ev.Unknown, "; "))))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// watch prints the evictions that happen from rv on: for each new Evict
// event, once the preemptor's record has had time to be written, it reads
// the records again and prints the evictions not printed yet.
func (o *Options) watch(ctx context.Context, rv string) error {
	kube := o.reader.Kube
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("reason", infer.EvictReason).String()}
	return follow.Each(ctx, rv, opts, kube.CoreV1().Events(o.Namespace).Watch, func(t watch.EventType, e *corev1.Event) error {
		if t == watch.Deleted || o.printed[string(e.InvolvedObject.UID)] && e.InvolvedObject.Kind == "Pod" {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(Settle):
		}
		items, _, _, err := o.read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		return o.print(items)
	})
}

// ForUID returns the evictions of the pods with these UIDs or of these
// podgroups (namespace/name), for 'why' and the describe pages.
func ForUID(items []infer.Eviction, uids map[types.UID]bool, groups map[string]bool) []infer.Eviction {
	var out []infer.Eviction
	for _, ev := range items {
		if uids[ev.VictimUID] || groups[ev.Namespace+"/"+ev.Group] {
			out = append(out, ev)
		}
	}
	return out
}
