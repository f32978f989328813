package install

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
)

// TestServeNamespace: install --serve --serve-namespace puts serve in that
// namespace (created restricted, since install creates it), and nothing in
// volcano-system; a later install finds it there, and refuses to start a
// second serve elsewhere; uninstall finds and removes it there, leaving
// the namespace. On a control plane of its own: it moves serve's cluster
// objects, which the package's other tests use in volcano-system.
func TestServeNamespace(t *testing.T) {
	own, f := ownControlPlane(t)
	ctx := context.Background()
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	const ns = "kvc-serve"
	inst := func(sel install.Selection) (string, error) {
		o := &install.Options{Selection: sel}
		if sel.Serve {
			o.Image = "ghcr.io/kubectl-vc/kubectl-vc:v0.0.1"
		}
		return cptest.Install(ctx, f, o)
	}
	// serve's pods cannot run here (no node): install does not wait for
	// its queue webhook, and says that queue writes are refused until they
	// are ready.
	var errOut bytes.Buffer
	o := &install.Options{Selection: install.Selection{CRDs: true, Policies: true, Serve: true, ServeNamespace: ns}, Image: "ghcr.io/kubectl-vc/kubectl-vc:v0.0.1"}
	o.IOStreams = genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut}
	o.Factory, o.Timeout, o.DryRun = f, time.Minute, "none"
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(ctx); err != nil {
		t.Fatalf("install --serve --serve-namespace=%s: %v\n%s", ns, err, errOut.String())
	}
	if want := "warning: the queue webhook queue-hierarchy.kubectl-vc.io (calling service " + ns + "/kubectl-vc-serve-webhook"; !strings.Contains(errOut.String(), want) ||
		!strings.Contains(errOut.String(), "has no ready serve pod yet: queue creates that name a parent or set resources, and changes of parent or resources, are refused until serve is ready") {
		t.Errorf("install --serve with no serve pod ready says:\n%s", errOut.String())
	}
	d, err := k.AppsV1().Deployments(ns).Get(ctx, "kubectl-vc-serve", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--leader-elect-resource-namespace="+ns) {
		t.Errorf("serve's Lease not in %s: %s", ns, args)
	}
	n, err := k.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace %s, created by install, not restricted: %v", ns, n.Labels)
	}
	if _, err := k.CoreV1().Namespaces().Get(ctx, "volcano-system", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("volcano-system created by an install told %s: %v", ns, err)
	}
	crb, err := k.RbacV1().ClusterRoleBindings().Get(ctx, "kubectl-vc-serve", metav1.GetOptions{})
	if err != nil || len(crb.Subjects) != 1 || crb.Subjects[0].Namespace != ns {
		t.Fatalf("ClusterRoleBinding kubectl-vc-serve: %+v %v", crb, err)
	}

	// Again without the flag: serve stays where it is.
	if out, err := inst(install.Selection{RBAC: true}); err != nil {
		t.Fatalf("install --rbac: %v\n%s", err, out)
	}
	if _, err := k.CoreV1().ServiceAccounts("volcano-system").Get(ctx, "kubectl-vc-serve", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("install --rbac put serve's ServiceAccount in volcano-system while serve is in %s: %v", ns, err)
	}
	// Elsewhere: refused, nothing applied.
	out, err := inst(install.Selection{RBAC: true, ServeNamespace: "elsewhere"})
	if err == nil || !strings.Contains(err.Error(), "serve is installed in namespace "+ns) || out != "" {
		t.Fatalf("install --rbac --serve-namespace=elsewhere: %v, output %q", err, out)
	}
	if _, err := k.CoreV1().Namespaces().Get(ctx, "elsewhere", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused install created its namespace: %v", err)
	}

	out, err = runUninstall(f, "", true, true)
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if !strings.Contains(out, "deployment.apps/kubectl-vc-serve (namespace "+ns+") deleted") {
		t.Errorf("uninstall did not delete serve in %s:\n%s", ns, out)
	}
	for what, err := range map[string]error{
		"Deployment":     errOf(k.AppsV1().Deployments(ns).Get(ctx, "kubectl-vc-serve", metav1.GetOptions{})),
		"ServiceAccount": errOf(k.CoreV1().ServiceAccounts(ns).Get(ctx, "kubectl-vc-serve", metav1.GetOptions{})),
		"Role":           errOf(k.RbacV1().Roles(ns).Get(ctx, "kubectl-vc-serve-leader-election", metav1.GetOptions{})),
	} {
		if !apierrors.IsNotFound(err) {
			t.Errorf("serve's %s in %s after uninstall: %v", what, ns, err)
		}
	}
	if _, err := k.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall removed the namespace: %v", err)
	}
}

func errOf[T any](_ T, err error) error { return err }
