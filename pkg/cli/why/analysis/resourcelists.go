package analysis

// How a capacity reason writes its resources: the per-resource arithmetic,
// the --capability value that would fit, and resource lists as flags.

import (
	"fmt"
	"strings"

	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// arith writes the numbers of a capacity reason, per resource.
func arith(us []ResourceUse, used bool) string {
	var parts []string
	for _, u := range us {
		switch {
		case used && u.Inqueue != "":
			parts = append(parts, fmt.Sprintf("%s %s allocated + %s Inqueue + %s needed > %s", u.Resource, u.Allocated, u.Inqueue, u.Needed, u.Limit))
		case used:
			parts = append(parts, fmt.Sprintf("%s %s allocated + %s needed > %s", u.Resource, u.Allocated, u.Needed, u.Limit))
		case u.Needed != "":
			parts = append(parts, fmt.Sprintf("%s %s > %s", u.Resource, u.Needed, u.Limit))
		default:
			parts = append(parts, fmt.Sprintf("%s %s allocated of %s", u.Resource, u.Allocated, u.Limit))
		}
	}
	return strings.Join(parts, "; ")
}

// raised is a --capability value that fits the needs of over.
func raised(list corev1.ResourceList, over []ResourceUse) string {
	out := list.DeepCopy()
	for _, u := range over {
		out[corev1.ResourceName(u.Resource)] = resource.MustParse(u.Needed)
	}
	return flagList(out)
}

// raisedBy is a value of list that fits used + needed of each resource.
func raisedBy(list corev1.ResourceList, us []ResourceUse) string {
	out := list.DeepCopy()
	for _, u := range us {
		v := resource.MustParse(orZero(u.Used))
		v.Add(resource.MustParse(orZero(u.Needed)))
		out[corev1.ResourceName(u.Resource)] = v
	}
	return flagList(out)
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func flagList(l corev1.ResourceList) string {
	var parts []string
	for _, r := range rules.SortedNames(l) {
		q := l[r]
		parts = append(parts, string(r)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// listString writes a resource list as cpu=4,memory=8Gi.
func listString(l corev1.ResourceList) string { return flagList(l) }

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string{}, s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}
