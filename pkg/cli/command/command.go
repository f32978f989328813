// Package command implements 'kubectl vc command': the Commands (requests
// such as OpenQueue and CloseQueue) that controllers have not applied yet.
// The commands that write Commands (queue open|close, job
// suspend|resume|...) share pkg/cli/request.
package command

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Commands returns the commands of the 'command' group (its name, aliases
// and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newListCmd, newDeleteCmd)
}
