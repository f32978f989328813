package chunk

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestPagesHandsOverWholePages: fn sees each page the server answered,
// whole and in order; size 0 is one page.
func TestPagesHandsOverWholePages(t *testing.T) {
	for _, c := range []struct {
		size  int64
		pages []int
	}{{10, []int{10, 10, 5}}, {0, []int{25}}} {
		p := &pagedQueues{n: 25}
		var pages []int
		var last string
		_, err := Pages[schedulingv1beta1.Queue](context.Background(), c.size, metav1.ListOptions{}, p.List, func(items []schedulingv1beta1.Queue) error {
			pages = append(pages, len(items))
			last = items[len(items)-1].Name
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pages, c.pages) || last != "q-024" || p.requests != len(c.pages) {
			t.Errorf("size %d: pages of %v ending with %s in %d requests, want %v ending with q-024", c.size, pages, last, p.requests, c.pages)
		}
	}
}
