package list

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Rows is how a list prints a kind's objects beyond what its Kind says:
// what to keep, and the table.
type Rows[T any, PT kind.Object[T]] struct {
	// Keep applies the filters the API server cannot (nil keeps all).
	Keep func(PT) bool

	// Table is the table of the items (nil: the Kind's Table, with
	// NAMESPACE on -A); WatchTable, when set, the row of
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

// source is what Run reads of a kind: its typed client in the list's
// namespace, its names in messages and its list type.
type source[T any, PT kind.Object[T], L runtime.Object] struct {
	k *kind.Kind[T, PT, L]
	c kind.Client[PT, L]
	Rows[T, PT]
}

// Run is every kind's list: the named objects or those -l selects,
// --chunk-size at a time, kept by r.Keep, printed as -o asks, then with
// --watch every later change from the list's resourceVersion.
func Run[T any, PT kind.Object[T], L runtime.Object](ctx context.Context, o *Options, k *kind.Kind[T, PT, L], r Rows[T, PT]) error {
	if r.Table == nil {
		r.Table = func(items []T) runtime.Object { return k.Table(items, o.AllNamespaces) }
	}
	s := source[T, PT, L]{k: k, c: k.Client(o.Client, o.Namespace), Rows: r}
	if r.Stream && o.Streams() {
		return runPaged(ctx, o, s)
	}
	items, rv, err := Read[T](ctx, o, k.Name, s.c.Get, s.c.List)
	if err != nil {
		return err
	}
	if r.Keep != nil {
		items = Keep(items, func(t *T) bool { return r.Keep(PT(t)) })
	}
	none := o.NoneFound("No " + k.Plural() + " found")
	if err := o.Print(k.AsList(items, rv), len(items), none, func() runtime.Object { return r.Table(items) }); err != nil {
		return err
	}
	return watchRows(ctx, o, s, rv, none)
}

// watchRows is Run's --watch: every later change from rv, one row each.
func watchRows[T any, PT kind.Object[T], L runtime.Object](ctx context.Context, o *Options, s source[T, PT, L], rv, none string) error {
	return Follow(ctx, o, rv, s.c.Watch, s.Keep, func(p PT) error {
		table := func() runtime.Object { return s.Table([]T{*p}) }
		if s.WatchTable != nil {
			table = func() runtime.Object { return s.WatchTable(p) }
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
