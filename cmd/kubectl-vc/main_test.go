package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the binary links client-go's auth providers and none
// of k8s.io/kubernetes (a plugin stays a client: cli-runtime, client-go,
// kubectl's library).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	var oidc bool
	for _, d := range deps {
		if d == "k8s.io/client-go/plugin/pkg/client/auth/oidc" {
			oidc = true
		}
		if d == "k8s.io/kubernetes" || strings.HasPrefix(d, "k8s.io/kubernetes/") {
			t.Errorf("kubectl-vc depends on %s", d)
		}
		// Every linked package's init runs at every start of every command:
		// k8s.io/apiserver's webhook client (for serve's metrics checks)
		// would bring these and about 5 ms to 'version --client'
		// (docs/security.md#cost); kubectl's describe package brings
		// k8s.io/kubectl/pkg/scheme, a second scheme of every API group,
		// about 0.9 ms (pkg/cli/printers.describeEvents).
		for _, heavy := range []string{"google.golang.org/grpc", "github.com/google/cel-go", "sigs.k8s.io/apiserver-network-proxy", "go.opentelemetry.io/otel/exporters", "k8s.io/kubectl/pkg/describe", "k8s.io/kubectl/pkg/scheme"} {
			if d == heavy || strings.HasPrefix(d, heavy+"/") {
				t.Errorf("kubectl-vc links %s, whose initialization every command pays", d)
			}
		}
	}
	if !oidc {
		t.Error("kubectl-vc does not link k8s.io/client-go/plugin/pkg/client/auth (oidc)")
	}
}
