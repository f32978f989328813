package write

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/manifest"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// CreateFromFile is 'create -f FILE|-' for one kind: every object of the
// file is read and checked before the first is created (a file holding
// another kind, a misspelt field or a refused object writes nothing);
// they are then created in the file's order, and the first the server
// refuses ends the command, saying which were created before it.
type CreateFromFile[T any, PT kind.Object[T], L runtime.Object] struct {
	Write    Options
	Kind     *kind.Kind[T, PT, L]
	Filename string

	objs []PT
}

// NewCreateCmd is k's 'create -f FILE', with k.Help.Create.
func NewCreateCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCreateFromFile(k, f, streams)
	cmd := k.Help.Create.Command("create -f FILE")
	cmd.RunE = util.RunE(o)
	o.AddFlags(cmd)
	return cmd
}

// NewCreateFromFile returns the options of k's 'create -f'.
func NewCreateFromFile[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *CreateFromFile[T, PT, L] {
	o := &CreateFromFile[T, PT, L]{Write: NewOptions(f, streams, "created"), Kind: k}
	o.Write.Offline = true
	return o
}

// AddFlags adds -f/--filename (and vcctl's --file, the same flag), -o and
// --dry-run.
func (o *CreateFromFile[T, PT, L]) AddFlags(cmd *cobra.Command) {
	o.Write.AddFlags(cmd)
	help := fmt.Sprintf("File holding the %s(s), YAML or JSON, several separated by ---; - reads standard input", o.Kind.GVK.Kind)
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", help)
	cmd.Flags().StringVar(&o.Filename, "file", "", help+" (vcctl's name for -f)")
	_ = cmd.Flags().MarkHidden("file")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// Complete refuses positional arguments (the file names the objects) and
// resolves the namespace, dry-run mode, printer and client.
func (o *CreateFromFile[T, PT, L]) Complete(args []string) error {
	if len(args) > 0 {
		return util.UsageErrorf("the file names the %s(s): give -f FILE, not %s", o.Kind.Name, strings.Join(args, " "))
	}
	return o.Write.Complete()
}

// Validate reads and checks every object of the file.
func (o *CreateFromFile[T, PT, L]) Validate() error {
	if o.Filename == "" {
		return util.UsageErrorf("give the file holding the %s(s), e.g. 'kubectl vc %s create -f %s.yaml' (-f - reads standard input)", o.Kind.Name, o.Kind.Name, o.Kind.Name)
	}
	docs, err := manifest.Read(o.Write.In, o.Filename)
	if err != nil {
		return err
	}
	o.objs = nil
	seen := map[string]string{}
	for i, doc := range docs {
		where := manifest.Where(o.Filename, i, len(docs))
		obj := PT(new(T))
		if err := manifest.Decode(where, doc, o.Kind.GVK, obj); err != nil {
			return err
		}
		if err := manifest.Prepare(obj, o.Kind.Name, where, o.Write.Namespace, o.Write.NamespaceGiven, o.Kind.Rule()); err != nil {
			return err
		}
		if o.Kind.Reset != nil {
			o.Kind.Reset(obj)
		}
		if obj.GetName() != "" {
			key := obj.GetNamespace() + "/" + obj.GetName()
			if prev, ok := seen[key]; ok {
				return util.UsageErrorf("%s %q is in %s and in %s: give each once", o.Kind.Name, obj.GetName(), prev, where)
			}
			seen[key] = where
		}
		if o.Kind.Check != nil {
			if err := o.Kind.Check(obj); err != nil {
				return util.UsageErrorf("%s: %s", where, util.Message(err))
			}
		}
		o.objs = append(o.objs, obj)
	}
	return nil
}

// Run creates the objects in order (a client dry run prints them and
// sends nothing), printing each as it is created.
func (o *CreateFromFile[T, PT, L]) Run(ctx context.Context) error {
	var created []string
	for _, obj := range o.objs {
		if o.Write.DryClient {
			if err := o.Write.Print(obj); err != nil {
				return err
			}
			continue
		}
		out, err := o.Kind.Client(o.Write.Client, obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{DryRun: o.Write.ServerDryRun()})
		if err != nil {
			return o.refused(obj, err, created)
		}
		created = append(created, o.Kind.Ref(out.GetName()))
		if err := o.Write.Print(out); err != nil {
			return err
		}
	}
	return nil
}

// refused is the one line of a create the server refused: what, why,
// and what was created before it.
func (o *CreateFromFile[T, PT, L]) refused(obj PT, err error, created []string) error {
	var msg string
	switch {
	case apierrors.IsAlreadyExists(err):
		msg = fmt.Sprintf("%s %q already exists in namespace %q", o.Kind.Name, obj.GetName(), obj.GetNamespace())
	case o.Kind.NotServed != "":
		msg = util.Message(o.Kind.APIError(err))
	default:
		msg = fmt.Sprintf("create %s %q: %s", o.Kind.Name, obj.GetName()+obj.GetGenerateName(), util.Message(err))
	}
	if len(o.objs) > 1 {
		if len(created) == 0 {
			msg += "; nothing was created"
		} else {
			msg += "; created before it: " + strings.Join(created, ", ")
		}
	}
	return util.UsageErrorf("%s", msg)
}
