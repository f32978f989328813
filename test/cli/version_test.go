package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

type versionResult struct {
	ClientVersion struct {
		GitVersion, GitCommit, Platform string
	}
	ServerVersion *struct{ GitVersion string }
}

// TestVersionThroughKubectl: 'kubectl vc version' reports a semantic client
// version and the server's, as text, JSON and YAML.
func TestVersionThroughKubectl(t *testing.T) {
	dir := pluginDir(t)
	client := mustVC(t, "version", "--client", "-o", "json")
	var c versionResult
	if err := json.Unmarshal([]byte(client.Stdout), &c); err != nil {
		t.Fatalf("version --client -o json: %v\n%s", err, client)
	}
	if c.ServerVersion != nil {
		t.Errorf("--client asked the server: %s", client.Stdout)
	}
	v := c.ClientVersion.GitVersion
	if _, err := utilversion.ParseSemantic(v); err != nil || !strings.HasPrefix(v, "v") {
		t.Errorf("client version %q is not a semantic version with v: %v", v, err)
	}

	r := kubectl(t, dir, "vc", "version", "-o", "json")
	var j versionResult
	if err := json.Unmarshal([]byte(r.Stdout), &j); r.Code != 0 || err != nil {
		t.Fatalf("kubectl vc version -o json: %v\n%s", err, r)
	}
	if j.ClientVersion != c.ClientVersion || j.ServerVersion == nil || !strings.HasPrefix(j.ServerVersion.GitVersion, "v1.") {
		t.Errorf("kubectl vc version -o json: %+v", j)
	}
	r = kubectl(t, dir, "vc", "version", "-o", "yaml")
	var y versionResult
	if err := yaml.Unmarshal([]byte(r.Stdout), &y); r.Code != 0 || err != nil || y.ServerVersion == nil || *y.ServerVersion != *j.ServerVersion || y.ClientVersion != c.ClientVersion {
		t.Errorf("kubectl vc version -o yaml (%v):\n%s", err, r)
	}
	r = kubectl(t, dir, "vc", "version")
	want := fmt.Sprintf("Client Version: %s\nServer Version: %s\n", v, j.ServerVersion.GitVersion)
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("kubectl vc version: want\n%s\n%s", want, r)
	}
}

// TestOIDCKubeconfig: a kubeconfig whose user authenticates with the oidc
// auth provider reaches the server (which, having no OIDC issuer
// configured, rejects the token) instead of failing in the client with "no
// Auth Provider found for name oidc": the binary links client-go's auth
// providers.
func TestOIDCKubeconfig(t *testing.T) {
	cfg := env.cp.Kubeconfig()
	// An ID token the provider takes as it is: not expired, so it asks no
	// issuer for a new one.
	enc := base64.RawURLEncoding.EncodeToString
	token := enc([]byte(`{"alg":"RS256"}`)) + "." +
		enc([]byte(fmt.Sprintf(`{"iss":"https://issuer.example.com","sub":"alice","exp":%d}`, time.Now().Add(24*time.Hour).Unix()))) + "." + enc([]byte("sig"))
	for _, a := range cfg.AuthInfos {
		*a = clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{
			"client-id": "kubectl-vc", "idp-issuer-url": "https://issuer.example.com", "id-token": token,
		}}}
	}
	path := filepath.Join(t.TempDir(), "oidc.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, command(path, "queue", "list"))
	if r.Code == 0 || strings.Contains(r.Stderr, "Auth Provider") || strings.TrimSpace(r.Stderr) != "error: unauthorized: your credentials were rejected (check --kubeconfig, --context or --token)" {
		t.Errorf("queue list with an oidc kubeconfig:\n%s", r)
	}
}
