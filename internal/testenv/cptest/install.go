package cptest

import (
	"bytes"
	"context"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Factory returns the Factory the CLI builds from --kubeconfig for the
// admin context of a kubeconfig written by ControlPlane.WriteKubeconfig.
func Factory(kubeconfig string) util.Factory {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	ctxName := "admin"
	flags.Context = &ctxName
	return util.NewFactory(flags)
}

// Install runs 'kubectl vc install' in-process, as the command does
// (Complete, Validate, Run), with the selection in o against the cluster
// of f, and returns what it printed. Unset Timeout and DryRun take the
// command's defaults.
func Install(ctx context.Context, f util.Factory, o *install.Options) (string, error) {
	var out, errOut bytes.Buffer
	o.IOStreams = genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	o.Factory = f
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	if o.DryRun == "" {
		o.DryRun = "none"
	}
	if err := o.Complete(); err != nil {
		return "", err
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	err := o.Run(ctx)
	return out.String(), err
}
