package evictions

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DescribeLast is how many evictions a describe page shows of each kind.
const DescribeLast = 5

// Describe writes, for the describe pages of queues and podgroups, the
// last evictions the object suffered and those it caused (as inferred):
// the evictions of namespace ns ("" all) that suffered and caused select.
// What cannot be read is said in place.
func Describe(ctx context.Context, d *vcprinters.Describer, kube kubernetes.Interface, vc versioned.Interface, ns string,
	suffered, caused func(*infer.Eviction) bool) {
	// The sections above keep their own column widths (a member pod
	// table is not widened to these labels).
	d.Flush()
	r := Reader{Kube: kube, VC: vc, ChunkSize: 500}
	in, _, err := r.Read(ctx, ns)
	if err != nil {
		d.CannotList(0, "Evictions Suffered", err)
		d.CannotList(0, "Evictions Caused", err)
		return
	}
	all := infer.Evictions(in)
	var s, c []string
	for i := range all {
		ev := &all[i]
		if suffered(ev) {
			s = append(s, row(ev, ev.Describe()))
		}
		if ev.For != nil && caused(ev) {
			c = append(c, row(ev, "pod "+ev.For.Namespace+"/"+ev.For.Pod+" [inferred]"))
		}
	}
	d.Table(0, "Evictions Suffered", "Time\tAction\tVictim\tNode\tFor", last(s))
	d.Table(0, "Evictions Caused", "Time\tAction\tVictim\tNode\tFor", last(c))
	if len(in.Unreadable) > 0 {
		d.Line(1, "Note", fmt.Sprintf("could not read %d source(s) of the preemptors' records (%s): a preemptor there is not named", len(in.Unreadable), in.Unreadable[0]))
	}
}

func row(ev *infer.Eviction, forWhom string) string {
	victim := ev.Victim
	if victim == "" {
		victim = "<expired>"
	} else {
		victim = ev.Namespace + "/" + victim
	}
	node := ev.Node
	if node == "" {
		node = "<unknown>"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", ev.Time.UTC().Format(time.RFC3339), ev.Action, victim, node, forWhom)
}

func last(rows []string) []string {
	if len(rows) > DescribeLast {
		return rows[len(rows)-DescribeLast:]
	}
	return rows
}
