package command

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Operate is the input every command that writes one Command per named
// object shares ('job suspend', 'queue close', ...): the names, -o and
// --dry-run for the Commands written, and --wait and --timeout for the
// objects to get where the action leads. A kind's OperateOptions embeds
// it and keeps its lookups, checks and wait.
type Operate struct {
	write.Options

	Names   []string
	Wait    bool
	Timeout time.Duration
}

// NewOperate returns Operate over f and streams; its printer says
// "created" of each Command written.
func NewOperate(f util.Factory, streams genericiooptions.IOStreams) Operate {
	return Operate{Options: write.NewOptions(f, streams, "created")}
}

// AddWaitFlags adds --wait (waitHelp says what it waits for) and
// --timeout; write.Options' AddFlags adds -o and --dry-run.
func (o *Operate) AddWaitFlags(cmd *cobra.Command, waitHelp string) {
	util.AddWaitFlags(cmd, &o.Wait, &o.Timeout, waitHelp, "")
}

// Complete records the names and resolves the namespace, dry-run mode,
// printer and client (a client dry run still looks the objects up).
func (o *Operate) Complete(args []string) error {
	o.Names = args
	return o.Options.Complete()
}

// ValidateNames checks that at least one object of kind is named ("name
// the queue(s) to close, e.g. 'kubectl vc queue close team-a'", example
// being team-a), each valid (validate) and named once.
func (o *Operate) ValidateNames(kind, verb, example string, validate func(string) error) error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the %s(s) to %s, e.g. 'kubectl vc %s %s %s'", kind, verb, kind, verb, example)
	}
	return util.ValidateNames(kind, o.Names, validate)
}

// ValidateWait checks --timeout and refuses --wait on a dry run, which
// changes nothing to wait for.
func (o *Operate) ValidateWait() error {
	return util.ValidateWait(o.Timeout, o.Wait, o.Dry(), "nothing would change")
}

// Send writes cm, the Command that verb asks of kind's object name, in
// its namespace (nothing on a client dry run; a server dry run on
// --dry-run=server), and prints it; it returns the Command as written.
func (o *Operate) Send(ctx context.Context, cm *busv1alpha1.Command, verb, kind, name string) (*busv1alpha1.Command, error) {
	cm, err := Create(ctx, o.Client, cm, o.DryClient, o.DryServer)
	if err != nil {
		return nil, fmt.Errorf("%s %s %q: %s", verb, kind, name, util.Message(err))
	}
	return cm, o.Print(cm)
}

// Create writes cm in its namespace (nothing on a client dry run, a
// server dry run with dryServer) and returns it as written.
func Create(ctx context.Context, c versioned.Interface, cm *busv1alpha1.Command, dryClient, dryServer bool) (*busv1alpha1.Command, error) {
	if dryClient {
		return cm, nil
	}
	return c.BusV1alpha1().Commands(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{DryRun: util.DryRunOpts(dryServer)})
}
