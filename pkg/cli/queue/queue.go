// Package queue implements 'kubectl vc queue': create, list, describe, open,
// close, update, delete and tree for Volcano queues.
package queue

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// DefaultCommandNamespace is where vcctl, and so Volcano's controller
// expectations, put queue Commands.
const DefaultCommandNamespace = "default"

// NewCmd returns the 'queue' command group.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "queue",
		Aliases: []string{"queues", "q"},
		Short:   "Manage Volcano queues",
		Long: templates.LongDesc(`
			Create, inspect, open, close, update and delete Volcano queues.

			State changes (open, close) are requested the way Volcano's vcctl does it: by
			creating a bus.volcano.sh Command that the queue controller acts on.`),
		Example: templates.Examples(`
			# List queues with their podgroup counts
			kubectl vc queue list

			# Close a queue and wait until it holds no more podgroups
			kubectl vc queue close team-a --wait --timeout 5m`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newCreateCmd(f, streams),
		newListCmd(f, streams),
		newDescribeCmd(f, streams),
		newOpenCmd(f, streams),
		newCloseCmd(f, streams),
		newUpdateCmd(f, streams),
		newDeleteCmd(f, streams),
		newTreeCmd(f, streams),
	)
	return cmd
}

// validateNewName checks the name of a queue to be created. Queue names
// become part of Command names (<queue>-closequeue-xxxxx), so we insist on
// a DNS-1123 label.
func validateNewName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return util.UsageErrorf("invalid queue name %q: %s", name, errs[0])
	}
	return nil
}

// validateName checks the name of an existing queue (upstream allows DNS-1123 subdomains).
func validateName(name string) error {
	if name == "" {
		return util.UsageErrorf("queue name must not be empty")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return util.UsageErrorf("invalid queue name %q: %s", name, errs[0])
	}
	return nil
}

// validateNames checks a list of names and refuses duplicates, which would
// otherwise create two Commands for one queue.
func validateNames(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if err := validateName(n); err != nil {
			return err
		}
		if seen[n] {
			return util.UsageErrorf("queue %q is named twice", n)
		}
		seen[n] = true
	}
	return nil
}

// parseResources parses "cpu=4,memory=8Gi" for the flag named flag.
func parseResources(flag, s string) (corev1.ResourceList, error) {
	list := corev1.ResourceList{}
	if strings.TrimSpace(s) == "" {
		return list, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" || value == "" {
			return nil, util.UsageErrorf("invalid --%s %q: write NAME=QUANTITY pairs, e.g. cpu=4,memory=8Gi", flag, s)
		}
		if errs := validation.IsQualifiedName(name); len(errs) > 0 {
			return nil, util.UsageErrorf("invalid --%s: resource name %q: %s", flag, name, errs[0])
		}
		if _, dup := list[corev1.ResourceName(name)]; dup {
			return nil, util.UsageErrorf("invalid --%s: %s is given twice", flag, name)
		}
		if len(value) > maxQuantityLen {
			// Not echoed: the point is that it is too long to print.
			return nil, util.UsageErrorf("invalid --%s: the quantity of %s is %d characters long; at most %d are accepted", flag, name, len(value), maxQuantityLen)
		}
		if err := checkExponent(value); err != nil {
			return nil, util.UsageErrorf("invalid --%s: %s=%s: %s", flag, name, value, err)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, util.UsageErrorf("invalid --%s: %s=%s is not a quantity (use e.g. 4, 500m, 8Gi)", flag, name, value)
		}
		if q.Sign() < 0 {
			return nil, util.UsageErrorf("invalid --%s: %s=%s must not be negative", flag, name, value)
		}
		// What is sent is q.String(). apimachinery has no suffix above E
		// and prints 1000E (or 1e21 written out) as "1", so such a value
		// would be stored as something else entirely (found by
		// FuzzParseResources). Refuse what does not survive the trip.
		// The stored form must also pass our own exponent bound: 100e1000
		// is written within it but stored as 1e1002, which this flag would
		// then refuse when pasted back from 'queue describe' (also found
		// by FuzzParseResources).
		stored := q.String()
		if len(stored) > maxQuantityLen {
			return nil, util.UsageErrorf("invalid --%s: %s=%s would be stored in %d characters; at most %d are accepted", flag, name, value, len(stored), maxQuantityLen)
		}
		if err := checkExponent(stored); err != nil {
			return nil, util.UsageErrorf("invalid --%s: %s=%s would be stored as %s: %s", flag, name, value, stored, err)
		}
		if back, err := resource.ParseQuantity(stored); err != nil || back.Cmp(q) != 0 {
			return nil, util.UsageErrorf("invalid --%s: %s=%s cannot be stored as written (Kubernetes would store %s); use a smaller quantity", flag, name, value, stored)
		}
		list[corev1.ResourceName(name)] = q
	}
	return list, nil
}

// maxQuantityLen bounds how long a quantity may be written or stored.
// The longest real one (a 19-digit integer, nine decimals and a suffix)
// is about 30 characters; without a bound, a value of 100 000 digits took
// seconds to parse (apimachinery's rounding is quadratic in the digits)
// and was then echoed whole in the error line.
const maxQuantityLen = 100

// maxExponent bounds the decimal exponent of a quantity such as 5e3.
// apimachinery keeps only the low 32 bits of the exponent it parses
// (1e4294967297 would silently be 10), and rounding a quantity with a large
// negative exponent up to its smallest unit takes time that grows faster
// than the exponent (1e-2000000000 did not return; both found by
// FuzzParseResources). Real resources lie between 1n and a few E, so no
// real value needs an exponent near this bound; it applies both to what
// the user writes and to the form the value is stored in.
const maxExponent = 1000

// exponentSuffix is the exponent form of a quantity's suffix.
var exponentSuffix = regexp.MustCompile(`[eE]([+-]?[0-9]+)$`)

// checkExponent refuses a quantity written with an exponent beyond
// ±maxExponent, before apimachinery parses it.
func checkExponent(value string) error {
	m := exponentSuffix.FindStringSubmatch(value)
	if m == nil {
		return nil
	}
	if e, err := strconv.ParseInt(m[1], 10, 64); err != nil || e > maxExponent || e < -maxExponent {
		return fmt.Errorf("the exponent must be between -%d and %d", maxExponent, maxExponent)
	}
	return nil
}

// checkGuarantee enforces deserved >= guarantee per resource, the rule
// the admission policy also enforces, so the user learns it before a write.
func checkGuarantee(deserved, guarantee corev1.ResourceList) error {
	for name, g := range guarantee {
		if d, ok := deserved[name]; ok && d.Cmp(g) < 0 {
			return util.UsageErrorf("--guarantee %s=%s exceeds --deserved %s=%s: deserved must be at least the guarantee", name, g.String(), name, d.String())
		}
	}
	return nil
}

func validateWeight(w int32) error {
	if w < 1 || w > 65535 {
		return util.UsageErrorf("invalid --weight %d: must be between 1 and 65535", w)
	}
	return nil
}

func validatePriority(p int32) error {
	if p < 0 {
		return util.UsageErrorf("invalid --priority %d: must not be negative", p)
	}
	return nil
}

// stateOf treats an empty state as Open, as the controller does.
func stateOf(q *schedulingv1beta1.Queue) schedulingv1beta1.QueueState {
	if q.Status.State == "" {
		return schedulingv1beta1.QueueStateOpen
	}
	return q.Status.State
}

// newQueueCommand builds the Command exactly as Volcano's vcctl does, so
// that Volcano's own controller acts on it: generateName
// <queue>-<lower(action)>-, a controller owner reference to the Queue (so
// the garbage collector removes it with the queue), and the same
// reference as target.
func newQueueCommand(q *schedulingv1beta1.Queue, action, namespace string) *busv1alpha1.Command {
	ref := metav1.OwnerReference{
		APIVersion:         schedulingv1beta1.SchemeGroupVersion.String(),
		Kind:               "Queue",
		Name:               q.Name,
		UID:                q.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	return &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    fmt.Sprintf("%s-%s-", q.Name, strings.ToLower(action)),
			Namespace:       namespace,
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Action:       action,
		TargetObject: ref.DeepCopy(),
	}
}

// getQueues fetches every named queue before anything is written, so that
// a missing queue fails the whole command and nothing is half-done.
func getQueues(ctx context.Context, c versioned.Interface, names []string) ([]*schedulingv1beta1.Queue, error) {
	out := make([]*schedulingv1beta1.Queue, 0, len(names))
	for _, n := range names {
		q, err := c.SchedulingV1beta1().Queues().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// counts is the number of podgroups of a queue by phase, counted by the
// rule the controllers use.
type counts = rules.PodGroupCounts

func statusCounts(q *schedulingv1beta1.Queue) counts { return rules.FromQueueStatus(q.Status) }

// queueCounts returns podgroup counts per queue. Queues whose status the
// controller maintains (it writes a state) use their status; for the rest
// podgroups are listed once across namespaces — never one request per
// queue. If podgroups cannot be listed (RBAC), status counts are used.
func queueCounts(ctx context.Context, c versioned.Interface, queues []schedulingv1beta1.Queue) map[string]counts {
	out := make(map[string]counts, len(queues))
	needList := false
	for i := range queues {
		q := &queues[i]
		out[q.Name] = statusCounts(q)
		if q.Status.State == "" {
			needList = true
		}
	}
	if !needList {
		return out
	}
	pgs, err := c.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	fromPG := map[string]counts{}
	for i := range pgs.Items {
		pg := &pgs.Items[i]
		queue := pg.Spec.Queue
		if queue == "" {
			queue = keys.DefaultQueue
		}
		cnt := fromPG[queue]
		cnt.Add(pg.Status.Phase)
		fromPG[queue] = cnt
	}
	for i := range queues {
		if queues[i].Status.State == "" {
			out[queues[i].Name] = fromPG[queues[i].Name]
		}
	}
	return out
}

// formatResources prints a resource list sorted by name: "cpu=4,memory=8Gi".
func formatResources(l corev1.ResourceList) string {
	if len(l) == 0 {
		return ""
	}
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := l[corev1.ResourceName(n)]
		parts = append(parts, n+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// dryRunStrategy parses --dry-run, accepting kubectl's values.
func dryRunStrategy(s string) (client, server bool, err error) {
	switch s {
	case "", "none":
		return false, false, nil
	case "client":
		return true, false, nil
	case "server":
		return false, true, nil
	}
	return false, false, util.UsageErrorf("invalid --dry-run %q: use none, client or server", s)
}

// completeDryRun parses --dry-run and, for a dry run, makes the printer say
// so ("queue/x created (dry run)"), as kubectl does.
func completeDryRun(s string, pf *genericclioptions.PrintFlags) (client, server bool, err error) {
	if client, server, err = dryRunStrategy(s); err != nil {
		return false, false, err
	}
	switch {
	case client:
		_ = pf.Complete("%s (dry run)")
	case server:
		_ = pf.Complete("%s (server dry run)")
	}
	return client, server, nil
}

func addDryRunFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "dry-run", "none", `Must be "none", "server", or "client". With client, only print the object that would be sent; with server, submit it as a dry run so the server validates it without persisting it.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

func dryRunOpts(server bool) []string {
	if server {
		return []string{metav1.DryRunAll}
	}
	return nil
}

func refuseRoot(verb string, names []string) error {
	for _, n := range names {
		if n == keys.RootQueue {
			return util.UsageErrorf("cannot %s queue %q: it is the top of the queue hierarchy and is always open", verb, n)
		}
	}
	return nil
}

// outputError explains an -o value the printers of a write command do not know.
func outputError(pf *genericclioptions.PrintFlags) error {
	return util.UsageErrorf("unknown output format %q: use one of %s", *pf.OutputFormat, strings.Join(pf.AllowedFormats(), ", "))
}
