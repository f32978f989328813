package chunk

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// Pages calls fn with the items of each page list lists with opts, size
// objects per request (0: one request), in order, as the pages arrive:
// for a command that prints a list as it reads it, holding only the pages
// in flight (client-go's pager reads a few ahead). fn may keep or reorder
// the items of its page, which are not used again. Pages returns the
// resourceVersion of the list, from which a watch sees every later
// change: that of the first page, as pager.List gives, since every later
// page is read from the first page's snapshot (its continue token names
// it). If a page fails, the pages before it have been handed to fn.
func Pages[T any, L runtime.Object](ctx context.Context, size int64, opts metav1.ListOptions, list ListFunc[L], fn func(items []T) error) (string, error) {
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		page, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		acc, err := meta.ListAccessor(page)
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		// The pager hands EachListItem's callback items, not pages: as
		// the one item of a list carrying its continue token, a page
		// reaches the callback whole, and the pager still does the paging
		// and the reading ahead.
		return &metainternalversion.List{
			ListMeta: metav1.ListMeta{ResourceVersion: acc.GetResourceVersion(), Continue: acc.GetContinue()},
			Items:    []runtime.Object{page},
		}, nil
	})
	p.PageSize = size
	rv, first := "", true
	err := p.EachListItem(ctx, opts, func(page runtime.Object) error {
		if first {
			acc, err := meta.ListAccessor(page)
			if err != nil {
				return fmt.Errorf("list: %w", err)
			}
			rv, first = acc.GetResourceVersion(), false
		}
		ptr, err := meta.GetItemsPtr(page)
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		items, ok := ptr.(*[]T)
		if !ok {
			return fmt.Errorf("list: unexpected items %T", ptr)
		}
		return fn(*items)
	})
	return rv, err
}
