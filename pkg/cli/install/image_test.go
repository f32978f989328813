package install

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
	"github.com/kubectl-vc/kubectl-vc/pkg/version"
)

func TestValidateImage(t *testing.T) {
	for _, ref := range []string{
		"ghcr.io/kubectl-vc/kubectl-vc:v0.1.0",
		"ghcr.io/kubectl-vc/kubectl-vc:bff520f-dirty",
		"ghcr.io/kubectl-vc/kubectl-vc:v0.1.0-3-gabcdef0-dirty",
		"localhost:5000/kubectl-vc:dev",
		"kubectl-vc:dev",
		"registry.example.com/team/kubectl_vc:1.0",
		"[::1]:5000/kubectl-vc:dev",
		"ghcr.io/kubectl-vc/kubectl-vc@sha256:" + strings.Repeat("ab", 32),
		"ghcr.io/kubectl-vc/kubectl-vc:v1@sha256:" + strings.Repeat("01", 32),
	} {
		if err := ValidateImage(ref); err != nil {
			t.Errorf("%q refused: %v", ref, err)
		}
	}
	for _, ref := range []string{
		"",
		" ",
		"ghcr.io/kubectl-vc/kubectl-vc",        // :latest implied
		"ghcr.io/kubectl-vc/kubectl-vc:",       // empty tag
		"ghcr.io/Kubectl-VC/kubectl-vc:v1",     // upper-case repository
		"ghcr.io/kubectl-vc/kubectl-vc:v1 ",    // trailing space
		"ghcr.io/kubectl-vc/kubectl-vc:-v1",    // tag starts with '-'
		"ghcr.io/kubectl-vc/kubectl-vc:v1\n",   // newline
		"ghcr.io/kubectl-vc/kubectl-vc@sha256", // digest without hex
		"ghcr.io/kubectl-vc/kubectl-vc:v1:v2",
		"https://ghcr.io/kubectl-vc/kubectl-vc:v1",
		"ghcr.io/kubectl-vc/kubectl-vc:" + strings.Repeat("x", 129),
		"ghcr.io/" + strings.Repeat("a", 600) + ":v1",
	} {
		err := ValidateImage(ref)
		if err == nil {
			t.Errorf("%q accepted", ref)
			continue
		}
		if strings.Contains(err.Error(), "\n") || len(err.Error()) > 700 {
			t.Errorf("%q: the error is not one short line: %q", ref, err)
		}
	}
}

func TestIsRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.1.0": true, "v1.22.333": true, "v1.0.0-rc.1": true, "v1.0.0-beta2": true,
		"v0.0.0-dev": false, "bff520f-dirty": false, "v0.1.0-3-gabcdef0": false,
		"v0.1.0-3-gabcdef0-dirty": false, "v0.1.1-snapshot": false, "0.1.0": false, "": false,
	} {
		if got := IsRelease(v); got != want {
			t.Errorf("IsRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

// printServe runs install --serve --print (no cluster) and returns the
// objects printed and what went to stderr.
func printServe(t *testing.T, o *Options) ([]*unstructured.Unstructured, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	o.Print, o.DryRun, o.Timeout = true, "none", 1
	o.Selection = Selection{Serve: true}
	o.Out, o.ErrOut, o.In = &out, &errOut, strings.NewReader("")
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), ":latest") {
		t.Errorf("the manifests name a :latest image:\n%s", out.String())
	}
	// The Deployment mounts the webhook's Secret, which --print leaves
	// out: install says so, once; the other notes are the test's.
	secretNote := "note: the Secret " + keys.QueueWebhookSecretName + " "
	if strings.Count(errOut.String(), secretNote) != 1 {
		t.Errorf("--print --serve does not say once that the webhook's Secret is not printed: %q", errOut.String())
	}
	var rest []string
	for _, l := range strings.SplitAfter(errOut.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, secretNote) {
			rest = append(rest, l)
		}
	}
	errOut.Reset()
	errOut.WriteString(strings.Join(rest, ""))
	dec := utilyaml.NewYAMLOrJSONDecoder(&out, 4096)
	var objs []*unstructured.Unstructured
	for {
		m := map[string]any{}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, errOut.String()
}

// serveContainer is the serve container of the printed Deployment.
func serveContainer(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GetName() != manifests.ServeDeployment {
			continue
		}
		cs, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if err != nil || len(cs) != 1 {
			t.Fatalf("containers %v %v", cs, err)
		}
		return cs[0].(map[string]any)
	}
	t.Fatal("no serve Deployment printed")
	return nil
}

func TestServeImageDefaultsToOwnVersion(t *testing.T) {
	objs, stderr := printServe(t, &Options{})
	c := serveContainer(t, objs)
	want := "ghcr.io/kubectl-vc/kubectl-vc:" + version.Get().GitVersion
	if c["image"] != want || DefaultImage() != want {
		t.Errorf("image %q (DefaultImage %q), want %q", c["image"], DefaultImage(), want)
	}
	// The Deployment runs all three controllers (NodeSets over slurmrestd).
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	if len(args) == 0 || args[0] != "serve" || !slices.Contains(args, "--controllers=queue,podgroup,nodeset,queueindex") {
		t.Errorf("args %q", args)
	}
	// Tests build without ldflags: a dev version, so install says so.
	if !IsRelease(version.Get().GitVersion) {
		if !strings.HasPrefix(stderr, "note: ") || !strings.Contains(stderr, "--image") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("no one-line note about the dev build's image: %q", stderr)
		}
	}
}

func TestServeImageFlag(t *testing.T) {
	const img = "registry.example.com/kubectl-vc:dev-1"
	objs, stderr := printServe(t, &Options{Image: img})
	if c := serveContainer(t, objs); c["image"] != img {
		t.Errorf("image %q, want %q", c["image"], img)
	}
	if stderr != "" {
		t.Errorf("stderr with --image: %q", stderr)
	}
	// The template itself is untouched for the next render.
	raw, err := manifests.Raw(manifests.Serve)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), img) {
		t.Error("rendering changed the embedded manifest")
	}
}

func TestRBACOnlyHasNoDeployment(t *testing.T) {
	p, err := newPlan(Selection{RBAC: true}, "x:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range p.Objects {
		if o.GetKind() == "Deployment" {
			t.Fatalf("--rbac applies a Deployment")
		}
	}
}
