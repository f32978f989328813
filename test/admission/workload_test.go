package admission

import (
	"context"
	"fmt"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

func TestPodGroupOnlyInOpenQueue(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	for name, state := range map[string]schedulingv1beta1.QueueState{
		"pg-open": schedulingv1beta1.QueueStateOpen, "pg-fresh": "",
		"pg-closed": schedulingv1beta1.QueueStateClosed, "pg-closing": schedulingv1beta1.QueueStateClosing,
		"default": schedulingv1beta1.QueueStateOpen,
	} {
		if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}, state); err != nil {
			t.Fatal(err)
		}
	}
	pgs := c.SchedulingV1beta1().PodGroups("default")
	pg := func(name, queue string) *schedulingv1beta1.PodGroup {
		return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: queue}}
	}
	err := eventually(t, true, func() error {
		_, err := pgs.Create(ctx, pg("in-closed", "pg-closed"), metav1.CreateOptions{})
		return err
	})
	mustDeny(t, err, "queue pg-closed is Closed and accepts no new work: open it (kubectl vc queue open pg-closed) or pick another queue")
	// The index may record the two states in two writes.
	_ = eventually(t, true, func() error {
		_, err := pgs.Create(ctx, pg("in-closing", "pg-closing"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	_, err = pgs.Create(ctx, pg("in-closing", "pg-closing"), metav1.CreateOptions{})
	mustDeny(t, err, "queue pg-closing is Closing and accepts no new work")

	for name, queue := range map[string]string{"in-open": "pg-open", "in-fresh": "pg-fresh", "in-default": ""} {
		_, err = pgs.Create(ctx, pg(name, queue), metav1.CreateOptions{})
		mustAdmit(t, err)
	}

	// An empty spec.queue means the default queue, so closing default closes it too.
	if err := setState(ctx, c, "default", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	err = eventually(t, true, func() error {
		_, err := pgs.Create(ctx, pg("in-default-closed", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDeny(t, err, "queue default is Closed and accepts no new work")
	if err := setState(ctx, c, "default", schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}

	// Reopening takes effect as soon as the server has seen the new status.
	if err := setState(ctx, c, "pg-closed", schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	err = eventually(t, false, func() error {
		_, err := pgs.Create(ctx, pg("in-reopened", "pg-closed"), metav1.CreateOptions{})
		return err
	})
	mustAdmit(t, err)
}

func TestVolcanoJobOnlyInOpenQueue(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	// The Job CRD of a cluster where Volcano runs is Volcano's own
	// (install leaves it to Volcano), so the policy is proven on it.
	list, err := crds.LoadDir(cptest.UpstreamCRDs(t, "volcano-crds"))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, crd := range list {
		if crd.Name == "jobs.batch.volcano.sh" {
			found = true
			if err := crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), keys.CLIManager, crd); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !found {
		t.Fatal("upstream Job CRD not found")
	}
	for name, state := range map[string]schedulingv1beta1.QueueState{"job-open": schedulingv1beta1.QueueStateOpen, "job-closed": schedulingv1beta1.QueueStateClosed} {
		if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}, state); err != nil {
			t.Fatal(err)
		}
	}
	jobs := dyn(t).Resource(schema.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}).Namespace("default")
	job := func(name, queue string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"queue": queue, "minAvailable": int64(1)},
		}}
	}
	err = eventually(t, true, func() error {
		_, err := jobs.Create(ctx, job("job-in-closed", "job-closed"), metav1.CreateOptions{})
		return err
	})
	mustDeny(t, err, "queue job-closed is Closed and accepts no new work")
	_, err = jobs.Create(ctx, job("job-in-open", "job-open"), metav1.CreateOptions{})
	mustAdmit(t, err)
	if got, err := jobs.Get(ctx, "job-in-open", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if q, _, _ := unstructured.NestedString(got.Object, "spec", "queue"); q != "job-open" {
		t.Fatal(fmt.Sprintf("job queue %q", q))
	}
}
