package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// runBinary runs the built kubectl-vc with kubeconfig and returns stdout,
// stderr and the exit code.
func runBinary(t *testing.T, kc string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestUninstallRoundTrip (issue 29): install, serve creates its built-in
// queues root and default, and uninstall succeeds without --force (the
// built-in queues go with the Queue CRD: they cannot be deleted on their
// own, so asking for that made uninstall impossible); --dry-run=server
// first deletes nothing. Installing again afterwards works.
func TestUninstallRoundTrip(t *testing.T) {
	own := cptest.Start(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := own.WriteKubeconfig(kc, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	f := cptest.Factory(kc)
	ctx := context.Background()
	sel := &install.Options{Image: "ghcr.io/kubectl-vc/kubectl-vc:roundtrip"}
	// The per-queue mode: serve runs here outside the cluster (no node),
	// and the index mode's queue webhook would call serve's Service, which
	// has no pod, and refuse the built-in queues serve makes.
	sel.Selection = install.Selection{CRDs: true, Policies: true, Serve: true, Admission: keys.AdmissionModePerQueue}
	if out, err := cptest.Install(ctx, f, sel); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	// serve makes the built-in queues, as in any installation.
	s := cptest.StartServe(t, binary, kc, "--controllers=queue")
	vc := versioned.NewForConfigOrDie(own.AdminConfig())
	eventually(t, "root and default queues", func() (bool, error) {
		l, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 2, err
	})
	if err := s.Terminate(t); err != nil {
		t.Fatal(err)
	}

	// The admission policy refuses to delete them one by one: the reason
	// uninstall must not ask for it.
	if err := vc.SchedulingV1beta1().Queues().Delete(ctx, keys.DefaultQueue, metav1.DeleteOptions{}); err == nil {
		t.Fatal("queue default deleted on its own")
	}

	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	d := dynamic.NewForConfigOrDie(own.AdminConfig())
	exists := func() (crd, policy, deployment bool) {
		_, err := d.Resource(crdGVR).Get(ctx, "queues.scheduling.volcano.sh", metav1.GetOptions{})
		crd = !apierrors.IsNotFound(err)
		_, err = k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete", metav1.GetOptions{})
		policy = !apierrors.IsNotFound(err)
		_, err = k.AppsV1().Deployments(serveNS).Get(ctx, serveName, metav1.GetOptions{})
		deployment = !apierrors.IsNotFound(err)
		return
	}

	// A server dry run: every delete checked, nothing asked, nothing gone.
	out, stderr, code := runBinary(t, kc, "uninstall", "--dry-run=server")
	if code != 0 {
		t.Fatalf("uninstall --dry-run=server: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"deployment.apps/kubectl-vc-serve (namespace volcano-system) deleted (server dry run)",
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-delete deleted (server dry run)",
		// install --serve makes the queue webhook's certificate in any mode
		// (serve's pods mount it); uninstall removes it.
		"secret/kubectl-vc-serve-webhook-tls (namespace volcano-system) deleted (server dry run)",
		"service/kubectl-vc-serve-webhook (namespace volcano-system) deleted (server dry run)",
		"customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh (with the built-in queue default, queue root) deleted (server dry run)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[y/N]") {
		t.Errorf("a dry run asked:\n%s", out)
	}
	if c, p, dep := exists(); !c || !p || !dep {
		t.Fatalf("the dry run deleted something: crd %v, policy %v, deployment %v", c, p, dep)
	}
	if l, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 2 {
		t.Fatalf("queues after the dry run: %v %v", l, err)
	}

	// A bad --dry-run: one line, nothing done.
	if _, stderr, code := runBinary(t, kc, "uninstall", "--dry-run=client"); code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--dry-run=client is not supported") {
		t.Errorf("--dry-run=client: exit %d, %q", code, stderr)
	}

	// Without --force: succeeds, every layer gone.
	out, stderr, code = runBinary(t, kc, "uninstall", "--yes")
	if code != 0 {
		t.Fatalf("uninstall --yes: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh (with the built-in queue default, queue root) deleted") {
		t.Errorf("output:\n%s", out)
	}
	eventually(t, "the Queue CRD gone", func() (bool, error) {
		c, _, _ := exists()
		return !c, nil
	})
	if _, p, dep := exists(); p || dep {
		t.Fatalf("left: policy %v, deployment %v", p, dep)
	}
	if out, _, code := runBinary(t, kc, "uninstall", "--yes"); code != 0 || !strings.Contains(out, "nothing to uninstall") {
		t.Errorf("second uninstall: exit %d\n%s", code, out)
	}

	// And back.
	if out, err := cptest.Install(ctx, f, sel); err != nil {
		t.Fatalf("install again: %v\n%s", err, out)
	}
}

// TestInstallServeServerDryRun (issue 29): on a cluster where serve's
// namespace does not exist, 'install --serve --dry-run=server' (and
// --rbac) succeeds, says plainly which objects the server could not check
// and why, and creates nothing.
func TestInstallServeServerDryRun(t *testing.T) {
	own := cptest.Start(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := own.WriteKubeconfig(kc, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"install", "--serve", "--image", "ghcr.io/kubectl-vc/kubectl-vc:dry", "--dry-run=server"},
		{"install", "--rbac", "--dry-run=server"},
	} {
		out, stderr, code := runBinary(t, kc, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, code, out, stderr)
		}
		for _, want := range []string{
			"namespace/volcano-system created (server dry run)",
			"clusterrole.rbac.authorization.k8s.io/kubectl-vc-serve created (server dry run)",
			"serviceaccount/kubectl-vc-serve (namespace volcano-system) created (server dry run; not checked: its namespace is created by this install",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: output lacks %q:\n%s", args, want, out)
			}
		}
		if args[1] == "--serve" && !strings.Contains(out, "deployment.apps/kubectl-vc-serve (namespace volcano-system) created (server dry run; not checked") {
			t.Errorf("%q: no Deployment line:\n%s", args, out)
		}
	}
	if _, err := kubernetes.NewForConfigOrDie(own.AdminConfig()).CoreV1().Namespaces().Get(context.Background(), serveNS, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry run created the namespace (or: %v)", err)
	}
	// Where the namespace exists, everything is checked.
	if out, err := cptest.Install(context.Background(), cptest.Factory(kc), &install.Options{Selection: install.Selection{RBAC: true}}); err != nil {
		t.Fatalf("install --rbac: %v\n%s", err, out)
	}
	out, stderr, code := runBinary(t, kc, "install", "--serve", "--image", "ghcr.io/kubectl-vc/kubectl-vc:dry", "--dry-run=server")
	if code != 0 || strings.Contains(out, "not checked") || !strings.Contains(out, "deployment.apps/kubectl-vc-serve (namespace volcano-system) created (server dry run)") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
}

// TestInstallErrorsNameTheObject (issue 29): a refused request says which
// object it was about, in the one line the user reads.
func TestInstallErrorsNameTheObject(t *testing.T) {
	for _, args := range [][]string{
		{"install", "--context=" + controlplane.UnprivilegedUser},
		{"install", "--rbac", "--context=" + controlplane.UnprivilegedUser, "--dry-run=server"},
		{"uninstall", "--yes", "--context=" + controlplane.UnprivilegedUser},
	} {
		_, stderr, code := runBinary(t, kubeconfig, args...)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "forbidden") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
			continue
		}
		named := false
		for _, kind := range []string{"customresourcedefinition.apiextensions.k8s.io/", "namespace/", "clusterrole", "deployment.apps/", "service/", "validatingadmissionpolicy"} {
			named = named || strings.Contains(stderr, kind)
		}
		if !named {
			t.Errorf("%q: the error names no object: %q", args, stderr)
		}
	}
}
