package framework

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Interner lets the objects of the caches share equal small maps: the
// labels and annotations of their metadata and, for the controllers that
// ask for it (ReadsOnlyShared), fields such as a podgroup's minResources.
// Tens of thousands of groups made from a handful of templates carry a
// handful of distinct maps; decoded, each holds its own copy, and at 20 000
// podgroups those copies were half of serve's live heap (docs/benchmarks.md).
//
// Sharing is safe because cached objects are read-only: nothing may modify
// an object it got from a lister or an informer (client-go's rule; every
// write here starts from a DeepCopy, a patch or an apply configuration).
//
// The table is bounded: once it holds internLimit entries it starts again
// empty. Objects keep the maps they were given, so a reset costs only the
// sharing of objects cached after it with those cached before.
type Interner struct {
	mu    sync.Mutex
	maps  map[string]map[string]string
	lists map[string]*corev1.ResourceList
}

// internLimit bounds each table of an Interner.
const internLimit = 4096

// NewInterner returns an empty Interner.
func NewInterner() *Interner {
	return &Interner{maps: map[string]map[string]string{}, lists: map[string]*corev1.ResourceList{}}
}

// StringMap returns a map equal to m, shared with every other caller that
// passed an equal one. An empty map comes back as it is.
func (in *Interner) StringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	key := mapKey(m, func(v string) string { return v })
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.maps[key]; ok {
		return shared
	}
	if len(in.maps) >= internLimit {
		clear(in.maps)
	}
	in.maps[key] = m
	return m
}

// ResourceList returns a pointer to a list equal to *l (same names, equal
// quantities: a Quantity prints, and serialises, in canonical form), shared with every other caller that passed an
// equal one. nil and empty lists come back as they are.
func (in *Interner) ResourceList(l *corev1.ResourceList) *corev1.ResourceList {
	if l == nil || len(*l) == 0 {
		return l
	}
	key := mapKey(*l, func(q resource.Quantity) string { return q.String() })
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.lists[key]; ok {
		return shared
	}
	if len(in.lists) >= internLimit {
		clear(in.lists)
	}
	in.lists[key] = l
	return l
}

// mapKey is a canonical text of a map: its entries sorted by key, each
// name and value preceded by its length, so that no two different maps
// have the same text whatever bytes their strings hold.
func mapKey[K ~string, V any](m map[K]V, text func(V) string) string {
	names := make([]K, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		v := text(m[k])
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(string(k))
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	return b.String()
}
