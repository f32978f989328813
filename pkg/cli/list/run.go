package list

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Pointer is a pointer to an API object T (*batchv1alpha1.Job).
type Pointer[T any] interface {
	*T
	Object
}

// Kind is what Run needs of one kind: how to read and watch it (its typed
// client's Get, List and Watch), what to keep, and how to print it.
type Kind[T any, PT Pointer[T], L runtime.Object] struct {
	// Name is the kind in messages ("job"); Plural in "No jobs found".
	Name, Plural string

	Get   chunk.GetFunc[PT]
	List  chunk.ListFunc[L]
	Watch follow.WatchFunc
	// Keep applies the filters the API server cannot (nil keeps all).
	Keep func(PT) bool

	// AsList wraps the items in the kind's list type, which -o json|yaml
	// prints, at the list's resourceVersion rv.
	AsList func(items []T, rv string) runtime.Object
	// Table is the table of the items; WatchTable, when set, the row of
	// one watched change (a kind whose list table costs extra requests
	// keeps them out of the watch loop).
	Table      func(items []T) runtime.Object
	WatchTable func(item PT) runtime.Object

	// Stream prints a table page by page as the pages arrive (see
	// Options.Streams), rather than once the whole list is read: over
	// 200 000 podgroups, holding every object and row took ~640 MiB.
	// Only for a kind whose Table is pure, its rows depending on the
	// items given alone: Table is then called once per page, so a kind
	// whose table costs requests (queue list counts podgroups for queues
	// without a status) would make them again for every page.
	Stream bool
}

// Run is every kind's list: the named objects or those -l selects,
// --chunk-size at a time, kept by k.Keep, printed as -o asks, then with
// --watch every later change from the list's resourceVersion.
func Run[T any, PT Pointer[T], L runtime.Object](ctx context.Context, o *Options, k Kind[T, PT, L]) error {
	if k.Stream && o.Streams() {
		return runPaged(ctx, o, k)
	}
	items, rv, err := Read[T](ctx, o, k.Name, k.Get, k.List)
	if err != nil {
		return err
	}
	if k.Keep != nil {
		items = Keep(items, func(t *T) bool { return k.Keep(PT(t)) })
	}
	none := o.NoneFound("No " + k.Plural + " found")
	if err := o.Print(k.AsList(items, rv), len(items), none, func() runtime.Object { return k.Table(items) }); err != nil {
		return err
	}
	return watchRows(ctx, o, k, rv, none)
}

// watchRows is Run's --watch: every later change from rv, one row each.
func watchRows[T any, PT Pointer[T], L runtime.Object](ctx context.Context, o *Options, k Kind[T, PT, L], rv, none string) error {
	return Follow(ctx, o, rv, k.Watch, k.Keep, func(p PT) error {
		table := func() runtime.Object { return k.Table([]T{*p}) }
		if k.WatchTable != nil {
			table = func() runtime.Object { return k.WatchTable(p) }
		}
		return o.Print(p, 1, none, table)
	})
}

// ValidateNames checks what every list checks of the names given: each
// valid and named once (validate), not with -A (names are per namespace),
// not with -l.
func (o *Options) ValidateNames(kind string, validate func(string) error) error {
	if len(o.Names) == 0 {
		return nil
	}
	if o.AllNamespaces && !o.ClusterScoped {
		return util.UsageErrorf("names cannot be combined with --all-namespaces: %s names are per namespace", kind)
	}
	if o.Selector != "" {
		return util.UsageErrorf("give %s names or --selector, not both", kind)
	}
	return util.ValidateNames(kind, o.Names, validate)
}
