package job

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

const jobCRD = "jobs.batch.volcano.sh"

// TestInstallLeavesTheJobCRDToVolcano: the Job kind is Volcano's, run by
// Volcano's job controller (serve has none). On a cluster without it,
// the job commands say what is missing; 'install' neither prints nor
// applies our Job CRD, and over Volcano's own it changes nothing, nor does
// 'uninstall' delete it.
func TestInstallLeavesTheJobCRDToVolcano(t *testing.T) {
	ctx := context.Background()
	bare, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bare.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := bare.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	on := func(args ...string) result { return run(t, command(kubeconfig, args...)) }

	want := "error: the server has no Volcano Jobs (batch.volcano.sh/v1alpha1): install Volcano, whose job controller runs them; 'kubectl vc install' leaves the Job CRD to Volcano\n"
	for _, args := range [][]string{{"job", "list"}, {"job", "suspend", "x"}, {"job", "describe", "x"}} {
		if r := on(args...); r.Code != 1 || r.Stderr != want {
			t.Errorf("%v without the Job CRD:\n%s", args, r)
		}
	}

	r := on("install", "--crds", "--print")
	if r.Code != 0 || !strings.Contains(r.Stdout, "name: queues.scheduling.volcano.sh") || strings.Contains(r.Stdout, jobCRD) {
		t.Errorf("install --print: want the other CRDs and not %s:\n%s", jobCRD, r.Stderr)
	}

	// Volcano's Job CRD, applied by Volcano's installer (another field manager).
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	ext := apiextensionsclient.NewForConfigOrDie(bare.AdminConfig())
	for _, c := range all {
		if c.Name == jobCRD {
			if err := crds.Apply(ctx, ext, "volcano-installer", c); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, jobCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := on("install", "--crds"); r.Code != 0 || strings.Contains(r.Stdout, jobCRD) {
		t.Errorf("install --crds:\n%s", r)
	}
	after, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, jobCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("install changed Volcano's Job CRD (resourceVersion %s -> %s)", before.ResourceVersion, after.ResourceVersion)
	}
	for _, m := range after.ManagedFields {
		if m.Manager == "kubectl-vc" {
			t.Errorf("install took fields of Volcano's Job CRD as %q", m.Manager)
		}
	}
	if r := on("uninstall", "--yes", "--force"); r.Code != 0 {
		t.Fatalf("uninstall:\n%s", r)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, jobCRD, metav1.GetOptions{}); err != nil {
		t.Errorf("uninstall deleted Volcano's Job CRD: %v", err)
	}
	if r := on("job", "list", "-A"); r.Code != 0 || r.Stderr != "No jobs found.\n" {
		t.Errorf("job list with Volcano's Job CRD:\n%s", r)
	}
}
