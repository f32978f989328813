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
	"k8s.io/kubectl/pkg/describe"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// WriteEvents prints the events of one object the way kubectl describe
// does, through kubectl's own describe.DescribeEvents: sorted by kubectl's
// event ordering, and repeated events folded into one line with their
// count and span ("3m (x12 over 10m)"), whether the repetition was recorded
// as count/firstTimestamp/lastTimestamp or as an events.k8s.io series.
// Events are found by kind and name (in namespace, or in every namespace
// for cluster-scoped objects), then narrowed to uid so that events of an
// earlier object with the same name are left out. A failure to list is
// reported in place: describe should still show the rest.
func WriteEvents(ctx context.Context, w io.Writer, kc kubernetes.Interface, namespace, kind, name string, uid types.UID) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.AsSelector().String()
	evs, err := kc.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		fmt.Fprintf(w, "Events:\t<cannot list: %s>\n", util.Message(err))
		return
	}
	mine := &corev1.EventList{}
	for _, e := range evs.Items {
		if e.InvolvedObject.UID == "" || e.InvolvedObject.UID == uid {
			mine.Items = append(mine.Items, e)
		}
	}
	describe.DescribeEvents(mine, describe.NewPrefixWriter(w))
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
