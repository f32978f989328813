package chunk

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// queues is a stand-in for a typed client's Get and List over a fixed set,
// counting the calls.
type queues struct {
	have        map[string]bool
	gets, lists int
}

func (q *queues) Get(_ context.Context, name string, _ metav1.GetOptions) (*schedulingv1beta1.Queue, error) {
	q.gets++
	if name == "kind-missing" {
		// What the API server answers when the CRD is not installed: a
		// 404 that names no object.
		return nil, apierrors.NewGenericServerResponse(404, "GET", schema.GroupResource{}, "", "the server could not find the requested resource", 0, false)
	}
	if !q.have[name] {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "scheduling.volcano.sh", Resource: "queues"}, name)
	}
	return &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

func (q *queues) List(_ context.Context, _ metav1.ListOptions) (*schedulingv1beta1.QueueList, error) {
	q.lists++
	l := &schedulingv1beta1.QueueList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	for n := range q.have {
		l.Items = append(l.Items, schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return l, nil
}

var errMissing = errors.New("missing")

func notFound(n string) error { return fmt.Errorf("%w: %s", errMissing, n) }

func names(items []schedulingv1beta1.Queue) []string {
	out := []string{}
	for _, q := range items {
		out = append(out, q.Name)
	}
	return out
}

func TestNamed(t *testing.T) {
	ctx := context.Background()
	for _, forWatch := range []bool{false, true} {
		q := &queues{have: map[string]bool{"a": true, "b": true, "c": true}}
		items, rv, err := Named[schedulingv1beta1.Queue](ctx, []string{"c", "a"}, forWatch, 0, metav1.ListOptions{}, q.Get, q.List, notFound)
		if err != nil {
			t.Fatalf("watch=%v: %v", forWatch, err)
		}
		if got := fmt.Sprint(names(items)); got != "[c a]" {
			t.Errorf("watch=%v: %s, want [c a] (the order given)", forWatch, got)
		}
		// A Get gives no resourceVersion to watch from: a watch needs the list.
		if forWatch && (rv != "42" || q.lists != 1 || q.gets != 0) {
			t.Errorf("watch: rv %q, %d lists, %d gets; want 42 from one list", rv, q.lists, q.gets)
		}
		if !forWatch && (rv != "" || q.lists != 0 || q.gets != 2) {
			t.Errorf("no watch: rv %q, %d lists, %d gets; want one get per name", rv, q.lists, q.gets)
		}

		items, _, err = Named[schedulingv1beta1.Queue](ctx, []string{"a", "nope"}, forWatch, 0, metav1.ListOptions{}, q.Get, q.List, notFound)
		if !errors.Is(err, errMissing) || err.Error() != "missing: nope" || items != nil {
			t.Errorf("watch=%v, a missing name: %v, %v; want notFound(nope) and nothing", forWatch, items, err)
		}
	}
	q := &queues{have: map[string]bool{}}
	if _, _, err := Named[schedulingv1beta1.Queue](ctx, []string{"kind-missing"}, false, 0, metav1.ListOptions{}, q.Get, q.List, notFound); errors.Is(err, errMissing) || !apierrors.IsNotFound(err) {
		t.Errorf("a 404 for the resource: %v; want the API error itself, not notFound", err)
	}
}

func TestSortByName(t *testing.T) {
	items := []schedulingv1beta1.PodGroup{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "z"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "b"}},
	}
	SortByName(items)
	got := ""
	for _, pg := range items {
		got += pg.Namespace + "/" + pg.Name + " "
	}
	if got != "a/b a/z b/a " {
		t.Errorf("sorted: %q, want namespace then name", got)
	}
}

func TestReadWithoutNames(t *testing.T) {
	q := &queues{have: map[string]bool{"c": true, "a": true, "b": true}}
	items, rv, err := Read[schedulingv1beta1.Queue](context.Background(), nil, false, 0, metav1.ListOptions{}, q.Get, q.List, notFound)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(names(items)); got != "[a b c]" || rv != "42" || q.lists != 1 || q.gets != 0 {
		t.Errorf("no names: %s, rv %q, %d lists, %d gets; want every queue sorted, rv 42, from one list", got, rv, q.lists, q.gets)
	}
}
