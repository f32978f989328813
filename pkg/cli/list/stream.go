package list

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
)

// Streams reports whether the output allows a list to be printed page by
// page (see Rows.Stream): a table (default, wide) or -o name, when no
// names are given. -o json|yaml print one List object, and templates and
// custom-columns apply to the whole list, so they need every item; named
// objects are read one by one and printed in the order given.
func (o *Options) Streams() bool {
	return len(o.Names) == 0 && (o.PrintFlags.HumanReadable() || o.PrintFlags.Format() == "name")
}

// runPaged is Run for a streamed kind: each page, as it arrives, is kept
// by k.Keep, sorted, and printed, so that only the pages in flight are
// held. The header is printed once, by the table printer, which leaves
// it out while the columns stay the same. The rows of a page are sorted
// by namespace and name as Run sorts a whole list; the API server returns
// the pages in the order of its keys, which is that order too, but for a
// namespace another one extends with "-" ("a-b" comes before "a").
//
// If a page fails, the rows printed stay printed and the page's error
// ends the command, as kubectl's paged 'get' does: even an expired
// continue token (410), on which Read's pager.List lists everything again
// in one request, since rows printed cannot be taken back.
func runPaged[T any, PT kind.Object[T], L runtime.Object](ctx context.Context, o *Options, s source[T, PT, L]) error {
	kept := 0
	rv, err := chunk.Pages[T](ctx, o.ChunkSize, metav1.ListOptions{LabelSelector: o.Selector}, s.c.List, func(items []T) error {
		if s.Keep != nil {
			items = Keep(items, func(t *T) bool { return s.Keep(PT(t)) })
		}
		if len(items) == 0 {
			return nil
		}
		kept += len(items)
		chunk.SortByName[T, PT](items)
		// The list is only for -o name, which prints no resourceVersion.
		return o.printRows(s.k.AsList(items, ""), func() runtime.Object { return s.Table(items) })
	})
	if err != nil {
		return err
	}
	none := o.NoneFound("No " + s.k.Plural() + " found")
	// As Print: only a table says so; -o name prints nothing.
	if kept == 0 && !o.Watch && o.PrintFlags.HumanReadable() {
		fmt.Fprintln(o.ErrOut, none)
	}
	return watchRows(ctx, o, s, rv, none)
}
