package install

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSlurmNamespacesPlan: serve's ClusterRole grants no Secrets; with
// --slurm-namespaces each named namespace gets a Role of get on Secrets and
// of the NodeSet controller's writes, bound to serve's ServiceAccount, the
// ClusterRole no longer grants those writes, and serve is told the same
// namespaces.
func TestSlurmNamespacesPlan(t *testing.T) {
	for _, tc := range []struct {
		sel  Selection
		args bool
	}{
		{Selection{Serve: true, RBAC: true}, true},
		{Selection{RBAC: true}, false},
	} {
		none, err := newPlan(tc.sel, "x:1")
		if err != nil {
			t.Fatal(err)
		}
		tc.sel.SlurmNamespaces = []string{"slurm", "hpc"}
		p, err := newPlan(tc.sel, "x:1")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range append(none.Objects, p.Objects...) {
			if o.GetKind() != "ClusterRole" {
				continue
			}
			var cr rbacv1.ClusterRole
			convert(t, o, &cr)
			for _, r := range cr.Rules {
				if slices.Contains(r.Resources, "secrets") {
					t.Errorf("ClusterRole %s grants secrets: %+v", o.GetName(), r)
				}
			}
		}
		checkNarrowed(t, clusterRoleOf(t, none.Objects), clusterRoleOf(t, p.Objects))
		if len(p.Objects) != len(none.Objects)+4 {
			t.Errorf("%+v: %d objects with two namespaces, %d without: want a Role and RoleBinding per namespace", tc.sel, len(p.Objects), len(none.Objects))
		}
		got := map[string]bool{}
		for _, o := range p.Objects {
			if o.GetName() != slurmKeyRole {
				continue
			}
			got[o.GetKind()+" "+o.GetNamespace()] = true
			if o.GetLabels()[slurmKeyLabel] != "true" {
				t.Errorf("%s %s/%s without the label uninstall finds it by", o.GetKind(), o.GetNamespace(), o.GetName())
			}
			switch o.GetKind() {
			case "Role":
				var r rbacv1.Role
				convert(t, o, &r)
				want := append([]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}, servedWrites...)
				if !reflect.DeepEqual(r.Rules, want) {
					t.Errorf("Role %s rules %+v, want get on secrets and the NodeSet controller's writes", o.GetNamespace(), r.Rules)
				}
			case "RoleBinding":
				var b rbacv1.RoleBinding
				convert(t, o, &b)
				want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "kubectl-vc-serve", Namespace: DefaultServeNamespace}}
				if !reflect.DeepEqual(b.Subjects, want) || b.RoleRef.Name != slurmKeyRole || b.RoleRef.Kind != "Role" {
					t.Errorf("RoleBinding %s: %+v %+v", o.GetNamespace(), b.Subjects, b.RoleRef)
				}
			}
		}
		for _, want := range []string{"Role slurm", "RoleBinding slurm", "Role hpc", "RoleBinding hpc"} {
			if !got[want] {
				t.Errorf("%+v: no %s", tc.sel, want)
			}
		}
		var args []string
		for _, o := range p.Objects {
			if o.GetKind() == "Deployment" {
				cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				for _, a := range cs[0].(map[string]any)["args"].([]any) {
					args = append(args, a.(string))
				}
			}
		}
		if has := slices.Contains(args, "--slurm-namespaces=slurm,hpc"); has != tc.args {
			t.Errorf("%+v: serve's args %q", tc.sel, args)
		}
	}
}

func clusterRoleOf(t *testing.T, objs []*unstructured.Unstructured) rbacv1.ClusterRole {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" && o.GetName() == "kubectl-vc-serve" {
			var cr rbacv1.ClusterRole
			convert(t, o, &cr)
			return cr
		}
	}
	t.Fatal("no ClusterRole kubectl-vc-serve in the plan")
	return rbacv1.ClusterRole{}
}

// grants are the verbs of rules by group, resource and names.
func grants(rules []rbacv1.PolicyRule) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[fmt.Sprintf("%s/%s %v %s", g, res, r.ResourceNames, v)] = true
				}
			}
		}
	}
	return out
}

// checkNarrowed: the ClusterRole of --slurm-namespaces grants none of the
// writes the Role holds, and the two together grant exactly what the
// ClusterRole grants without it (no verb lost for the other controllers,
// none gained).
func checkNarrowed(t *testing.T, wide, narrow rbacv1.ClusterRole) {
	t.Helper()
	w, n, role := grants(wide.Rules), grants(narrow.Rules), grants(servedWrites)
	for g := range role {
		if n[g] {
			t.Errorf("the ClusterRole of --slurm-namespaces still grants %s", g)
		}
		if !w[g] {
			t.Errorf("the Role grants %s, which serve's ClusterRole does not", g)
		}
	}
	for g := range w {
		if !n[g] && !role[g] {
			t.Errorf("--slurm-namespaces lost %s", g)
		}
	}
	for g := range n {
		if !w[g] {
			t.Errorf("--slurm-namespaces gained %s", g)
		}
	}
	for _, must := range []string{"/pods [] patch", "/pods [] list", "/services [] watch", "apps/controllerrevisions [] list"} {
		if !n[must] {
			t.Errorf("the ClusterRole of --slurm-namespaces lacks %s, which serve needs in every namespace", must)
		}
	}
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatal(err)
	}
}

// TestServeNamespacePlan: with --serve-namespace every object of serve,
// and what names it, is in that namespace; nothing is left in
// volcano-system.
func TestServeNamespacePlan(t *testing.T) {
	p, err := newPlan(Selection{RBAC: true, Serve: true, ServiceMonitor: true, ServeNamespace: "kvc", SlurmNamespaces: []string{"slurm"}}, "x:1")
	if err != nil {
		t.Fatal(err)
	}
	nsObj := false
	for _, o := range p.Objects {
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), DefaultServeNamespace) {
			t.Errorf("%s %s/%s still names %s: %s", o.GetKind(), o.GetNamespace(), o.GetName(), DefaultServeNamespace, b)
		}
		switch {
		case o.GetKind() == "Namespace":
			nsObj = o.GetName() == "kvc"
		case o.GetKind() == "Deployment":
			if o.GetNamespace() != "kvc" || !strings.Contains(string(b), `"--leader-elect-resource-namespace=kvc"`) {
				t.Errorf("Deployment %s/%s: %s", o.GetNamespace(), o.GetName(), b)
			}
		case o.GetKind() == "RoleBinding" && o.GetNamespace() == "slurm", o.GetKind() == "ClusterRoleBinding":
			if !strings.Contains(string(b), `"namespace":"kvc"`) {
				t.Errorf("%s %s does not bind serve's ServiceAccount in kvc: %s", o.GetKind(), o.GetName(), b)
			}
		}
	}
	if !nsObj {
		t.Error("no Namespace kvc in the plan")
	}
}
