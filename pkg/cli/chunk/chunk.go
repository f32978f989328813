// Package chunk gives every list command kubectl's --chunk-size: lists are
// read in pages of that many objects (client-go's pager), 0 reads them in
// one request.
package chunk

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// DefaultSize is kubectl's default --chunk-size.
const DefaultSize int64 = 500

// AddFlag adds --chunk-size to cmd, stored in size.
func AddFlag(cmd *cobra.Command, size *int64) {
	cmd.Flags().Int64Var(size, "chunk-size", DefaultSize,
		"Read large lists in chunks of this many objects rather than all at once; 0 reads them in one request")
}

// Validate refuses a negative size.
func Validate(size int64) error {
	if size < 0 {
		return util.UsageErrorf("invalid --chunk-size %d: give 0 (one request) or a positive number of objects per request", size)
	}
	return nil
}

// ListFunc is one List call of a typed client, e.g. Queues().List.
type ListFunc[L runtime.Object] func(ctx context.Context, opts metav1.ListOptions) (L, error)

// List reads every object fn lists with opts, size objects per request (0:
// one request), and returns them with the resourceVersion of the list, from
// which a watch sees every later change. T is the item type of fn's list:
// List[schedulingv1beta1.Queue](ctx, size, opts, c.Queues().List).
func List[T any, L runtime.Object](ctx context.Context, size int64, opts metav1.ListOptions, fn ListFunc[L]) ([]T, string, error) {
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return fn(ctx, opts)
	})
	p.PageSize = size
	obj, _, err := p.List(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	acc, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, "", fmt.Errorf("list: %w", err)
	}
	items := []T{}
	err = meta.EachListItem(obj, func(o runtime.Object) error {
		t, ok := any(o).(*T)
		if !ok {
			return fmt.Errorf("list: unexpected item %T", o)
		}
		items = append(items, *t)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return items, acc.GetResourceVersion(), nil
}

// Each calls fn for every object list lists with opts, size objects per
// request (0: one request), page by page: only the pages in flight are
// held (client-go's pager reads a few ahead), never the whole list. For a
// command that reduces a list (counts per queue) rather than prints it:
// over 200 000 podgroups, holding them all took ~650 MiB.
func Each[T any, L runtime.Object](ctx context.Context, size int64, opts metav1.ListOptions, list ListFunc[L], fn func(*T) error) error {
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return list(ctx, opts)
	})
	p.PageSize = size
	return p.EachListItem(ctx, opts, func(o runtime.Object) error {
		t, ok := any(o).(*T)
		if !ok {
			return fmt.Errorf("list: unexpected item %T", o)
		}
		return fn(t)
	})
}
