package install

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
)

// TestSlurmNamespacesRBAC: install --slurm-namespaces lets serve's
// ServiceAccount get Secrets in the named namespaces and nowhere else, as
// the API server's RBAC decides; naming fewer takes the grant back; a
// namespace that does not exist is refused before anything is applied;
// uninstall removes those Roles and RoleBindings and nothing else in the
// namespaces (a Role of the namespace's own, the namespace itself). On a
// control plane of its own: uninstall removes the CRDs the package's other
// tests use.
func TestSlurmNamespacesRBAC(t *testing.T) {
	own, f := ownControlPlane(t)
	ctx := context.Background()
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	for _, ns := range []string{"slurm-a", "slurm-b", "other"} {
		if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A Role of slurm-a's own administrator, which uninstall must leave.
	if _, err := k.RbacV1().Roles("slurm-a").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "slurm-admins"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mayGetSecrets := func(ns string) bool {
		t.Helper()
		r, err := k.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:volcano-system:kubectl-vc-serve",
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:volcano-system", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: "slurm-auth-jwt"},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	want := func(step string, allowed map[string]bool) {
		t.Helper()
		for _, ns := range []string{"slurm-a", "slurm-b", "other", "default"} {
			if got := mayGetSecrets(ns); got != allowed[ns] {
				t.Errorf("%s: serve may get Secrets in %s: %v, want %v", step, ns, got, allowed[ns])
			}
		}
	}
	inst := func(namespaces ...string) (string, error) {
		return cptest.Install(ctx, f, &install.Options{Selection: install.Selection{CRDs: true, Policies: true, RBAC: true, SlurmNamespaces: namespaces}})
	}

	if out, err := inst(); err != nil {
		t.Fatalf("install --rbac: %v\n%s", err, out)
	}
	want("install --rbac", nil)

	if out, err := inst("slurm-a", "slurm-b"); err != nil {
		t.Fatalf("install --rbac --slurm-namespaces=slurm-a,slurm-b: %v\n%s", err, out)
	}
	want("--slurm-namespaces=slurm-a,slurm-b", map[string]bool{"slurm-a": true, "slurm-b": true})

	out, err := inst("slurm-a", "nowhere")
	if err == nil || !strings.Contains(err.Error(), `namespace "nowhere" not found`) || out != "" {
		t.Fatalf("a namespace that does not exist: %v, output %q", err, out)
	}
	want("refused --slurm-namespaces=slurm-a,nowhere", map[string]bool{"slurm-a": true, "slurm-b": true})

	out, err = inst("slurm-a")
	if err != nil {
		t.Fatalf("install --rbac --slurm-namespaces=slurm-a: %v\n%s", err, out)
	}
	if !strings.Contains(out, "role.rbac.authorization.k8s.io/kubectl-vc-serve-slurm-key (namespace slurm-b) deleted") {
		t.Errorf("install did not say it took slurm-b's grant back:\n%s", out)
	}
	want("--slurm-namespaces=slurm-a", map[string]bool{"slurm-a": true})

	out, err = runUninstall(f, "", true, true)
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if !strings.Contains(out, "rolebinding.rbac.authorization.k8s.io/kubectl-vc-serve-slurm-key (namespace slurm-a) deleted") {
		t.Errorf("uninstall did not delete slurm-a's RoleBinding:\n%s", out)
	}
	want("uninstall", nil)
	if _, err := k.RbacV1().Roles("slurm-a").Get(ctx, "kubectl-vc-serve-slurm-key", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("slurm-a's Role after uninstall: %v", err)
	}
	if _, err := k.RbacV1().Roles("slurm-a").Get(ctx, "slurm-admins", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall removed a Role it did not create: %v", err)
	}
	if _, err := k.CoreV1().Namespaces().Get(ctx, "slurm-a", metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall removed a namespace: %v", err)
	}
}
