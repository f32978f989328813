package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// optionalCRDs are kinds some clusters do without: the CLI's other
// commands work without them.
var optionalCRDs = map[string]string{
	"nodesets.slinky.slurm.net":      "needed only for Slurm NodeSets ('kubectl vc nodeset')",
	"jobs.batch.volcano.sh":          "needed only for Volcano Jobs ('kubectl vc job')",
	"hypernodes.topology.volcano.sh": "needed only for network topology ('kubectl vc hypernode')",
}

// checkCRDs compares each CRD in the cluster with ours: present,
// established, and serving the version we read and write.
func (o *Options) checkCRDs(ctx context.Context) {
	ours, err := crds.All()
	if err != nil {
		o.add("crds", Fail, "this binary's CRDs cannot be read: "+err.Error(), "report a bug")
		return
	}
	for _, want := range ours {
		got, err := o.crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if why, ok := optionalCRDs[want.Name]; ok {
				fix := "'kubectl vc install --crds', if you need it"
				if !install.Installed(want.Name) {
					// install leaves this CRD to its own project.
					fix = "install Volcano, if you need it ('kubectl vc install' never installs this CRD: Volcano's job controller, which runs Jobs, comes with it)"
				}
				o.add("crds", Warn, fmt.Sprintf("%s is not installed (%s)", want.Name, why), fix, want.Name)
			} else {
				o.add("crds", Fail, fmt.Sprintf("%s is not installed", want.Name), "'kubectl vc install --crds', or install Volcano", want.Name)
			}
			continue
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			// The same answer for every CRD: say it once.
			o.cannot("crds", "the CRDs", err)
			return
		case err != nil:
			o.cannot("crds", "CRD "+want.Name, err)
			continue
		}
		st, fix := compareCRD(want, got)
		o.add("crds", st, describeCRD(want, got), fix, want.Name)
	}
}

// compareCRD judges a cluster's CRD against ours: not established, or not
// serving a version we use, is a FAIL; serving it from another storage
// version works (the API server converts) and is OK.
func compareCRD(want, got *apiextensionsv1.CustomResourceDefinition) (Status, string) {
	established := false
	for _, c := range got.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			established = true
		}
	}
	if !established {
		return Fail, "the API server has not accepted it: kubectl describe crd " + got.Name
	}
	served := map[string]bool{}
	for _, v := range got.Spec.Versions {
		served[v.Name] = v.Served
	}
	var missing []string
	for _, v := range want.Spec.Versions {
		if v.Served && !served[v.Name] {
			missing = append(missing, v.Name)
		}
	}
	if len(missing) > 0 {
		if !install.Installed(got.Name) {
			return Fail, fmt.Sprintf("upgrade Volcano ('kubectl vc install' never installs %s; this kubectl-vc uses %s)", got.Name, strings.Join(missing, ", "))
		}
		return Fail, fmt.Sprintf("upgrade Volcano, or 'kubectl vc install --crds' (this kubectl-vc uses %s)", strings.Join(missing, ", "))
	}
	return OK, ""
}

// describeCRD says which versions a CRD serves and who installed it.
func describeCRD(want, got *apiextensionsv1.CustomResourceDefinition) string {
	var versions []string
	for _, v := range got.Spec.Versions {
		if !v.Served {
			continue
		}
		s := v.Name
		if v.Storage {
			s += " (storage)"
		}
		versions = append(versions, s)
	}
	var ours []string
	for _, v := range want.Spec.Versions {
		if v.Served {
			ours = append(ours, v.Name)
		}
	}
	by := "installed by another tool (Volcano's or Slinky's own?)"
	for _, m := range got.ManagedFields {
		if m.Manager != keys.CLIManager {
			continue
		}
		// kubectl-vc's field manager alone does not say 'install': the
		// local cluster and the tests apply every embedded CRD with it,
		// and install never applies some of them.
		if install.Installed(got.Name) {
			by = "installed by 'kubectl vc install'"
		} else {
			by = "applied with kubectl-vc's field manager by another means than 'kubectl vc install', which never installs it ('make cluster-up' and the tests do)"
		}
	}
	if len(versions) == 0 {
		versions = []string{"no version"}
	}
	return fmt.Sprintf("%s serves %s, %s; this kubectl-vc uses %s", got.Name, strings.Join(versions, ", "), by, strings.Join(ours, ", "))
}

// checkAdmission: the policy API is served, and each of our policies and
// bindings exists with the spec this binary installs. A policy left from
// another version of kubectl-vc enforces other rules than this one
// documents (and its CLI checks before writing).
func (o *Options) checkAdmission(ctx context.Context) {
	const fix = "kubectl vc install --policies"
	if _, err := o.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		if apierrors.IsNotFound(err) {
			o.add("admission", Warn, "the API server does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes older than 1.30): queue lifecycle rules are not enforced by the server",
				"upgrade Kubernetes to 1.30 or later, then "+fix)
			return
		}
		o.cannot("admission", "ValidatingAdmissionPolicies", err)
		return
	}
	// Compared with the mode installed (docs/admission.md); an install
	// that recorded none is compared with the index mode's.
	mode := keys.AdmissionModeIndex
	if b, err := o.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{}); err == nil && b.Labels[keys.AdmissionMode] == keys.AdmissionModePerQueue {
		mode = keys.AdmissionModePerQueue
	}
	objs, err := manifests.PolicyObjects(mode)
	if err != nil {
		o.add("admission", Fail, "this binary's policies cannot be read: "+err.Error(), "report a bug")
		return
	}
	var missing, differ, differences []string
	present := 0
	for _, obj := range objs {
		var got runtime.Object
		var err error
		switch obj.GetKind() {
		case "ValidatingAdmissionPolicy":
			got, err = o.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, obj.GetName(), metav1.GetOptions{})
		case "ValidatingAdmissionPolicyBinding":
			got, err = o.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, obj.GetName(), metav1.GetOptions{})
		case "ValidatingWebhookConfiguration":
			got, err = o.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, obj.GetName(), metav1.GetOptions{})
		default:
			continue
		}
		name := strings.TrimPrefix(obj.GetKind(), "ValidatingAdmission") + " " + obj.GetName()
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
			continue
		case err != nil:
			o.cannot("admission", name, err)
			return
		}
		present++
		live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(got)
		if err != nil {
			o.cannot("admission", name, err)
			return
		}
		want, have, field := manifests.Spec(obj), live["spec"], "spec"
		if obj.GetKind() == "ValidatingWebhookConfiguration" {
			// install fills in clientConfig (the manifest's is empty, so
			// anything there matches); admission-index checks where it
			// points. An added webhook or match condition shows here.
			want, have, field = obj.Object["webhooks"], live["webhooks"], "webhooks"
		}
		if path := manifests.FirstDifference(want, have, field); path != "" {
			differ = append(differ, name)
			differences = append(differences, name+": "+path)
		}
	}
	sort.Strings(missing)
	total := len(missing) + present
	switch {
	case len(missing) > 0:
		o.add("admission", Warn, fmt.Sprintf("%d of %d queue lifecycle policies and bindings are missing (%s): the server lets through what they refuse (e.g. deleting an Open queue)",
			len(missing), total, some(missing, 3)), fix, missing...)
	case len(differ) > 0:
		o.add("admission", Warn, fmt.Sprintf("%d of %d queue lifecycle policies and bindings differ from this kubectl-vc's (%s): the server enforces other rules than this version describes (another version installed them, or they were edited)",
			len(differ), total, some(differences, 3)), fix, differ...)
	default:
		o.add("admission", OK, fmt.Sprintf("the ValidatingAdmissionPolicy API is served and all %d queue lifecycle policies and bindings are present, as this kubectl-vc installs them", present), "")
	}
}
