package install

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
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
		vwcGVR,
	}
)

// admissionMode chooses the mode of the policies when --admission is not
// given, and says why: the mode installed already (a user who chose one
// keeps it), else index where serve runs or is being installed (it keeps
// the index), else per-queue (nothing would keep an index, and a stale one
// refuses every create).
func (o *Options) admissionMode(ctx context.Context) (mode, why string, err error) {
	b, err := o.dyn.Resource(vapbGVR).Get(ctx, "vc-workload-open-queue", metav1.GetOptions{})
	switch {
	case err == nil:
		if m := b.GetLabels()[keys.AdmissionMode]; m == keys.AdmissionModeIndex || m == keys.AdmissionModePerQueue {
			return m, "as installed (--admission to change it)", nil
		}
	case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		return "", "", namedErr("read", "validatingadmissionpolicybinding.admissionregistration.k8s.io/vc-workload-open-queue", err)
	}
	if o.Serve {
		return keys.AdmissionModeIndex, "serve's queueindex controller keeps the index, so a request costs the same at any number of queues", nil
	}
	if ns, err := installedServeNamespace(ctx, o.dyn); err == nil && ns != "" {
		if _, err := o.dyn.Resource(deploymentGVR).Namespace(ns).Get(ctx, manifests.ServeDeployment, metav1.GetOptions{}); err == nil {
			return keys.AdmissionModeIndex, "serve runs in namespace " + ns + " and keeps the index, so a request costs the same at any number of queues", nil
		}
	}
	return keys.AdmissionModePerQueue, "no serve is installed to keep an index, so each PodGroup, Job and queue request is checked against every queue, at a cost that grows with their number; with serve running (install --serve, or kubectl vc serve with its queueindex controller) use --admission=index", nil
}

var deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// indexQueues does what serve's queueindex controller does, once: it
// writes the QueueIndexes from the queues as they are and stamps them
// refreshed now, so that the policies find them complete from the start
// (a policy refuses a create whose index is stale or missing). Where serve
// runs, it keeps them from then on. The writes are retried until timeout:
// the API server needs a moment to serve the kind just defined.
func indexQueues(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, names []string, timeout time.Duration, out io.Writer) error {
	qm, err := mapper.RESTMapping(queueGK)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	list, err := dyn.Resource(qm.Resource).List(ctx, metav1.ListOptions{})
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
	want := rules.QueueIndexEntriesText(typed)
	indexes := dyn.Resource(queueIndexGVR)
	written := 0
	for _, name := range names {
		var last error
		err = wait.PollUntilContextTimeout(ctx, probeInterval, timeout, true, func(ctx context.Context) (bool, error) {
			cur, err := indexes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err
				return false, nil
			}
			entries, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&admissionv1alpha1.QueueIndexSpec{Entries: want[name]})
			if err != nil {
				return false, err
			}
			old, _, _ := unstructured.NestedFieldNoCopy(cur.Object, "spec", "entries")
			changed := !equality.Semantic.DeepEqual(old, entries["entries"]) && (old != nil || len(want[name]) > 0)
			now := metav1.Now()
			spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&admissionv1alpha1.QueueIndexSpec{Entries: want[name], RefreshedAt: &now})
			if err != nil {
				return false, err
			}
			cur.Object["spec"] = spec
			// Without managedFields, as serve writes it (plugins/queueindex):
			// a policy pays for every byte of the index on each evaluation.
			_ = unstructured.SetNestedSlice(cur.Object, []any{map[string]any{}}, "metadata", "managedFields")
			_, last = indexes.Update(ctx, cur, metav1.UpdateOptions{FieldManager: keys.CLIManager})
			if last == nil && changed {
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
	// Said only when an entry changed: a second install changes nothing
	// but the refresh time.
	if written > 0 {
		fmt.Fprintf(out, "queue index written: %d queues\n", len(list.Items))
	}
	return nil
}

// everyQueueIndex names the QueueIndexes of this release and of earlier
// ones.
func everyQueueIndex() []string {
	return append(append([]string{}, admissionv1alpha1.QueueIndexNames...), admissionv1alpha1.QueueIndexLegacyNames...)
}

// pruneIndexes deletes the QueueIndexes no policy of the mode reads (plan
// names those it does), so that serve stops keeping them: in per-queue
// mode all, in index mode those of earlier releases.
func pruneIndexes(ctx context.Context, dyn dynamic.Interface, plan []string, mode string, dryRun bool, out io.Writer) error {
	opts := metav1.DeleteOptions{}
	suffix := ""
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
		suffix = " (server dry run)"
	}
	why := "no longer used: serve's queue webhook checks queue writes"
	if mode == keys.AdmissionModePerQueue {
		why = "not read in " + keys.AdmissionModePerQueue + " mode"
	}
	names := everyQueueIndex()
	seen := map[string]bool{}
	for _, name := range plan {
		seen[name] = true
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		err := dyn.Resource(queueIndexGVR).Delete(ctx, name, opts)
		switch {
		case err == nil:
			fmt.Fprintf(out, "queueindex.%s/%s deleted (%s)%s\n", admissionv1alpha1.GroupName, name, why, suffix)
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		default:
			return namedErr("delete", "queueindex.admission.kubectl-vc.io/"+name, err)
		}
	}
	return nil
}

// prunePolicies deletes the admission policies and bindings of an earlier
// install that this build no longer ships: they carry the part-of label and
// a name the plan does not have. The install probe's are left to the probe.
func prunePolicies(ctx context.Context, dyn dynamic.Interface, plan []*unstructured.Unstructured, mode string, dryRun bool, out io.Writer) error {
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
			why := "no longer shipped"
			if m := u.GetLabels()[keys.AdmissionMode]; m != "" && m != mode {
				why = "not used in " + mode + " mode"
			}
			fmt.Fprintf(out, "%s.%s/%s deleted (%s)%s\n", strings.ToLower(kindOf(gvr)), gvr.Group, u.GetName(), why, suffix)
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
	case "validatingwebhookconfigurations":
		return "ValidatingWebhookConfiguration"
	}
	return "MutatingAdmissionPolicyBinding"
}
