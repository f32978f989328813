package doctor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/volcanoflow"
)

// TestDoctorFlowKinds: doctor says whether Volcano's JobFlow and
// JobTemplate are served (install never installs them): a WARN naming
// each and what to install while they are not, never a FAIL; OK once
// Volcano's installer has applied them. On a cluster of its own, so that
// no other test sees the flow CRDs.
func TestDoctorFlowKinds(t *testing.T) {
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

	rep, _ := doctor(t, kubeconfig)
	flow := rep.findings("flow")
	if len(flow) != 2 {
		t.Fatalf("flow findings: %+v", flow)
	}
	for i, name := range []string{"jobflows.flow.volcano.sh", "jobtemplates.flow.volcano.sh"} {
		f := flow[i]
		if f.Status != "WARN" || !strings.HasPrefix(f.Message, name+" is not served") || !strings.Contains(f.Fix, "jobflow") || f.Objects[0] != name {
			t.Errorf("without the flow CRDs: %+v", f)
		}
	}

	list, err := volcanoflow.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), "volcano-installer", list...); err != nil {
		t.Fatal(err)
	}
	rep, _ = doctor(t, kubeconfig)
	for _, f := range rep.findings("flow") {
		if f.Status != "OK" || !strings.Contains(f.Message, "serves v1alpha1 (storage), installed by another tool") {
			t.Errorf("with the flow CRDs: %+v", f)
		}
	}
}
