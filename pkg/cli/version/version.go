// Package version implements 'kubectl vc version'.
package version

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/kubectl/pkg/util/templates"

	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/version"
)

// Options holds the flags and inputs of 'version'.
type Options struct {
	genericiooptions.IOStreams
	Factory util.Factory

	ClientOnly bool
	Output     string

	// discovery asks the server for its version; nil with --client.
	discovery discovery.ServerVersionInterface
	// clientErr is why no client could be made: reported after the
	// client version, as an unreachable server is.
	clientErr error
}

// Result is what -o json|yaml prints.
type Result struct {
	ClientVersion version.Info `json:"clientVersion"`
	ServerVersion *ServerInfo  `json:"serverVersion,omitempty"`
}

// ServerInfo is the part of the server's version we report.
type ServerInfo struct {
	GitVersion string `json:"gitVersion"`
	Platform   string `json:"platform"`
}

// NewCmd returns the 'version' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server versions",
		Long: templates.LongDesc(`
			Print the version of kubectl-vc and, when the cluster is reachable, of its API server.`),
		Example: templates.Examples(`
			# Client and server versions
			kubectl vc version

			# Only this binary's version, without contacting the cluster
			kubectl vc version --client -o json`),
		Args: cobra.NoArgs,
		RunE: util.RunENoArgs(o),
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "Print only the client version")
	util.AddOutputFlag(cmd, &o.Output, "json", "yaml")
	return cmd
}

// Complete resolves the client that asks the server, unless --client. A
// client that cannot be made does not stop the command: the client
// version is still printed, and Run reports the error after it.
func (o *Options) Complete() error {
	if o.ClientOnly {
		return nil
	}
	kc, err := o.Factory.KubeClient()
	if err != nil {
		o.clientErr = err
		return nil
	}
	o.discovery = kc.Discovery()
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if err := util.ValidateOutput(o.Output, "json", "yaml"); err != nil {
		return err
	}
	return nil
}

// Run prints the versions. An unreachable server is reported on stderr and
// makes the command fail, after the client version has been printed.
func (o *Options) Run(context.Context) error {
	res := Result{ClientVersion: version.Get()}
	serverErr := o.clientErr
	if o.discovery != nil {
		info, err := o.discovery.ServerVersion()
		if err == nil {
			res.ServerVersion = &ServerInfo{GitVersion: info.GitVersion, Platform: info.Platform}
		}
		serverErr = err
	}
	if !vcprinters.WriteData(o.Out, o.Output, res) {
		fmt.Fprintf(o.Out, "Client Version: %s\n", res.ClientVersion.GitVersion)
		if res.ServerVersion != nil {
			fmt.Fprintf(o.Out, "Server Version: %s\n", res.ServerVersion.GitVersion)
		}
	}
	if serverErr != nil {
		return fmt.Errorf("server version unavailable: %s", util.Message(serverErr))
	}
	return nil
}
