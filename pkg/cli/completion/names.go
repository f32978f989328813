package completion

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Func is a cobra completion function.
type Func = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// Kind is what name completion lists names from: a kind's objects, as
// pkg/cli/kind's Kind makes it, or a set of them such as a NodeSet's pods.
// Errors complete nothing rather than print into the user's shell.
type Kind struct {
	// Namespaced kinds are listed in the namespace of -n (or the kubeconfig's).
	Namespaced bool
	// List lists the objects of ns (empty for a cluster-scoped kind).
	List func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error)
	// Keep, when set, offers only the objects it accepts (a command that
	// can act on some objects only: 'queue open' on Closed queues).
	Keep func(runtime.Object) bool
}

// Where is k offering only the objects keep accepts.
func (k Kind) Where(keep func(runtime.Object) bool) Kind {
	k.Keep = keep
	return k
}

// Names completes the names of k's objects for positional arguments;
// names already on the command line are not offered again.
func (k Kind) Names(f util.Factory) Func { return k.names(f, false) }

// Name is Names for a command that takes one name only.
func (k Kind) Name(f util.Factory) Func { return k.names(f, true) }

// Flag completes a flag's value with the names of k's objects (flags have
// no "already given" arguments to skip).
func (k Kind) Flag(f util.Factory) Func {
	names := k.Names(f)
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names(cmd, nil, toComplete)
	}
}

func (k Kind) names(f util.Factory, single bool) Func {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if single && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns := ""
		if k.Namespaced {
			var err error
			if ns, _, err = f.Namespace(); err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		}
		list, err := k.List(cmd.Context(), f, ns)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			if k.Keep != nil && !k.Keep(o) {
				return nil
			}
			if m, err := meta.Accessor(o); err == nil {
				names = append(names, m.GetName())
			}
			return nil
		})
		return Filter(names, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// Filter keeps the names that start with prefix and are not already given
// on the command line: what a shell offers next.
func Filter(names, given []string, prefix string) []string {
	skip := map[string]bool{}
	for _, g := range given {
		skip[g] = true
	}
	var out []string
	for _, n := range names {
		if !skip[n] && strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
