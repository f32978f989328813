package main

import (
	"os"
	"path"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func equal(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

type goreleaser struct {
	Version int `json:"version"`
	Builds  []struct {
		ID     string   `json:"id"`
		Main   string   `json:"main"`
		Binary string   `json:"binary"`
		Goos   []string `json:"goos"`
		Goarch []string `json:"goarch"`
	} `json:"builds"`
	Archives []struct {
		IDs             []string `json:"ids"`
		Files           []string `json:"files"`
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
	if g.Version != 2 || len(g.Builds) != 2 || len(g.Archives) != 1 {
		t.Fatalf("unexpected goreleaser config shape: %+v", g)
	}
	// Every archive holds the plugin, its completion helper and LICENSE,
	// each built for every platform.
	a := g.Archives[0]
	binaries := map[string]string{}
	for _, b := range g.Builds {
		binaries[b.ID] = b.Binary
		if !equal(b.Goos, g.Builds[0].Goos) || !equal(b.Goarch, g.Builds[0].Goarch) {
			t.Errorf("build %s is for %v/%v, build %s for %v/%v", b.ID, b.Goos, b.Goarch, g.Builds[0].ID, g.Builds[0].Goos, g.Builds[0].Goarch)
		}
	}
	if binaries["kubectl-vc"] != "kubectl-vc" || binaries["kubectl_complete-vc"] != "kubectl_complete-vc" {
		t.Errorf("builds: %v", binaries)
	}
	if !equal(a.IDs, []string{"kubectl-vc", "kubectl_complete-vc"}) || !equal(a.Files, []string{"LICENSE"}) {
		t.Errorf("archive holds builds %v and files %v", a.IDs, a.Files)
	}
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
	p, err := parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Validate(p, "vc.yaml") {
		t.Errorf("index rules: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "vc" {
		t.Errorf("header: %s %s %s", p.APIVersion, p.Kind, p.Metadata.Name)
	}
	if p.Spec.Version != "v1.2.3" || p.Spec.Homepage == "" || p.Spec.ShortDescription == "" || p.Spec.Description == "" || p.Spec.Caveats == "" {
		t.Errorf("spec fields missing: %+v", p.Spec)
	}
	// The caveats say where krew put the completion helper of this version.
	if !strings.Contains(p.Spec.Caveats, "/store/vc/v1.2.3/kubectl_complete-vc") {
		t.Errorf("caveats do not name the helper's path:\n%s", p.Spec.Caveats)
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
		ext := strings.TrimPrefix(wantBin, "kubectl-vc")
		installed := install([]entry{{name: wantBin}, {name: helper + ext}, {name: "LICENSE"}, {name: "README.md"}}, pl.Files)
		if len(installed) != 3 || installed[helper+ext].name == "" || installed["LICENSE"].name == "" {
			t.Errorf("%s: files %+v install %v", name, pl.Files, installed)
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

// TestRenderPartial: with only some archives built, the manifest keeps
// their platforms, still passes the rules, and refuses to be empty.
func TestRenderPartial(t *testing.T) {
	tmpl, err := os.ReadFile("../../krew-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := renderPartial(string(tmpl), "v1.2.3", map[string]string{"kubectl-vc_linux_arm64.tar.gz": strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Platforms) != 1 || path.Base(p.Spec.Platforms[0].URI) != "kubectl-vc_linux_arm64.tar.gz" || len(p.Spec.Platforms[0].Files) != 3 {
		t.Errorf("partial manifest: %+v", p.Spec.Platforms)
	}
	if errs := Validate(p, "vc.yaml"); len(errs) > 0 {
		t.Errorf("partial manifest: %v", errs)
	}
	if _, err := renderPartial(string(tmpl), "v1.2.3", nil); err == nil {
		t.Error("a manifest without any archive was rendered")
	}
}
