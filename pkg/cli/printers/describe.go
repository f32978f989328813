package printers

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// WriteEvents prints the events of one object the way kubectl describe
// does, oldest first. Events are found by kind and name (in namespace, or
// in every namespace for cluster-scoped objects), then narrowed to uid so
// that events of an earlier object with the same name are left out. A
// failure to list is reported in place: describe should still show the rest.
func WriteEvents(ctx context.Context, w io.Writer, kc kubernetes.Interface, namespace, kind, name string, uid types.UID) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.AsSelector().String()
	evs, err := kc.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		fmt.Fprintf(w, "Events:\t<cannot list: %s>\n", util.Message(err))
		return
	}
	var items []corev1.Event
	for _, e := range evs.Items {
		if e.InvolvedObject.UID == "" || e.InvolvedObject.UID == uid {
			items = append(items, e)
		}
	}
	if len(items) == 0 {
		fmt.Fprintln(w, "Events:\t<none>")
		return
	}
	sort.SliceStable(items, func(i, j int) bool { return lastSeen(&items[i]).Time.Before(lastSeen(&items[j]).Time) })
	fmt.Fprintln(w, "Events:")
	fmt.Fprintln(w, "  Type\tReason\tAge\tFrom\tMessage")
	fmt.Fprintln(w, "  ----\t------\t----\t----\t-------")
	for i := range items {
		e := &items[i]
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", e.Type, e.Reason, Age(lastSeen(e)), from, strings.TrimSpace(e.Message))
	}
}

func lastSeen(e *corev1.Event) (t metav1.Time) {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.CreationTimestamp
}

// MapString prints labels or annotations as k=v,k=v sorted, or <none>.
func MapString(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
