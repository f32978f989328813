package controller

import (
	"slices"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// TestSelfSignedNamesServeNamespace: the self-signed metrics certificate
// names the metrics Service in the namespace serve runs in (POD_NAMESPACE,
// from the Deployment), not always Volcano's: with 'install
// --serve-namespace' a scraper verifying the name would otherwise fail.
// Outside a pod it is install's default namespace.
func TestSelfSignedNamesServeNamespace(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"serve-elsewhere", "serve-elsewhere"},
		{"", keys.VolcanoNamespace},
	} {
		t.Setenv("POD_NAMESPACE", tc.env)
		hosts := selfSignedHosts()
		for _, h := range []string{manifests.ServeMetricsService + "." + tc.want + ".svc", manifests.ServeMetricsService + "." + tc.want + ".svc.cluster.local"} {
			if !slices.Contains(hosts, h) {
				t.Errorf("POD_NAMESPACE=%q: hosts %q lack %s", tc.env, hosts, h)
			}
		}
		if tc.want != keys.VolcanoNamespace && slices.Contains(hosts, manifests.ServeMetricsService+"."+keys.VolcanoNamespace+".svc") {
			t.Errorf("POD_NAMESPACE=%q: hosts %q still name %s", tc.env, hosts, keys.VolcanoNamespace)
		}
	}
}
