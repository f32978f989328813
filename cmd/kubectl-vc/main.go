// Command kubectl-vc is the kubectl plugin 'kubectl vc' and a standalone CLI
// for Volcano queues, podgroups and Commands, and Slinky NodeSets.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	// The kubeconfig auth providers client-go does not register by itself
	// (oidc), as krew's plugin guidelines ask: without them a kubeconfig
	// that uses one fails with "no Auth Provider found".
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	// The first garbage collection waits for an 8 MB heap: a short
	// command ends before it (see the package).
	_ "github.com/kubectl-vc/kubectl-vc/cmd/kubectl-vc/internal/firstgc"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cli.Execute(streams, os.Args[1:], cli.Commands()...))
}
