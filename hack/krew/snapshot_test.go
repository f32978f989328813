package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

var (
	dist    = flag.String("dist", "", "a dist/ directory written by 'make release-snapshot' or 'make release-check' (TestReleaseSnapshot)")
	partial = flag.Bool("partial", false, "the -dist of 'make release-check': archives of this machine's platform only")
)

// TestReleaseSnapshot checks what 'make release-snapshot' wrote to -dist as
// a release would publish it: the krew manifest goreleaser had hack/krew
// render (vc.yaml) passes the index rules, is krew-manifest.yaml rendered
// for the snapshot's version and checksums, names every archive of the
// snapshot and nothing else, and each archive holds kubectl-vc,
// kubectl_complete-vc and LICENSE. 'make test' runs it after the snapshot
// of this machine's platform ('make release-check', -partial):
//
//	make release-snapshot && go test ./hack/krew -run TestReleaseSnapshot -args -dist $PWD/dist
func TestReleaseSnapshot(t *testing.T) {
	if *dist == "" {
		t.Skip("no -dist: run 'make release-snapshot', then go test ./hack/krew -run TestReleaseSnapshot -args -dist $PWD/dist ('make test' does)")
	}
	manifest := filepath.Join(*dist, "vc.yaml")
	got, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatalf("the snapshot has no krew manifest: %v", err)
	}
	p, err := parse(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Validate(p, manifest) {
		t.Errorf("index rules: %v", err)
	}
	for _, err := range CheckArchives(p, *dist) {
		t.Errorf("archive: %v", err)
	}
	want, err := renderFiles("../../krew-manifest.yaml", filepath.Join(*dist, "checksums.txt"), p.Spec.Version, *partial)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("vc.yaml is not krew-manifest.yaml rendered for %s:\n%s", p.Spec.Version, got)
	}
	if tag := tagFromMetadata(filepath.Join(*dist, "metadata.json")); tag != p.Spec.Version {
		t.Errorf("manifest version %s, goreleaser's %s", p.Spec.Version, tag)
	}
	var archives, named []string
	for _, glob := range []string{"*.tar.gz", "*.zip"} {
		m, _ := filepath.Glob(filepath.Join(*dist, glob))
		for _, a := range m {
			archives = append(archives, filepath.Base(a))
		}
	}
	for _, pl := range p.Spec.Platforms {
		named = append(named, filepath.Base(pl.URI))
	}
	sort.Strings(archives)
	sort.Strings(named)
	count := 6
	if *partial {
		count = 1
	}
	if !equal(archives, named) || len(archives) != count {
		t.Errorf("the snapshot has archives %v, the manifest names %v", archives, named)
	}
}
