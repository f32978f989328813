// Package pods reads the pods of a namespace as the suites that play a
// workload's observer need them: the live ones, by name.
package pods

import (
	"context"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Live lists the pods of the namespace that are not being deleted, by
// name; a failed list fails the test.
func Live(t testing.TB, kube kubernetes.Interface, ns string) map[string]*corev1.Pod {
	t.Helper()
	list, err := kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}

// Names is the sorted, comma-separated names of pods, for comparing a set
// of pods with the one a test expects.
func Names(pods map[string]*corev1.Pod) string {
	n := make([]string, 0, len(pods))
	for k := range pods {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ",")
}
