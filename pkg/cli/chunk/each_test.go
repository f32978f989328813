package chunk

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// pagedQueues serves n queues in pages of the request's limit, with
// continue tokens, and counts the requests.
type pagedQueues struct {
	n, requests int
	limits      []int64
}

func (p *pagedQueues) List(_ context.Context, opts metav1.ListOptions) (*schedulingv1beta1.QueueList, error) {
	p.requests++
	p.limits = append(p.limits, opts.Limit)
	start := 0
	if opts.Continue != "" {
		start, _ = strconv.Atoi(opts.Continue)
	}
	end := p.n
	if opts.Limit > 0 && start+int(opts.Limit) < p.n {
		end = start + int(opts.Limit)
	}
	l := &schedulingv1beta1.QueueList{}
	for i := start; i < end; i++ {
		l.Items = append(l.Items, schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q-%03d", i)}})
	}
	if end < p.n {
		l.Continue = strconv.Itoa(end)
	}
	return l, nil
}

func TestEachVisitsEveryObjectPageByPage(t *testing.T) {
	p := &pagedQueues{n: 25}
	var got []string
	err := Each[schedulingv1beta1.Queue](context.Background(), 10, metav1.ListOptions{}, p.List, func(q *schedulingv1beta1.Queue) error {
		got = append(got, q.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 || got[0] != "q-000" || got[24] != "q-024" {
		t.Fatalf("visited %d queues %v, want q-000..q-024 in order", len(got), got)
	}
	if p.requests != 3 || p.limits[0] != 10 {
		t.Errorf("%d requests with limits %v, want 3 pages of 10", p.requests, p.limits)
	}
}

func TestEachStopsAtTheFirstError(t *testing.T) {
	p := &pagedQueues{n: 25}
	stop := errors.New("enough")
	seen := 0
	err := Each[schedulingv1beta1.Queue](context.Background(), 10, metav1.ListOptions{}, p.List, func(*schedulingv1beta1.Queue) error {
		seen++
		if seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 3 {
		t.Errorf("err %v after %d objects, want %v after 3", err, seen, stop)
	}
}
