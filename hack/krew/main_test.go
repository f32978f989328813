package main

import (
	"os"
	"path"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

type goreleaser struct {
	Version int `json:"version"`
	Builds  []struct {
		Binary string   `json:"binary"`
		Goos   []string `json:"goos"`
		Goarch []string `json:"goarch"`
	} `json:"builds"`
	Archives []struct {
		NameTemplate    string   `json:"name_template"`
		Formats         []string `json:"formats"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
	} `json:"archives"`
}

// archivesFromGoreleaser lists the archive file names .goreleaser.yaml produces.
func archivesFromGoreleaser(t *testing.T) map[string][2]string {
	raw, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var g goreleaser
	if err := yaml.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if g.Version != 2 || len(g.Builds) != 1 || len(g.Archives) != 1 {
		t.Fatalf("unexpected goreleaser config shape: %+v", g)
	}
	a := g.Archives[0]
	out := map[string][2]string{}
	for _, goos := range g.Builds[0].Goos {
		for _, goarch := range g.Builds[0].Goarch {
			format := a.Formats[0]
			for _, o := range a.FormatOverrides {
				if o.Goos == goos {
					format = o.Formats[0]
				}
			}
			name := strings.NewReplacer("{{ .Os }}", goos, "{{ .Arch }}", goarch).Replace(a.NameTemplate)
			out[name+"."+format] = [2]string{goos, goarch}
		}
	}
	return out
}

// TestManifestMatchesGoreleaser: the krew manifest is a valid Plugin and has
// exactly one platform per archive goreleaser produces, with the right
// selector and binary name.
func TestManifestMatchesGoreleaser(t *testing.T) {
	archives := archivesFromGoreleaser(t)
	if len(archives) != 6 {
		t.Fatalf("goreleaser produces %d archives, want 6 (linux/darwin/windows x amd64/arm64)", len(archives))
	}
	sums := map[string]string{}
	for name := range archives {
		sums[name] = strings.Repeat("ab", 32)
	}
	tmpl, err := os.ReadFile("../../krew-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := render(string(tmpl), "v1.2.3", sums)
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(out, &p); err != nil {
		t.Fatalf("rendered manifest: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "vc" {
		t.Errorf("header: %s %s %s", p.APIVersion, p.Kind, p.Metadata.Name)
	}
	if p.Spec.Version != "v1.2.3" || p.Spec.Homepage == "" || p.Spec.ShortDescription == "" || p.Spec.Description == "" || p.Spec.Caveats == "" {
		t.Errorf("spec fields missing: %+v", p.Spec)
	}
	seen := map[string]bool{}
	for _, pl := range p.Spec.Platforms {
		name := path.Base(pl.URI)
		want, ok := archives[name]
		if !ok {
			t.Errorf("platform uri %s names no goreleaser archive", pl.URI)
			continue
		}
		seen[name] = true
		if pl.Selector.MatchLabels["os"] != want[0] || pl.Selector.MatchLabels["arch"] != want[1] {
			t.Errorf("%s: selector %v, want os=%s arch=%s", name, pl.Selector.MatchLabels, want[0], want[1])
		}
		if !strings.Contains(pl.URI, "/v1.2.3/") {
			t.Errorf("%s: uri not templated with the tag: %s", name, pl.URI)
		}
		wantBin := "kubectl-vc"
		if want[0] == "windows" {
			wantBin += ".exe"
		}
		if pl.Bin != wantBin || pl.Sha256 != sums[name] {
			t.Errorf("%s: bin %q sha %q", name, pl.Bin, pl.Sha256)
		}
	}
	var missing []string
	for name := range archives {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("archives without a krew platform: %v", missing)
	}
}

// TestRenderRefusesMissingChecksum: a release missing an archive cannot
// produce a manifest.
func TestRenderRefusesMissingChecksum(t *testing.T) {
	tmpl, err := os.ReadFile("../../krew-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := render(string(tmpl), "v1.2.3", map[string]string{}); err == nil || !strings.Contains(err.Error(), "no checksum") {
		t.Errorf("render without checksums: %v", err)
	}
	sums, err := parseChecksums(strings.NewReader("abc  kubectl-vc_linux_amd64.tar.gz\nbad line here x\n"))
	if err != nil || sums["kubectl-vc_linux_amd64.tar.gz"] != "abc" || len(sums) != 1 {
		t.Errorf("parseChecksums: %v %v", sums, err)
	}
}
