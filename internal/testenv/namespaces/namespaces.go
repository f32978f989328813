// Package namespaces gives a test a namespace of its own run, and removes
// what the test put in it afterwards.
//
// Suites at the API-server level run no kube-controller-manager, so a
// deleted namespace stays Terminating for good and nothing in it goes with
// it: a second run of the same test in one process (go test -count=N) could
// not create it again. Each run therefore gets its own name, and the
// objects are deleted one by one before the namespace.
package namespaces

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// runs counts, per name, the namespaces made in this process.
var runs struct {
	sync.Mutex
	n map[string]int
}

// RunName is name for the first run of a test in this process (the name
// the docs show), then name-r2, name-r3 and so on.
func RunName(name string) string {
	runs.Lock()
	defer runs.Unlock()
	if runs.n == nil {
		runs.n = map[string]int{}
	}
	runs.n[name]++
	if n := runs.n[name]; n > 1 {
		return fmt.Sprintf("%s-r%d", name, n)
	}
	return name
}

// PerRun creates the namespace RunName(name) for the test and returns its
// name; see Create.
func PerRun(t testing.TB, kube kubernetes.Interface, vc versioned.Interface, name string) string {
	t.Helper()
	name = RunName(name)
	Create(t, kube, vc, name)
	return name
}

// Create creates the namespace name and, when the test ends, deletes what
// the tests write in namespaces (pods with no grace period, as no kubelet
// acknowledges them; podgroups, Volcano Jobs, Commands, NodeSets, JobFlows,
// JobTemplates, events), then the namespace. A kind whose CRD is not
// installed has nothing to delete.
func Create(t testing.TB, kube kubernetes.Interface, vc versioned.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		all, del := metav1.ListOptions{}, metav1.DeleteOptions{}
		check := func(what string, err error) {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup of namespace %s: %s: %v", name, what, err)
			}
		}
		check("pods", kube.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, all))
		check("podgroups", vc.SchedulingV1beta1().PodGroups(name).DeleteCollection(ctx, del, all))
		check("jobs", vc.BatchV1alpha1().Jobs(name).DeleteCollection(ctx, del, all))
		check("Commands", vc.BusV1alpha1().Commands(name).DeleteCollection(ctx, del, all))
		check("nodesets", vc.SlinkyV1beta1().NodeSets(name).DeleteCollection(ctx, del, all))
		check("jobflows", vc.FlowV1alpha1().JobFlows(name).DeleteCollection(ctx, del, all))
		check("jobtemplates", vc.FlowV1alpha1().JobTemplates(name).DeleteCollection(ctx, del, all))
		check("events", kube.CoreV1().Events(name).DeleteCollection(ctx, del, all))
		check("namespace", kube.CoreV1().Namespaces().Delete(ctx, name, del))
	})
}
