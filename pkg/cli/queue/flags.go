package queue

import (
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

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
