// Package doctor implements 'kubectl vc doctor': checks of what kubectl-vc
// relies on in a cluster, each reported as OK, WARN or FAIL with what to do.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queueline"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Status is the verdict of one finding.
type Status string

const (
	OK   Status = "OK"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// Finding is one line of the report.
type Finding struct {
	// Check names the check: crds, admission, controllers, commands,
	// queues, nodesets, flow, rbac, metrics.
	Check   string `json:"check"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	// Fix says what to do; empty when there is nothing to do.
	Fix string `json:"fix,omitempty"`
	// Objects are all the objects the finding is about (the text line
	// names only the first few), as namespace/name or name.
	Objects []string `json:"objects,omitempty"`
}

// Report is what -o json|yaml prints.
type Report struct {
	Checks  []Finding `json:"checks"`
	Summary Summary   `json:"summary"`
}

// Summary counts the findings by status.
type Summary struct {
	OK   int `json:"ok"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
}

// Options holds the flags and clients of 'doctor'.
type Options struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Output string
	// StuckAfter is how long a Command may wait before it counts as one
	// nobody acts on.
	StuckAfter time.Duration
	// ControllersNamespace is where serve's and Volcano's controllers keep
	// their leader-election Leases and Deployments.
	ControllersNamespace string
	// CommandNamespace is where queue open/close write their Commands
	// (for the RBAC check).
	CommandNamespace string
	// Line names the scheduler configuration the topology check reads.
	Line queueline.ConfigFlags

	kube  kubernetes.Interface
	vc    versioned.Interface
	crds  apiextensionsclient.Interface
	now   func() time.Time
	found []Finding
}

// NewCmd returns the 'doctor' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check what kubectl vc relies on in the cluster",
		Long: templates.LongDesc(`
			Check the cluster for what kubectl vc relies on, and print one line per finding:
			OK, WARN or FAIL, with what to do.

			* crds: the Volcano and Slinky CRDs are installed, established, and serve the
			  versions this kubectl-vc uses.
			* admission: the ValidatingAdmissionPolicy API is served and the queue lifecycle
			  policies and bindings of 'kubectl vc install --policies' are present, as this
			  kubectl-vc installs them (not from another version, not edited).
			* admission-index: admission costs the same at any number of queues: no binding
			  goes through every Queue, the queue indexes exist and agree with the queues,
			  and serve's queueindex controller has every queue in them; in index mode, that
			  the queue webhook vc-queue-hierarchy exists and has a serve to call (its Service
			  with a ready endpoint, or the URL it names), and no policy or index it replaced
			  is left behind.
			* controllers: who acts on Commands, seen from leader-election Leases and
			  Deployments in --controllers-namespace: serve (Lease kubectl-vc-serve,
			  Deployment kubectl-vc-serve), Volcano's controllers (Lease
			  vc-controller-manager, Deployment volcano-controllers), both (a conflict:
			  FAIL) or nobody.
			* commands: a Command waiting longer than --stuck-after is one nobody acts on
			  (FAIL).
			* queues: queues in state Unknown, and Closing queues with what holds them.
			* topology: where HyperNodes exist, the defects of their tree (two parents or
			  a cycle: FAIL, Volcano's scheduler then schedules no job with a network-topology
			  constraint; a member that matches nothing, a tier not above its member's: WARN)
			  and that the scheduler's configuration (--scheduler-config) enables the
			  network-topology-aware plugin, without which hard mode is not enforced (WARN).
			* rbac: what you may do of what kubectl vc does (SelfSubjectAccessReview).
			* metrics: where serve runs in --controllers-namespace, that a scraper can read its
			  HTTPS metrics: serve may review tokens and access, the ClusterRole
			  kubectl-vc-metrics-reader grants get on /metrics, someone is bound to it and
			  allowed, and the endpoint refuses a request without a token.

			The exit code is 1 when a check FAILs, for scripts; -o json gives the report
			to machines. A check that cannot read what it needs (RBAC) says so as WARN.`),
		Example: templates.Examples(`
			# Check the cluster of the current context
			kubectl vc doctor

			# In a script: fail the job when something is broken, keep the report
			kubectl vc doctor -o json > doctor.json`),
		Args: cobra.NoArgs,
		RunE: util.RunENoArgs(o),
	}
	util.AddOutputFlag(cmd, &o.Output, "json", "yaml")
	cmd.Flags().DurationVar(&o.StuckAfter, "stuck-after", time.Minute, "How long a Command may wait before it counts as stuck")
	cmd.Flags().StringVar(&o.ControllersNamespace, "controllers-namespace", keys.VolcanoNamespace, "Namespace of the controllers' Leases and Deployments")
	cmd.Flags().StringVar(&o.CommandNamespace, "command-namespace", metav1.NamespaceDefault, "Namespace queue open and close write Commands to (checked for RBAC)")
	o.Line.AddFlags(cmd)
	return cmd
}

// Complete resolves the clients.
func (o *Options) Complete() error {
	var err error
	if o.vc, o.kube, err = util.Clients(o.Factory); err != nil {
		return err
	}
	cfg, err := o.Factory.RESTConfig()
	if err != nil {
		return err
	}
	if o.crds, err = apiextensionsclient.NewForConfig(cfg); err != nil {
		return err
	}
	if o.now == nil {
		o.now = time.Now
	}
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if err := util.ValidateOutput(o.Output, "json", "yaml"); err != nil {
		return err
	}
	if o.StuckAfter <= 0 {
		return util.UsageErrorf("--stuck-after must be positive, got %s", o.StuckAfter)
	}
	if o.ControllersNamespace == "" || o.CommandNamespace == "" {
		return util.UsageErrorf("--controllers-namespace and --command-namespace must not be empty")
	}
	return o.Line.Validate()
}

// Run runs every check and prints the report. An unreachable cluster is
// an error of its own (no report); any FAIL makes the command fail after
// the report is printed.
func (o *Options) Run(ctx context.Context) error {
	if _, err := o.kube.Discovery().ServerVersion(); err != nil {
		return err
	}
	o.found = nil
	o.checkCRDs(ctx)
	o.checkAdmission(ctx)
	o.checkAdmissionIndex(ctx)
	o.checkCommands(ctx)
	o.checkQueues(ctx)
	o.checkNodeSets(ctx)
	o.checkFlowCRDs(ctx)
	o.checkTopology(ctx)
	o.checkRBAC(ctx)
	o.checkMetrics(ctx)

	r := Report{Checks: o.found}
	for _, f := range o.found {
		switch f.Status {
		case OK:
			r.Summary.OK++
		case Warn:
			r.Summary.Warn++
		case Fail:
			r.Summary.Fail++
		}
	}
	if !vcprinters.WriteData(o.Out, o.Output, r) {
		printText(o.Out, r)
	}
	if r.Summary.Fail > 0 {
		return fmt.Errorf("%d of %d checks failed", r.Summary.Fail, len(r.Checks))
	}
	return nil
}

// printText writes one line per finding: status, check, message and fix.
func printText(w io.Writer, r Report) {
	for _, f := range r.Checks {
		line := f.Message
		if f.Fix != "" {
			line += "; to fix: " + f.Fix
		}
		fmt.Fprintf(w, "%-4s  %-11s  %s\n", f.Status, f.Check, line)
	}
	fmt.Fprintf(w, "%d OK, %d WARN, %d FAIL\n", r.Summary.OK, r.Summary.Warn, r.Summary.Fail)
}

func (o *Options) add(check string, s Status, msg, fix string, objects ...string) {
	o.found = append(o.found, Finding{Check: check, Status: s, Message: msg, Fix: fix, Objects: objects})
}

// cannot reports a check that could not read what it needs.
func (o *Options) cannot(check, what string, err error) {
	o.add(check, Warn, fmt.Sprintf("cannot check %s: %s", what, util.Message(err)), "")
}

// some names the first few of a list, and how many more there are.
func some(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}
