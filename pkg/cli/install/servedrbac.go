package install

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// With --slurm-namespaces serve's NodeSet controller acts only on the
// NodeSets of those namespaces (plugins/nodeset/served.go): elsewhere it
// writes a NodeSet's status and nothing else. So install grants the
// controller's writes of the NodeSet's dependents only there, in the same
// per-namespace Role as the Secret read, and takes them out of the
// ClusterRole: a NodeSet's writer elsewhere cannot make serve create pods
// (privileged slurmd) or anything else in its namespace, even through a
// bug of serve's. What the other controllers need everywhere stays: pods
// patch (the podgroup controller's group annotation; also the NodeSet
// controller's adoption, cordon and release patches), list and watch of
// every kind (the informers are cluster-wide), events. Without
// --slurm-namespaces serve acts in every namespace and the ClusterRole
// keeps it all (docs/security.md).

// servedWrites are the verbs the NodeSet controller uses only on the
// dependents of a NodeSet it acts on, each in the NodeSet's namespace
// (plugins/nodeset: podcontrol, history.go, dependents.go, ssh.go).
var servedWrites = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch"}},
	{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"create", "get", "patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"get", "create", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "create", "patch"}},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "create", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "patch"}},
}

// slurmKeyRules are the rules of the per-namespace Role: the key Secret's
// get and the NodeSet controller's writes.
func slurmKeyRules() []any {
	rules := []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}}}
	for _, r := range servedWrites {
		rules = append(rules, map[string]any{"apiGroups": strs(r.APIGroups), "resources": strs(r.Resources), "verbs": strs(r.Verbs)})
	}
	return rules
}

func strs(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}

// narrowClusterRole takes servedWrites out of serve's ClusterRole. Each
// must be found in a rule of the same group and resource (a manifest that
// no longer grants one is a mistake of this file, not something to skip);
// a rule left without verbs is dropped.
func narrowClusterRole(objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" || o.GetName() != manifests.ServeDeployment {
			continue
		}
		var cr rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cr); err != nil {
			return fmt.Errorf("manifests: clusterrole %s: %w", o.GetName(), err)
		}
		for _, w := range servedWrites {
			i := slices.IndexFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
				return slices.Equal(r.APIGroups, w.APIGroups) && slices.Equal(r.Resources, w.Resources) && len(r.ResourceNames) == 0
			})
			if i < 0 {
				return fmt.Errorf("manifests: clusterrole %s has no rule for %v %v", o.GetName(), w.APIGroups, w.Resources)
			}
			for _, v := range w.Verbs {
				if !slices.Contains(cr.Rules[i].Verbs, v) {
					return fmt.Errorf("manifests: clusterrole %s does not grant %s on %v", o.GetName(), v, w.Resources)
				}
			}
			cr.Rules[i].Verbs = slices.DeleteFunc(cr.Rules[i].Verbs, func(v string) bool { return slices.Contains(w.Verbs, v) })
		}
		cr.Rules = slices.DeleteFunc(cr.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Verbs) == 0 })
		rules, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cr)
		if err != nil {
			return err
		}
		return unstructured.SetNestedField(o.Object, rules["rules"], "rules")
	}
	return fmt.Errorf("manifests: no clusterrole %s in the serve set", manifests.ServeDeployment)
}
