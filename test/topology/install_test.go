package topology

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

// Volcano's own HyperNode CRD, installed by Volcano (its Helm chart):
// install leaves it as it is and says so, and uninstall keeps it (it
// would delete every HyperNode with it); the other CRDs are installed.
func TestInstallLeavesVolcanosHyperNodeCRD(t *testing.T) {
	dir := cptest.UpstreamCRDs(t, "volcano-crds")
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	upstream, err := crds.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ext := apiextensionsclient.NewForConfigOrDie(cp.AdminConfig())
	for _, c := range upstream {
		if c.Name == "hypernodes.topology.volcano.sh" {
			if err := crds.Apply(ctx, ext, "helm", c); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "hypernodes.topology.volcano.sh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	r := env.cli.Run(t, kubeconfig, "install", "--crds")
	t.Logf("$ kubectl vc install --crds\n%s", r)
	if r.Code != 0 {
		t.Fatalf("install: %s", r)
	}
	contains(t, "install", r.Stdout, "customresourcedefinition.apiextensions.k8s.io/hypernodes.topology.volcano.sh unchanged (installed by someone else, Volcano's own: install does not replace it)",
		"customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh created")
	after, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "hypernodes.topology.volcano.sh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("Volcano's CRD was written (resourceVersion %s -> %s)", before.ResourceVersion, after.ResourceVersion)
	}
	for _, m := range after.ManagedFields {
		if m.Manager == keys.CLIManager {
			t.Errorf("kubectl-vc manages fields of Volcano's CRD: %+v", m)
		}
	}

	u := env.cli.Run(t, kubeconfig, "uninstall", "--yes", "--force")
	if u.Code != 0 || strings.Contains(u.Stdout, "hypernodes.topology.volcano.sh") {
		t.Errorf("uninstall touched Volcano's CRD:\n%s", u)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "hypernodes.topology.volcano.sh", metav1.GetOptions{}); err != nil {
		t.Errorf("Volcano's CRD is gone after uninstall: %v", err)
	}
}
