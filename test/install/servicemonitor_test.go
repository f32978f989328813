package install

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

// serviceMonitorCRD stands in for the Prometheus Operator's CRD: the same
// group, version, kind and plural, any content. What install needs of it
// is that the kind is served.
func serviceMonitorCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servicemonitors.monitoring.coreos.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// TestInstallServiceMonitor (issue 31): --service-monitor is refused, with
// nothing applied, where the Prometheus Operator's kind is not served, and
// adds the ServiceMonitor where it is; --print shows it.
func TestInstallServiceMonitor(t *testing.T) {
	own := cptest.Start(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := own.WriteKubeconfig(kc, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	args := []string{"install", "--serve", "--service-monitor", "--image", "ghcr.io/kubectl-vc/kubectl-vc:sm"}
	out, stderr, code := runBinary(t, kc, args...)
	if code != 1 || out != "" || !strings.Contains(stderr, "does not serve monitoring.coreos.com/v1 ServiceMonitor") {
		t.Fatalf("without the kind: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if _, stderr, code := runBinary(t, kc, "install", "--service-monitor"); code != 1 || !strings.Contains(stderr, "use it with --serve") {
		t.Errorf("--service-monitor alone: exit %d %q", code, stderr)
	}
	printed, _, code := runBinary(t, kc, append(args, "--print")...)
	if code != 0 || !strings.Contains(printed, "kind: ServiceMonitor") || !strings.Contains(printed, "name: kubectl-vc-metrics-reader") ||
		!strings.Contains(printed, "name: kubectl-vc-serve-metrics") || !strings.Contains(printed, "pod-security.kubernetes.io/enforce: restricted") {
		t.Errorf("--print: exit %d\n%s", code, printed)
	}

	ext := apiextensionsclient.NewForConfigOrDie(own.AdminConfig())
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), serviceMonitorCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := crds.WaitEstablished(context.Background(), ext, "servicemonitors.monitoring.coreos.com", time.Minute); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runBinary(t, kc, args...)
	if code != 0 || !strings.Contains(out, "servicemonitor.monitoring.coreos.com/kubectl-vc-serve (namespace volcano-system) created") {
		t.Fatalf("with the kind: exit %d\n%s%s", code, out, stderr)
	}
	sm, err := dynamic.NewForConfigOrDie(own.AdminConfig()).Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}).
		Namespace(serveNS).Get(context.Background(), "kubectl-vc-serve", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eps, _, _ := unstructuredSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 || eps[0]["port"] != "https" || eps[0]["scheme"] != "https" {
		t.Errorf("endpoints %v", eps)
	}
	// uninstall removes it with the rest.
	out, stderr, code = runBinary(t, kc, "uninstall", "--yes")
	if code != 0 || !strings.Contains(out, "servicemonitor.monitoring.coreos.com/kubectl-vc-serve (namespace volcano-system) deleted") {
		t.Errorf("uninstall: exit %d\n%s%s", code, out, stderr)
	}
}

func unstructuredSlice(obj map[string]any, fields ...string) ([]map[string]any, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = m[f]
	}
	list, _ := cur.([]any)
	var out []map[string]any
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out, true, nil
}
