package install

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// serve reads a Slurm JWT key Secret only in the namespaces the
// administrator names with --slurm-namespaces (docs/security.md, "The Slurm
// key: trust model"), so install grants `get` on Secrets only there, with a
// Role and RoleBinding per namespace, and passes the same list to serve.
// There is no cluster-wide Secret grant. The same Role holds the NodeSet
// controller's writes, which serve then makes only there (servedrbac.go).

const (
	// slurmKeyRole names the Role and RoleBinding in each named namespace.
	slurmKeyRole = keys.ServeName + "-slurm-key"
	// slurmKeyLabel marks them, so that install (for namespaces no longer
	// named) and uninstall find them in whatever namespace they are.
	slurmKeyLabel = "kubectl-vc.io/serve-slurm-key"
)

var (
	roleGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// slurmKeyObjects are the Role and RoleBinding that let serve's
// ServiceAccount (in serveNS) get Secrets in each namespace and write the
// dependents of its NodeSets there (servedrbac.go).
func slurmKeyObjects(namespaces []string, serveNS string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, ns := range namespaces {
		meta := func() map[string]any {
			return map[string]any{"name": slurmKeyRole, "namespace": ns, "labels": map[string]any{slurmKeyLabel: "true"}}
		}
		out = append(out,
			&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(),
				"rules": slurmKeyRules(),
			}},
			&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": slurmKeyRole},
				"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": manifests.ServeDeployment, "namespace": serveNS}},
			}})
	}
	return out
}

// editServeContainer calls edit on the serve container of the Deployment.
func editServeContainer(objs []*unstructured.Unstructured, edit func(map[string]any) error) error {
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != manifests.ServeDeployment {
			continue
		}
		containers, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return fmt.Errorf("manifests: deployment %s: %w", o.GetName(), err)
		}
		for i, c := range containers {
			cm, ok := c.(map[string]any)
			if !ok || cm["name"] != manifests.ServeContainer {
				continue
			}
			if err := edit(cm); err != nil {
				return err
			}
			containers[i] = cm
			return unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
		}
		return fmt.Errorf("manifests: deployment %s has no container %q", o.GetName(), manifests.ServeContainer)
	}
	return fmt.Errorf("manifests: no deployment %s in the serve set", manifests.ServeDeployment)
}

// addServeArgs appends args to the serve container's arguments.
func addServeArgs(objs []*unstructured.Unstructured, args ...string) error {
	return editServeContainer(objs, func(cm map[string]any) error {
		have, _ := cm["args"].([]any)
		for _, a := range args {
			have = append(have, a)
		}
		cm["args"] = have
		return nil
	})
}

// slurmKeyTargets are the Roles and RoleBindings of install's
// --slurm-namespaces in namespaces not in keep (keep nil: all of them),
// RoleBindings first.
func slurmKeyTargets(ctx context.Context, dyn dynamic.Interface, keep map[string]bool) ([]target, error) {
	var out []target
	for _, gvr := range []schema.GroupVersionResource{roleBindingGVR, roleGVR} {
		list, err := dyn.Resource(gvr).Namespace("").List(ctx, metav1.ListOptions{LabelSelector: slurmKeyLabel + "=true"})
		if err != nil {
			return nil, fmt.Errorf("list the %s of --slurm-namespaces: %s", gvr.Resource, util.Message(err))
		}
		for i := range list.Items {
			u := &list.Items[i]
			if keep[u.GetNamespace()] || u.GetName() != slurmKeyRole {
				continue
			}
			out = append(out, target{obj: u, ri: dyn.Resource(gvr).Namespace(u.GetNamespace())})
		}
	}
	return out, nil
}

// pruneSlurmKeys deletes the Roles and RoleBindings of namespaces no
// longer named: trust taken back by naming fewer namespaces goes from RBAC
// too, not only from serve's arguments.
func pruneSlurmKeys(ctx context.Context, dyn dynamic.Interface, keep map[string]bool, dryRun bool, out io.Writer) error {
	stale, err := slurmKeyTargets(ctx, dyn, keep)
	if err != nil {
		return err
	}
	opts := metav1.DeleteOptions{}
	suffix := ""
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
		suffix = " (server dry run)"
	}
	for _, t := range stale {
		err := t.ri.Delete(ctx, t.obj.GetName(), opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return objErr("delete", t.obj, err)
		}
		fmt.Fprintf(out, "%s deleted (its namespace is no longer in --slurm-namespaces)%s\n", ref(t.obj), suffix)
	}
	return nil
}
