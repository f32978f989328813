package queue

import (
	"context"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// counts is the number of podgroups of a queue by phase, counted by the
// rule the controllers use.
type counts = rules.PodGroupCounts

func statusCounts(q *schedulingv1beta1.Queue) counts { return rules.FromQueueStatus(q.Status) }

// pageSizes are how many podgroups one count request reads: as Table
// rows and, where Tables cannot be read, as objects.
type pageSizes struct{ rows, objects int64 }

// countPages returns the page sizes of a command's --chunk-size flag: the
// size the user gave for both; when not given, Table rows in one request
// and objects in kubectl's pages. Why rows in one request by default:
// pages are served from etcd and a whole Table from the API server's
// cache (at 10x, 200 000 podgroups: 25-63 s against 4 s, docs/benchmarks.md),
// and the rows are decoded one at a time, so one request holds no more in
// memory than a page.
func countPages(flag *pflag.Flag, size int64) pageSizes {
	if flag != nil && flag.Changed {
		return pageSizes{rows: size, objects: size}
	}
	return pageSizes{rows: 0, objects: chunk.DefaultSize}
}

// queueCounts returns podgroup counts per queue. Queues whose status the
// controller maintains (it writes a state) use their status; for the rest
// podgroups are read once across namespaces — never one request per queue:
// as Tables of their QUEUE and STATUS columns (countFromTables), or as
// objects where that fails. If podgroups cannot be listed (RBAC), status
// counts are used.
func queueCounts(ctx context.Context, c versioned.Interface, queues []schedulingv1beta1.Queue, pages pageSizes) map[string]counts {
	out := make(map[string]counts, len(queues))
	needList := false
	for i := range queues {
		q := &queues[i]
		out[q.Name] = statusCounts(q)
		if !rules.QueueStatusKept(q) {
			needList = true
		}
	}
	if !needList {
		return out
	}
	fromPG, err := countFromTables(ctx, c.SchedulingV1beta1().RESTClient(), pages.rows)
	if err != nil {
		fromPG, err = countFromObjects(ctx, c, pages.objects)
	}
	if err != nil {
		return out
	}
	for i := range queues {
		if !rules.QueueStatusKept(&queues[i]) {
			out[queues[i].Name] = fromPG[queues[i].Name]
		}
	}
	return out
}

// countFromObjects counts every podgroup by queue and phase from a list of
// the objects, page by page: a cluster's podgroups are never all held.
func countFromObjects(ctx context.Context, c versioned.Interface, chunkSize int64) (map[string]counts, error) {
	fromPG := map[string]counts{}
	err := chunk.Each[schedulingv1beta1.PodGroup](ctx, chunkSize, metav1.ListOptions{},
		c.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List, func(pg *schedulingv1beta1.PodGroup) error {
			addCount(fromPG, pg.Spec.Queue, pg.Status.Phase)
			return nil
		})
	return fromPG, err
}

// addCount counts one podgroup of queue in phase; a podgroup without a
// queue is the default queue's, as the controllers count it.
func addCount(m map[string]counts, queue string, phase schedulingv1beta1.PodGroupPhase) {
	queue = rules.QueueOf(queue)
	c := m[queue]
	c.Add(phase)
	m[queue] = c
}
