package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

// The state and weight rules repeat what our CRD's status subresource and
// schema already guarantee. They exist for Queue CRDs without those (older
// Volcano releases), so they are proven against such a CRD: a copy of ours
// without the status subresource and without weight's minimum.
func TestStateAndWeightRulesOnLegacyCRD(t *testing.T) {
	setup(t)
	ctx := context.Background()
	ext := apiextensionsclient.NewForConfigOrDie(cp.AdminConfig())
	list, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	var ours = list[0]
	for _, c := range list {
		if c.Name == "queues.scheduling.volcano.sh" {
			ours = c
		}
	}
	legacy := ours.DeepCopy()
	for i := range legacy.Spec.Versions {
		v := &legacy.Spec.Versions[i]
		v.Subresources = nil
		w := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["weight"]
		w.Minimum = nil
		v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["weight"] = w
	}
	if err := crds.Apply(ctx, ext, keys.CLIManager, legacy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := crds.Apply(ctx, ext, keys.CLIManager, ours); err != nil {
			t.Errorf("restore CRD: %v", err)
		}
		// Later tests write status: wait until the subresource is back.
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := vc(t).SchedulingV1beta1().Queues().UpdateStatus(ctx, mustGetQueue(t, "legacy-ok"), metav1.UpdateOptions{})
			return err == nil, nil
		})
	})
	queues := dyn(t).Resource(queuesGVR)
	q := func(name string, weight int64, state string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"weight": weight},
		}}
		if state != "" {
			_ = unstructured.SetNestedField(u.Object, state, "status", "state")
		}
		return u
	}
	// The server serves the new schema a moment after the CRD changes.
	var last error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = queues.Create(ctx, q("legacy-zero", 0, ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), "ValidatingAdmissionPolicy"), nil
	})
	mustDeny(t, last, "queue legacy-zero: weight 0 is not allowed: set spec.weight to 1 or more")

	_, err = queues.Create(ctx, q("legacy-closing", 1, "Closing"), metav1.CreateOptions{})
	mustDeny(t, err, "queue legacy-closing: state Closing cannot be set: use Open or Closed")
	_, err = queues.Create(ctx, q("legacy-ok", 1, "Closed"), metav1.CreateOptions{})
	mustAdmit(t, err)
	// Read again on a conflict: serve's queue index controller labels a
	// queue a moment after it is made.
	for range 10 {
		var got *unstructured.Unstructured
		got, err = queues.Get(ctx, "legacy-ok", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s, _, _ := unstructured.NestedString(got.Object, "status", "state"); s != "Closed" {
			t.Fatalf("without a status subresource the state should be stored, got %q", s)
		}
		_ = unstructured.SetNestedField(got.Object, "Unknown", "status", "state")
		if _, err = queues.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			break
		}
	}
	mustDeny(t, err, "state Unknown cannot be set")
}
