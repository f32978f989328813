package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// good is a manifest that passes every rule; each case breaks one.
func good() *Plugin {
	p := &Plugin{APIVersion: apiVersion, Kind: kind}
	p.Metadata.Name = "vc"
	p.Spec.Version = "v0.1.0"
	p.Spec.Homepage = "https://github.com/kubectl-vc/kubectl-vc"
	p.Spec.ShortDescription = "x"
	for _, pf := range [][2]string{{"linux", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}} {
		bin, ext := "kubectl-vc", ".tar.gz"
		if pf[0] == "windows" {
			bin, ext = "kubectl-vc.exe", ".zip"
		}
		p.Spec.Platforms = append(p.Spec.Platforms, Platform{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": pf[0], "arch": pf[1]}},
			URI:      "https://example.com/v0.1.0/kubectl-vc_" + pf[0] + "_" + pf[1] + ext,
			Sha256:   strings.Repeat("0f", 32),
			Bin:      bin,
		})
	}
	return p
}

// TestIndexRules: a good manifest passes; each broken rule is reported
// with what is wrong.
func TestIndexRules(t *testing.T) {
	if errs := Validate(good(), "plugins/vc.yaml"); len(errs) != 0 {
		t.Fatalf("good manifest: %v", errs)
	}
	cases := []struct {
		name     string
		file     string
		mutate   func(p *Plugin)
		wantErrs []string
	}{
		{"file name", "plugins/kubectl-vc.yaml", func(p *Plugin) {}, []string{"the index wants it in vc.yaml"}},
		{"api version", "", func(p *Plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }, []string{"apiVersion"}},
		{"kind", "", func(p *Plugin) { p.Kind = "Plugins" }, []string{"kind"}},
		{"name", "", func(p *Plugin) { p.Metadata.Name = "v c" }, []string{"not a plugin name"}},
		{"version without v", "", func(p *Plugin) { p.Spec.Version = "0.1.0" }, []string{"does not start with 'v'"}},
		{"version not semver", "", func(p *Plugin) { p.Spec.Version = "v0.1" }, []string{"not a semantic version"}},
		{"git describe is semver", "", func(p *Plugin) { p.Spec.Version = "v0.0.0-12-gabcdef0" }, nil},
		{"short description", "", func(p *Plugin) { p.Spec.ShortDescription = "" }, []string{"shortDescription is empty"}},
		{"homepage", "", func(p *Plugin) { p.Spec.Homepage = "http://example.com" }, []string{"homepage"}},
		{"no platforms", "", func(p *Plugin) { p.Spec.Platforms = nil }, []string{"platforms is empty"}},
		{"http uri", "", func(p *Plugin) { p.Spec.Platforms[0].URI = "http://example.com/a.tar.gz" }, []string{"not an https URL"}},
		{"sha256", "", func(p *Plugin) { p.Spec.Platforms[0].Sha256 = strings.Repeat("0F", 32) }, []string{"64 lowercase hex"}},
		{"bin", "", func(p *Plugin) { p.Spec.Platforms[0].Bin = "" }, []string{"bin is empty"}},
		{"windows bin", "", func(p *Plugin) { p.Spec.Platforms[2].Bin = "kubectl-vc" }, []string{"does not end in .exe"}},
		{"empty files", "", func(p *Plugin) { p.Spec.Platforms[0].Files = []FileOperation{} }, []string{"files is empty"}},
		{"file op", "", func(p *Plugin) { p.Spec.Platforms[0].Files = []FileOperation{{From: "LICENSE"}} }, []string{"needs both from and to"}},
		{"no selector", "", func(p *Plugin) { p.Spec.Platforms[0].Selector = nil }, []string{"selector is missing"}},
		{"empty selector", "", func(p *Plugin) { p.Spec.Platforms[0].Selector = &metav1.LabelSelector{} }, []string{"selector is empty"}},
		{"same archive twice", "", func(p *Plugin) {
			p.Spec.Platforms[1].URI = p.Spec.Platforms[0].URI
		}, []string{"one platform per archive"}},
		{"overlapping selectors", "", func(p *Plugin) {
			p.Spec.Platforms[1].Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"os": "linux"}}
		}, []string{"linux/amd64 is matched by 2 platforms"}},
		{"overlap by expression", "", func(p *Plugin) {
			p.Spec.Platforms[1].Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "os", Operator: metav1.LabelSelectorOpIn, Values: []string{"darwin", "linux"}},
			}}
		}, []string{"linux/amd64 is matched by 2 platforms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := good()
			c.mutate(p)
			errs := Validate(p, c.file)
			if len(errs) != len(c.wantErrs) {
				t.Fatalf("got %d errors %v, want %d like %q", len(errs), errs, len(c.wantErrs), c.wantErrs)
			}
			for i, want := range c.wantErrs {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %q, want it to say %q", errs[i], want)
				}
			}
		})
	}
}

// TestParseIsStrict: a misspelt field is an error, not a field krew drops.
func TestParseIsStrict(t *testing.T) {
	_, err := parse([]byte("apiVersion: x\nkind: Plugin\nspec:\n  shortDescripton: typo\n"))
	if err == nil || !strings.Contains(err.Error(), "shortDescripton") {
		t.Errorf("parse with a typo: %v", err)
	}
}
