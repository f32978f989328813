// Package kind is the one description of a resource kind that the
// mechanisms every kind shares take: list (pkg/cli/list), create -f and
// delete (pkg/cli/write), --wait (pkg/cli/wait, through write), describe
// (pkg/cli/describe) and name completion. Each kind's package declares its
// one Kind value in its kind.go: group, version and kind, how kubectl names
// its objects and which names are valid, its typed client (get, list,
// watch, create, delete), its table, the body of its description, which of
// its objects completion offers, and the help of its command group. A new
// kind is its own package plus one line in pkg/cli's Commands.
package kind

import (
	"context"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Object is a pointer to an API object T (*flowv1alpha1.JobFlow).
type Object[T any] interface {
	*T
	runtime.Object
	metav1.Object
}

// Client is the part of a kind's typed client in one namespace
// (c.FlowV1alpha1().JobFlows(ns)) that the shared commands use; PT is a
// pointer to the kind's object, L to its list.
type Client[PT any, L runtime.Object] interface {
	Create(ctx context.Context, obj PT, opts metav1.CreateOptions) (PT, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (PT, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// Help is one command's help, as written in the kind's package; Long and
// Example go through kubectl's templates in Command.
type Help struct {
	Short, Long, Example string
}

// Command is the cobra command use with h's help, in kubectl's layout.
func (h Help) Command(use string) *cobra.Command {
	return &cobra.Command{Use: use, Short: h.Short, Long: templates.LongDesc(h.Long), Example: templates.Examples(h.Example)}
}

// Helps are the help of the shared commands of a kind that has them.
type Helps struct {
	Create, List, Describe, Delete Help
}

// Group is the command group of a kind ('kubectl vc queue'): its name,
// aliases and help.
type Group struct {
	Use     string
	Aliases []string
	Help
}

// Command is the group's command, without its commands.
func (g Group) Command() *cobra.Command {
	cmd := g.Help.Command(g.Use)
	cmd.Aliases = g.Aliases
	return cmd
}

// Kind is one resource kind: T its object, PT a pointer to it, L its list.
// A field a kind has no use for stays nil (a kind without 'create -f' has
// no Check).
type Kind[T any, PT Object[T], L runtime.Object] struct {
	// Name is the kind in messages and command lines ("jobflow"); Words
	// in prose ("job flow", plural Words+"s"; empty: Name); Example the
	// arguments of the messages' example command lines: a name
	// ("pipeline"), with -n where the kind's examples name the namespace.
	Name, Words, Example string
	GVK                  schema.GroupVersionKind
	// ClusterScoped kinds have no namespace.
	ClusterScoped bool
	// NameRule checks an object's name (nil: any object name,
	// validation.IsDNS1123Subdomain); CheckName, when set, instead, saying
	// itself what is wrong (a queue's name: rules.ValidateQueueName).
	NameRule  func(string) []string
	CheckName func(string) error
	// Client is the kind's typed client in namespace ns ("" for a
	// cluster-scoped kind).
	Client func(c versioned.Interface, ns string) Client[PT, L]
	// NotServed, when set, says what to do when the server does not serve
	// the kind (a CRD left to Volcano), instead of a bare 404.
	NotServed string

	// Check refuses an object of 'create -f' before anything is written;
	// Reset clears what the server must not be sent (the status).
	Check func(PT) error
	Reset func(PT)

	// Table is the table of 'list', allNamespaces adding NAMESPACE.
	Table func(items []T, allNamespaces bool) *metav1.Table

	// Describe writes the description of obj between its header (name,
	// namespace, labels, ...) and its events.
	Describe func(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, obj PT)
	// Header, when set, is the kind's header instead of the shared one.
	Header func(d *vcprinters.Describer, obj PT)
	// Page, when set, makes for each 'describe' command a description
	// body with flags of its own, in place of Describe: a kind whose
	// description reads more than the API server (a NodeSet's live Slurm
	// node states).
	Page func() Page[PT]
	// Why, for a kind 'kubectl vc why' explains, is its name there
	// ("job"): its description ends with why's verdict on the object.
	Why string

	// Offer, when set, is the completion filter: name completion offers
	// only the objects it accepts.
	Offer func(PT) bool

	// Group is the help of the kind's command group; Help that of its
	// shared commands.
	Group Group
	Help  Helps
}

// Page is the description body of a kind that takes flags of its own in
// 'describe' (Kind.Page makes one per command): AddFlags binds them,
// Validate checks them, Describe writes the body; an error from it fails
// the command with nothing printed. Warnings go to o.ErrOut.
type Page[PT any] interface {
	AddFlags(fs *pflag.FlagSet)
	Validate() error
	Describe(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, obj PT) error
}

// InWords is the kind in prose ("job flow").
func (k *Kind[T, PT, L]) InWords() string {
	if k.Words == "" {
		return k.Name
	}
	return k.Words
}

// Plural is the kind in prose, for several objects ("job flows").
func (k *Kind[T, PT, L]) Plural() string { return k.InWords() + "s" }

// Rule is the kind's NameRule, any object name when it has none.
func (k *Kind[T, PT, L]) Rule() func(string) []string {
	if k.NameRule == nil {
		return validation.IsDNS1123Subdomain
	}
	return k.NameRule
}

// AsList wraps items in the kind's list type L (Items) at resourceVersion
// rv: what -o json|yaml prints of a list.
func (k *Kind[T, PT, L]) AsList(items []T, rv string) runtime.Object {
	var zero L
	l := reflect.New(reflect.TypeOf(zero).Elem())
	l.Elem().FieldByName("Items").Set(reflect.ValueOf(items))
	list := l.Interface().(L)
	if m, err := meta.ListAccessor(list); err == nil {
		m.SetResourceVersion(rv)
	}
	return list
}

// Ref names an object of the kind the way kubectl prints it
// ("jobflow.flow.volcano.sh/pipeline").
func (k *Kind[T, PT, L]) Ref(name string) string {
	return k.Name + "." + k.GVK.Group + "/" + name
}

// ValidateName checks the name of an object of the kind, as a usage error.
func (k *Kind[T, PT, L]) ValidateName(name string) error {
	if k.CheckName != nil {
		if err := k.CheckName(name); err != nil {
			return util.UsageErrorf("%s", err)
		}
		return nil
	}
	if errs := k.Rule()(name); len(errs) > 0 {
		return util.UsageErrorf("invalid %s name %q: %s", k.Name, name, errs[0])
	}
	return nil
}

// APIError turns an error of a request for the kind into one line, naming
// a kind the server does not serve (NotServed) rather than a bare 404.
func (k *Kind[T, PT, L]) APIError(err error) error {
	if k.NotServed == "" {
		return err
	}
	return util.NotServed(err, k.NotServed)
}

// NotFound is the error of a Get of the kind's object name in ns: not
// found (or the kind not served) in one line, the kind in lower case as
// the API server's resources are named ("nodeset").
func (k *Kind[T, PT, L]) NotFound(err error, name, ns string) error {
	if err = k.APIError(err); apierrors.IsNotFound(err) {
		if k.ClusterScoped {
			return util.UsageErrorf("%s %q not found", strings.ToLower(k.Name), name)
		}
		return util.UsageErrorf("%s %q not found in namespace %q", strings.ToLower(k.Name), name, ns)
	}
	return err
}

// Where is k offering, in name completion, only the objects offer accepts
// (a command that acts on some objects only: 'queue open' on the queues
// not Open).
func (k *Kind[T, PT, L]) Where(offer func(PT) bool) *Kind[T, PT, L] {
	c := *k
	c.Offer = offer
	return &c
}

// completion is how completion lists the kind's objects.
func (k *Kind[T, PT, L]) completion() completion.Kind {
	c := completion.Kind{Namespaced: !k.ClusterScoped, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, err
		}
		return k.Client(c, ns).List(ctx, metav1.ListOptions{})
	}}
	if k.Offer != nil {
		c.Keep = func(o runtime.Object) bool { return k.Offer(o.(PT)) }
	}
	return c
}

// NameArgs completes the names of the kind's objects for positional
// arguments; names already on the command line are not offered again.
func (k *Kind[T, PT, L]) NameArgs(f util.Factory) completion.Func { return k.completion().Names(f) }

// NameArg is NameArgs for a command that takes one name only.
func (k *Kind[T, PT, L]) NameArg(f util.Factory) completion.Func { return k.completion().Name(f) }

// NameFlag completes a flag's value with the names of the kind's objects.
func (k *Kind[T, PT, L]) NameFlag(f util.Factory) completion.Func { return k.completion().Flag(f) }
