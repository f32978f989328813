package chunk

import (
	"cmp"
	"context"
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GetFunc is one Get call of a typed client, e.g. PodGroups(ns).Get.
type GetFunc[PT any] func(ctx context.Context, name string, opts metav1.GetOptions) (PT, error)

// Object is a pointer to a typed API object T.
type Object[T any] interface {
	*T
	metav1.Object
}

// Named reads the objects called names, in the order given. Unless a watch
// follows, each is read with one Get, whatever the size of the namespace.
// For a watch they are picked from one list (in pages of size, with opts),
// whose resourceVersion is returned for the watch to start from, so that
// it reports only what changed after the rows were printed: a Get gives
// no resourceVersion a watch can start from. Either way a name that does
// not exist is notFound(name), and nothing is returned.
func Named[T any, PT Object[T], L runtime.Object](ctx context.Context, names []string, forWatch bool, size int64,
	opts metav1.ListOptions, get GetFunc[PT], list ListFunc[L], notFound func(name string) error) ([]T, string, error) {
	items := make([]T, 0, len(names))
	if !forWatch {
		for _, n := range names {
			obj, err := get(ctx, n, metav1.GetOptions{})
			if isNotFound(err, n) {
				return nil, "", notFound(n)
			}
			if err != nil {
				return nil, "", err
			}
			items = append(items, *obj)
		}
		return items, "", nil
	}
	all, rv, err := List[T](ctx, size, opts, list)
	if err != nil {
		return nil, "", err
	}
	byName := make(map[string]int, len(all))
	for i := range all {
		byName[PT(&all[i]).GetName()] = i
	}
	for _, n := range names {
		i, ok := byName[n]
		if !ok {
			return nil, "", notFound(n)
		}
		items = append(items, all[i])
	}
	return items, rv, nil
}

// Read is what every 'list [NAME...]' reads: the named objects as Named
// does, or, with no names, every object matching opts, in pages of size,
// sorted by SortByName. It returns them with the resourceVersion a watch
// starts from.
func Read[T any, PT Object[T], L runtime.Object](ctx context.Context, names []string, forWatch bool, size int64,
	opts metav1.ListOptions, get GetFunc[PT], list ListFunc[L], notFound func(name string) error) ([]T, string, error) {
	if len(names) > 0 {
		return Named[T](ctx, names, forWatch, size, opts, get, list, notFound)
	}
	items, rv, err := List[T](ctx, size, opts, list)
	if err != nil {
		return nil, "", err
	}
	SortByName[T, PT](items)
	return items, rv, nil
}

// isNotFound tells whether err says that the object called name does not
// exist. A 404 for the whole resource (its CRD is not installed) names no
// object: callers word that one themselves.
func isNotFound(err error, name string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Name == name
}

// SortByName sorts objects by namespace, then name: the order of every
// list command's rows, as kubectl's.
func SortByName[T any, PT Object[T]](items []T) {
	slices.SortFunc(items, func(a, b T) int {
		pa, pb := PT(&a), PT(&b)
		return cmp.Or(cmp.Compare(pa.GetNamespace(), pb.GetNamespace()), cmp.Compare(pa.GetName(), pb.GetName()))
	})
}
