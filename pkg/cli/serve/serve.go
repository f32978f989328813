// Package serve is the command 'kubectl vc serve': a thin cobra wrapper over
// pkg/controller, whose Options declare, check and complete its flags.
package serve

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"

	// The controllers register themselves with the framework.
	_ "github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/queueindex"
	"github.com/kubectl-vc/kubectl-vc/plugins/queuewebhook"
)

// NewCmd returns the 'serve' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := controller.NewOptions()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Volcano queue (and other) controllers",
		Long: templates.LongDesc(`
			Run, in this process, the controllers that act on Volcano resources: the queue
			controller keeps queue status (state and podgroup counts) and applies the
			open/close Commands that 'queue open' and 'queue close' create.

			Run it instead of Volcano's controller manager, not next to it. In a cluster,
			run it as the Deployment that 'kubectl vc install --serve' applies, with
			--leader-elect: it runs all three controllers. The nodeset controller reaches
			each NodeSet's Slurm through slurmrestd, found as Slinky's operator finds it
			(the NodeSet's Controller, the RestApi naming it, its Service's cluster IP, and
			the JWT key in the Secret the Controller names) only in the namespaces
			--slurm-namespaces names, or at --slurm-rest-url with
			--slurm-jwt-key-file or --slurm-token-file. Outside Slinky it can also run
			Slurm's commands (scontrol, sinfo, squeue) where they and the munge key are
			(--slurm-conf). Where the cluster serves no NodeSets it waits quietly. It stops
			cleanly on SIGTERM or SIGINT.

			With --webhook-bind-address it also answers, on every replica, the admission
			webhook that checks queue writes in the index mode of 'kubectl vc install'
			(a queue within its parent's resources, no cycle of two, no deletion of a
			parent), with the certificate in --webhook-cert-dir.

			Its garbage collector runs at GOGC=50 unless GOGC is set in its environment:
			a lower peak for the caches it fills at start, at no measured cost in time.`),
		Example: templates.Examples(`
			# Run every controller against the current kubeconfig context
			kubectl vc serve

			# Only the queue controller, 4 workers, metrics on :9090
			kubectl vc serve --controllers=queue --workers-queue=4 --metrics-bind-address=:9090

			# On a laptop: metrics over plain HTTP, for anyone who can reach the port
			kubectl vc serve --metrics-secure=false --metrics-bind-address=127.0.0.1:8080

			# Beside Slinky: act on the Slurm of the NodeSets in namespace slurm
			kubectl vc serve --slurm-namespaces=slurm

			# Only the nodeset controller, for a slurmrestd outside Slinky
			kubectl vc serve --controllers=nodeset --slurm-rest-url http://slurm.example:6820 --slurm-jwt-key-file /etc/slurm/jwt_hs256.key

			# Only the nodeset controller, on a Slurm login node, with Slurm's commands
			kubectl vc serve --controllers=nodeset --slurm-conf /etc/slurm/slurm.conf --leader-elect --leader-elect-resource-name=kubectl-vc-serve-nodeset

			# Two replicas, one active: leader election on a Lease
			kubectl vc serve --leader-elect --leader-elect-resource-namespace=volcano-system

			# Answer the queue webhook of 'install --webhook-url https://HOST:9443/validate-queues'
			kubectl vc serve --webhook-bind-address=:9443 --webhook-cert-dir=/etc/kubectl-vc/webhook

			# Ignore Commands (Volcano's QueueCommandSync gate)
			kubectl vc serve --feature-gates=QueueCommandSync=false`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			kubeconfig, err := f.ToRESTConfig()
			if err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return util.UsageErrorf("%s", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c := o.Complete(kubeconfig)
			c.Webhooks = []framework.Webhook{queuewebhook.New()}
			return run(ctx, c, o.Verbosity, streams.ErrOut)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// gcPercent is serve's garbage collection target unless GOGC is set in its
// environment. Nearly all of serve's live heap is its caches, filled in one
// burst at start and long-lived after; at Go's default of 100 the heap may
// grow to twice that before a collection, and that headroom is most of the
// peak. At 50 the peak of a cold start over 1 000 queues and 20 000
// podgroups is 10 MiB lower (87 against 97 MiB) and the time to every
// status right is the same (docs/benchmarks.md); collections are more
// frequent, each as cheap as before.
const gcPercent = 50

// run sets up the process for the manager (its garbage collector, memory
// limit and log verbosity), runs it until ctx is cancelled, and says so
// when it stopped cleanly.
func run(ctx context.Context, c controller.Config, verbosity int32, errOut io.Writer) error {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	setMemoryLimit(ctx) // memlimit.go
	// klog's flags live on a flag set of their own, made here and not at
	// start-up: only serve logs through klog at length.
	var kfs flag.FlagSet
	klog.InitFlags(&kfs)
	if err := kfs.Set("v", strconv.Itoa(int(verbosity))); err != nil {
		return err
	}
	err := controller.Run(ctx, c)
	if err == nil {
		fmt.Fprintln(errOut, "serve: stopped")
	}
	return err
}
