package install

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
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

// indexMissing tells whether the API server lacks a queue index (or the
// kind for them): install then makes it anew, and resetIndexLabels must
// follow.
func indexMissing(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper) (bool, error) {
	if _, err := mapper.RESTMapping(queueGK); meta.IsNoMatchError(err) {
		return false, nil
	}
	for _, name := range admissionv1alpha1.QueueIndexNames {
		_, err := dyn.Resource(queueIndexGVR).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			continue
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return true, nil
		}
		return false, namedErr("read", "queueindex.admission.kubectl-vc.io/"+name, err)
	}
	return false, nil
}

// resetIndexLabels removes the label keys.AdmissionIndexed from every queue,
// once install has made the index anew. A label says "the index holds this
// queue"; an index made anew holds nothing, so a label left from before
// (the index deleted, or an uninstall that left the queues) would let a
// Closed queue pass for Open until serve wrote the index again. Without
// serve the queues are then checked one by one, as before any index. The
// removals are queue writes the policies check against the index, which
// the API server needs a moment to see: each is retried until timeout.
func resetIndexLabels(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, timeout time.Duration, out io.Writer) error {
	qm, err := mapper.RESTMapping(queueGK)
	if err != nil {
		return err
	}
	queues := dyn.Resource(qm.Resource)
	list, err := queues.List(ctx, metav1.ListOptions{LabelSelector: keys.AdmissionIndexed})
	if err != nil {
		return namedErr("list", "the queues labelled "+keys.AdmissionIndexed, err)
	}
	patch := []byte(`{"metadata":{"labels":{"` + keys.AdmissionIndexed + `":null}}}`)
	for _, q := range list.Items {
		var last error
		err := wait.PollUntilContextTimeout(ctx, probeInterval, timeout, true, func(ctx context.Context) (bool, error) {
			_, last = queues.Patch(ctx, q.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: keys.CLIManager})
			return last == nil || apierrors.IsNotFound(last), nil
		})
		if err != nil {
			if last == nil {
				last = err
			}
			return namedErr("unlabel", "queue "+q.GetName(), last)
		}
	}
	if len(list.Items) > 0 {
		fmt.Fprintf(out, "%d queues unlabelled (%s): the queue index was made anew; serve labels them again once it holds them\n", len(list.Items), keys.AdmissionIndexed)
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
