package flowkind

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// newCreateCmd is 'create -f FILE': write.CreateFromFile over the kind.
func (k *Kind[T, PT, L]) newCreateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := write.NewCreateFromFile(f, streams, write.FileKind[T, PT]{
		Name: k.Name, GVK: k.GVK, Ref: k.Ref,
		NameRule: validation.IsDNS1123Subdomain,
		Check:    k.Check,
		Reset:    k.Reset,
		Create: func(ctx context.Context, c versioned.Interface, obj PT, opts metav1.CreateOptions) (PT, error) {
			return k.Client(c, obj.GetNamespace()).Create(ctx, obj, opts)
		},
		APIError: APIError,
	})
	cmd := command("create -f FILE", k.Help.Create)
	cmd.RunE = util.RunE(o)
	o.AddFlags(cmd)
	return cmd
}
