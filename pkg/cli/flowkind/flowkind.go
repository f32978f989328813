// Package flowkind is the command set Volcano's two flow.volcano.sh/v1alpha1
// kinds share: 'kubectl vc jobflow' and 'kubectl vc jobtemplate' each have
// create -f, list, describe and delete, which differ only in the kind they
// send requests for. A Kind describes one of them; its package (pkg/cli/
// jobflow, pkg/cli/jobtemplate) keeps what is its own: its checks, its
// columns, the body of its description and its help.
package flowkind

import (
	"context"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Client is the part of a kind's typed client in one namespace
// (c.FlowV1alpha1().JobFlows(ns)) that the commands use; PT is a pointer
// to the kind's object, L to its list.
type Client[PT any, L runtime.Object] interface {
	Create(ctx context.Context, obj PT, opts metav1.CreateOptions) (PT, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (PT, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// Help is one command's help, as written in the kind's package; Long and
// Example go through kubectl's templates here.
type Help struct {
	Short, Long, Example string
}

// Helps are the help of each of a kind's commands.
type Helps struct {
	Create, List, Describe, Delete Help
}

// Kind is what the commands need of one flow.volcano.sh kind: T is its
// object, PT a pointer to it, L its list.
type Kind[T any, PT write.Object[T], L runtime.Object] struct {
	// Name is the kind in messages and command lines ("jobflow"); Words
	// in prose ("job flow", plural "job flows"); Example a name the
	// messages' examples use ("pipeline").
	Name, Words, Example string
	GVK                  schema.GroupVersionKind
	// Client is the kind's typed client in namespace ns.
	Client func(c versioned.Interface, ns string) Client[PT, L]

	// Check refuses an object of 'create -f' before anything is written;
	// Reset clears what the server must not be sent (the status).
	Check func(PT) error
	Reset func(PT)

	// AsList wraps listed items in the kind's list type at resourceVersion
	// rv (what -o json|yaml prints); Table is the table of 'list',
	// allNamespaces adding NAMESPACE.
	AsList func(items []T, rv string) runtime.Object
	Table  func(items []T, allNamespaces bool) *metav1.Table

	// Describe writes the description of obj between its header (name,
	// namespace, labels, ...) and its events.
	Describe func(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, obj PT)

	Help Helps
}

// Commands returns the kind's commands (the group's name, aliases and help
// are in pkg/cli's groups.go).
func (k *Kind[T, PT, L]) Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		k.newCreateCmd(f, streams),
		k.newListCmd(f, streams),
		k.newDescribeCmd(f, streams),
		k.newDeleteCmd(f, streams),
	}
}

// command is the cobra command of h's help, h's Long and Example in
// kubectl's layout.
func command(use string, h Help) *cobra.Command {
	return &cobra.Command{Use: use, Short: h.Short, Long: templates.LongDesc(h.Long), Example: templates.Examples(h.Example)}
}

// Ref names an object of the kind the way kubectl prints it
// ("jobflow.flow.volcano.sh/pipeline").
func (k *Kind[T, PT, L]) Ref(name string) string {
	return k.Name + "." + k.GVK.Group + "/" + name
}

// ValidateName checks the name of an object of the kind (any object name).
func (k *Kind[T, PT, L]) ValidateName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return util.UsageErrorf("invalid %s name %q: %s", k.Name, name, errs[0])
	}
	return nil
}

// Names lists the kind's objects of a namespace, for name completion.
func (k *Kind[T, PT, L]) Names() completion.Kind {
	return completion.Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, err
		}
		return k.Client(c, ns).List(ctx, metav1.ListOptions{})
	}}
}

// plural is the kind in prose, for several objects ("job flows").
func (k *Kind[T, PT, L]) plural() string { return k.Words + "s" }

// NoFlowKinds says what to do when the server has no flow.volcano.sh
// kinds: they are Volcano's, installed with its jobflow controllers.
const NoFlowKinds = "the server has no Volcano JobFlows and JobTemplates (flow.volcano.sh/v1alpha1): install Volcano with its jobflow controllers, which run them; 'kubectl vc install' leaves these CRDs to Volcano"

// APIError turns an error of a flow.volcano.sh request into one line,
// naming the missing kinds rather than a bare 404.
func APIError(err error) error { return util.NotServed(err, NoFlowKinds) }

// NotFound is the error of a Get of the kind's object name in ns: not
// found (or the kinds not served) in one line.
func (k *Kind[T, PT, L]) NotFound(err error, name, ns string) error {
	if err = APIError(err); apierrors.IsNotFound(err) {
		return util.UsageErrorf("%s %q not found in namespace %q", k.Name, name, ns)
	}
	return err
}
