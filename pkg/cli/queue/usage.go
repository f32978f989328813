package queue

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// usageRow is one resource of a queue: what the scheduler has allocated
// (status.allocated) against what the queue deserves and may take at most.
// A nil quantity means the queue does not set it.
type usageRow struct {
	Resource   corev1.ResourceName
	Allocated  *resource.Quantity
	Deserved   *resource.Quantity
	Capability *resource.Quantity
}

// queueUsage lists, sorted by resource name, every resource the queue
// allocates, deserves or caps.
func queueUsage(q *schedulingv1beta1.Queue) []usageRow {
	rows := map[corev1.ResourceName]*usageRow{}
	row := func(r corev1.ResourceName) *usageRow {
		if rows[r] == nil {
			rows[r] = &usageRow{Resource: r}
		}
		return rows[r]
	}
	for r, v := range q.Status.Allocated {
		v := v
		row(r).Allocated = &v
	}
	for r, v := range q.Spec.Deserved {
		v := v
		row(r).Deserved = &v
	}
	for r, v := range q.Spec.Capability {
		v := v
		row(r).Capability = &v
	}
	out := make([]usageRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// share is allocated as a fraction of of; ok is false when of is unset or
// zero (no share to measure against). An unset allocation counts as zero.
func share(allocated, of *resource.Quantity) (float64, bool) {
	if of == nil || of.IsZero() {
		return 0, false
	}
	if allocated == nil {
		return 0, true
	}
	return allocated.AsApproximateFloat64() / of.AsApproximateFloat64(), true
}

// percentOf is allocated as a whole percentage of of, rounded down as
// kubectl top rounds its CPU% and MEMORY% (62.5% is 62%, 99.9% is 99%, so
// 100% means all of it), but computed exactly in decimal: 290m of 1 is 29%,
// where floating point would make it 28. ok is false when of is unset or
// zero; an unset allocation counts as zero.
func percentOf(allocated, of *resource.Quantity) (p int64, ok bool) {
	if of == nil || of.IsZero() {
		return 0, false
	}
	if allocated == nil {
		return 0, true
	}
	a, b := allocated.DeepCopy(), of.DeepCopy()
	num := new(inf.Dec).Mul(a.AsDec(), inf.NewDec(100, 0))
	q := new(inf.Dec).QuoRound(num, b.AsDec(), 0, inf.RoundDown)
	if u := q.UnscaledBig(); u.IsInt64() {
		return u.Int64(), true
	}
	if q.Sign() < 0 {
		return math.MinInt64, true
	}
	return math.MaxInt64, true
}

// percent renders a share as a whole percentage (percentOf), "-" when
// there is none.
func percent(allocated, of *resource.Quantity) string {
	p, ok := percentOf(allocated, of)
	if !ok {
		return "-"
	}
	return strconv.FormatInt(p, 10) + "%"
}

// quantity renders a quantity, "0" when unset for allocated and "-" otherwise.
func quantity(q *resource.Quantity, unset string) string {
	if q == nil {
		return unset
	}
	return q.String()
}

// usageCell renders one resource compactly: "cpu 12/16 (75%)" against the
// deserved share, "cpu 12/- " with no deserved amount.
func usageCell(u usageRow) string {
	s := fmt.Sprintf("%s %s/%s", u.Resource, quantity(u.Allocated, "0"), quantity(u.Deserved, "-"))
	if p := percent(u.Allocated, u.Deserved); p != "-" {
		s += " (" + p + ")"
	}
	return s
}

// usageCompact renders a queue's use of its deserved share in one table
// cell without spaces, as the other resource columns are written:
// "cpu=12/16(75%),pods=3/-". Resources the queue only caps are left out
// (the CAPABILITY column shows them); "<none>" when nothing is allocated
// or deserved.
func usageCompact(rows []usageRow) string {
	var s string
	for _, u := range rows {
		if u.Allocated == nil && u.Deserved == nil {
			continue
		}
		if s != "" {
			s += ","
		}
		s += fmt.Sprintf("%s=%s/%s", u.Resource, quantity(u.Allocated, "0"), quantity(u.Deserved, "-"))
		if p := percent(u.Allocated, u.Deserved); p != "-" {
			s += "(" + p + ")"
		}
	}
	if s == "" {
		return "<none>"
	}
	return s
}
