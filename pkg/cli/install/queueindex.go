package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// The admission queue index (docs/admission.md) as install handles it.

var (
	queueIndexGVR = admissionv1alpha1.SchemeGroupVersion.WithResource("queueindexes")
	mapGV         = schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}
	// policyGVRs are the kinds of the policy set install prunes.
	policyGVRs = []schema.GroupVersionResource{
		vapGV.WithResource("validatingadmissionpolicybindings"),
		vapGV.WithResource("validatingadmissionpolicies"),
		mapGV.WithResource("mutatingadmissionpolicybindings"),
		mapGV.WithResource("mutatingadmissionpolicies"),
	}
)

// mutatingPolicy tells whether u is a MutatingAdmissionPolicy or its
// binding: served from Kubernetes 1.36 on (admissionregistration.k8s.io/v1).
func mutatingPolicy(u *unstructured.Unstructured) bool {
	k := u.GetKind()
	return u.GroupVersionKind().Group == mapGV.Group && (k == "MutatingAdmissionPolicy" || k == "MutatingAdmissionPolicyBinding")
}

// skipUnserved drops the MutatingAdmissionPolicy and its binding where the
// API server does not serve them, and says what that means: the validating
// rules still hold, and a write that changes the parent of an indexed queue
// must remove the label itself.
func skipUnserved(objs []*unstructured.Unstructured, mapper meta.RESTMapper, errOut io.Writer) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	said := false
	for _, u := range objs {
		if mutatingPolicy(u) {
			gvk := u.GroupVersionKind()
			if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
				if !said {
					fmt.Fprintf(errOut, "note: the API server does not serve %s MutatingAdmissionPolicy (Kubernetes 1.36 and later): a write that changes the parent of a queue labelled %s must remove that label itself (docs/admission.md)\n", mapGV, keys.AdmissionIndexed)
					said = true
				}
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// perQueueBinding tells whether u is a binding whose params are selected
// Queues: the halves of the rules that go through the queues not in the
// index one by one (vc-*-unindexed).
func perQueueBinding(u *unstructured.Unstructured) bool {
	if u.GetKind() != "ValidatingAdmissionPolicyBinding" {
		return false
	}
	_, found, _ := unstructured.NestedMap(u.Object, "spec", "paramRef", "selector")
	return found
}

// indexQueues does what serve's queueindex controller does, once: it writes
// the QueueIndexes from the queues as they are, then labels each queue they
// now hold (docs/admission.md). install does it before it binds the
// per-queue halves of the rules, so that a cluster that already has many
// queues is not labelled through them: each label write would be checked
// against every queue not labelled yet. Where serve runs, it keeps the
// indexes from then on; a queue that changes meanwhile (a conflict) is left
// to it, and is checked one by one until then. The writes are retried until
// timeout: the API server needs a moment to see the indexes just made.
func indexQueues(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, timeout time.Duration, out io.Writer) error {
	qm, err := mapper.RESTMapping(queueGK)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	queues := dyn.Resource(qm.Resource)
	list, err := queues.List(ctx, metav1.ListOptions{})
	if err != nil {
		return namedErr("list", "queues", err)
	}
	typed := make([]*v1beta1.Queue, 0, len(list.Items))
	for i := range list.Items {
		q := &v1beta1.Queue{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, q); err != nil {
			return fmt.Errorf("queue %s: %w", list.Items[i].GetName(), err)
		}
		typed = append(typed, q)
	}
	want := rules.QueueIndexes(typed)
	indexes := dyn.Resource(queueIndexGVR)
	written := 0
	for _, name := range admissionv1alpha1.QueueIndexNames {
		spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&admissionv1alpha1.QueueIndexSpec{Queues: want[name]})
		if err != nil {
			return err
		}
		var last error
		err = wait.PollUntilContextTimeout(ctx, probeInterval, timeout, true, func(ctx context.Context) (bool, error) {
			cur, err := indexes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err
				return false, nil
			}
			if equality.Semantic.DeepEqual(cur.Object["spec"], spec) || (cur.Object["spec"] == nil && len(want[name]) == 0) {
				return true, nil
			}
			cur.Object["spec"] = spec
			_, last = indexes.Update(ctx, cur, metav1.UpdateOptions{FieldManager: keys.CLIManager})
			if last == nil {
				written++
			}
			return last == nil, nil
		})
		if err != nil {
			if last == nil {
				last = err
			}
			return namedErr("write", "queueindex.admission.kubectl-vc.io/"+name, last)
		}
	}
	var unlabelled []*unstructured.Unstructured
	for i := range list.Items {
		if _, ok := list.Items[i].GetLabels()[keys.AdmissionIndexed]; !ok {
			unlabelled = append(unlabelled, &list.Items[i])
		}
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  = make(chan *unstructured.Unstructured)
	)
	for range min(8, len(unlabelled)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range next {
				patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
					"resourceVersion": q.GetResourceVersion(),
					"labels":          map[string]string{keys.AdmissionIndexed: "true"},
				}})
				var last error
				err := wait.PollUntilContextTimeout(ctx, probeInterval, timeout, true, func(ctx context.Context) (bool, error) {
					_, last = queues.Patch(ctx, q.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: keys.CLIManager})
					// A queue changed or gone since the list is serve's.
					return last == nil || apierrors.IsConflict(last) || apierrors.IsNotFound(last), nil
				})
				if err != nil {
					mu.Lock()
					if first == nil {
						if last == nil {
							last = err
						}
						first = namedErr("label", "queue "+q.GetName(), last)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, q := range unlabelled {
		next <- q
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	// Said only when something changed: a second install changes nothing.
	if written > 0 || len(unlabelled) > 0 {
		fmt.Fprintf(out, "queue index written: %d queues, %d newly labelled %s\n", len(list.Items), len(unlabelled), keys.AdmissionIndexed)
	}
	return nil
}

// prunePolicies deletes the admission policies and bindings of an earlier
// install that this build no longer ships: they carry the part-of label and
// a name the plan does not have. The install probe's are left to the probe.
func prunePolicies(ctx context.Context, dyn dynamic.Interface, plan []*unstructured.Unstructured, dryRun bool, out io.Writer) error {
	want := map[schema.GroupVersionResource]map[string]bool{}
	for _, gvr := range policyGVRs {
		want[gvr] = map[string]bool{}
	}
	for _, u := range plan {
		for _, gvr := range policyGVRs {
			if u.GroupVersionKind().Group == gvr.Group && kindOf(gvr) == u.GetKind() {
				want[gvr][u.GetName()] = true
			}
		}
	}
	opts := metav1.DeleteOptions{}
	suffix := ""
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
		suffix = " (server dry run)"
	}
	for _, gvr := range policyGVRs {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=kubectl-vc,!" + probeLabel})
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return namedErr("list", gvr.Resource, err)
		}
		for _, u := range list.Items {
			if want[gvr][u.GetName()] {
				continue
			}
			if err := dyn.Resource(gvr).Delete(ctx, u.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
				return namedErr("delete", gvr.Resource+"/"+u.GetName(), err)
			}
			fmt.Fprintf(out, "%s.%s/%s deleted (no longer shipped)%s\n", strings.ToLower(kindOf(gvr)), gvr.Group, u.GetName(), suffix)
		}
	}
	return nil
}

// kindOf is the kind of one of policyGVRs.
func kindOf(gvr schema.GroupVersionResource) string {
	switch gvr.Resource {
	case "validatingadmissionpolicies":
		return "ValidatingAdmissionPolicy"
	case "validatingadmissionpolicybindings":
		return "ValidatingAdmissionPolicyBinding"
	case "mutatingadmissionpolicies":
		return "MutatingAdmissionPolicy"
	}
	return "MutatingAdmissionPolicyBinding"
}
