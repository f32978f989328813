package util

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// DefaultWaitTimeout bounds --wait when --timeout is not given, for every kind.
const DefaultWaitTimeout = 5 * time.Minute

// Namespace returns -n or the kubeconfig's namespace, with the one message
// every command gives when the kubeconfig cannot be read.
func Namespace(f Factory) (string, error) {
	ns, _, err := NamespaceGiven(f)
	return ns, err
}

// NamespaceGiven is Namespace that also says whether -n was given.
func NamespaceGiven(f Factory) (string, bool, error) {
	ns, given, err := f.Namespace()
	if err != nil {
		return "", false, UsageErrorf("cannot read the namespace from the kubeconfig: %s", Message(err))
	}
	return ns, given, nil
}

// ListNamespace is Namespace for a command with -A: all namespaces when all is set.
func ListNamespace(f Factory, all bool) (string, error) {
	ns, err := Namespace(f)
	if err != nil || !all {
		return ns, err
	}
	return metav1.NamespaceAll, nil
}

// AddDryRunFlag adds --dry-run with kubectl's values (none, client,
// server) and kubectl's bare --dry-run meaning client. kubectl's
// cmdutil.AddDryRunFlag is not used: its help text differs from ours.
func AddDryRunFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "dry-run", "none", `Must be "none", "server", or "client". With client, only print the object that would be sent; with server, submit it as a dry run so the server validates it without persisting it.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

// DryRunStrategy parses --dry-run, accepting kubectl's values.
func DryRunStrategy(s string) (client, server bool, err error) {
	switch s {
	case "", "none":
		return false, false, nil
	case "client":
		return true, false, nil
	case "server":
		return false, true, nil
	}
	return false, false, UsageErrorf("invalid --dry-run %q: use none, client or server", s)
}

// CompleteDryRun parses --dry-run and, for a dry run, makes the printer
// say so ("queue/x created (dry run)"), as kubectl does.
func CompleteDryRun(s string, pf *genericclioptions.PrintFlags) (client, server bool, err error) {
	if client, server, err = DryRunStrategy(s); err != nil {
		return false, false, err
	}
	if suffix := DryRunSuffix(client, server); suffix != "" {
		_ = pf.Complete("%s" + suffix)
	}
	return client, server, nil
}

// CompleteWrite is the Complete of a command that writes: it parses
// --dry-run and makes the printer of -o, which says "(dry run)" on a dry run.
func CompleteWrite(dryRun string, pf *genericclioptions.PrintFlags) (p printers.ResourcePrinter, client, server bool, err error) {
	if client, server, err = CompleteDryRun(dryRun, pf); err != nil {
		return nil, false, false, err
	}
	if p, err = pf.ToPrinter(); err != nil {
		return nil, false, false, OutputError(pf)
	}
	return p, client, server, nil
}

// OutputError explains an -o value the printers of a write command do not know.
func OutputError(pf *genericclioptions.PrintFlags) error {
	return UsageErrorf("unknown output format %q: use one of %s", *pf.OutputFormat, strings.Join(pf.AllowedFormats(), ", "))
}

// DryRunOpts is the DryRun field of a request's options.
func DryRunOpts(server bool) []string {
	if server {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// DryRunSuffix is what a dry run adds to "created" or "deleted".
func DryRunSuffix(client, server bool) string {
	switch {
	case client:
		return " (dry run)"
	case server:
		return " (server dry run)"
	}
	return ""
}

// ValidateNames checks each name with validate and refuses a name given
// twice ("queue \"a\" is named twice"), which would act twice on one object.
func ValidateNames(kind string, names []string, validate func(string) error) error {
	seen := map[string]bool{}
	for _, n := range names {
		if err := validate(n); err != nil {
			return err
		}
		if seen[n] {
			return UsageErrorf("%s %q is named twice", kind, n)
		}
		seen[n] = true
	}
	return nil
}

// ValidateWait checks --timeout, and refuses --wait (when wait is set) on
// a dry run, where nothing would happen: what is what a dry run does not
// do ("nothing would change").
func ValidateWait(timeout time.Duration, wait, dryRun bool, what string) error {
	if timeout < 0 {
		return UsageErrorf("invalid --timeout %s: must not be negative", timeout)
	}
	if wait && dryRun {
		return UsageErrorf("--wait cannot be combined with --dry-run: %s", what)
	}
	return nil
}

// AddWaitFlags adds --wait (waitHelp says what it waits for) and
// --timeout, DefaultWaitTimeout by default; timeoutHelp "" says how long
// --wait waits.
func AddWaitFlags(cmd *cobra.Command, wait *bool, timeout *time.Duration, waitHelp, timeoutHelp string) {
	if timeoutHelp == "" {
		timeoutHelp = "How long --wait waits before giving up (0 waits forever)"
	}
	cmd.Flags().BoolVar(wait, "wait", false, waitHelp)
	cmd.Flags().DurationVar(timeout, "timeout", DefaultWaitTimeout, timeoutHelp)
}
