package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type file struct {
	name string
	mode int64
}

// writeArchive writes a .tar.gz or .zip with the given files and returns
// its sha256.
func writeArchive(t *testing.T, path string, files []file) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".zip") {
		z := zip.NewWriter(f)
		for _, fl := range files {
			w, err := z.Create(fl.name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write([]byte(fl.name))
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		gz := gzip.NewWriter(f)
		tw := tar.NewWriter(gz)
		for _, fl := range files {
			if err := tw.WriteHeader(&tar.Header{Name: fl.name, Mode: fl.mode, Size: int64(len(fl.name)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			_, _ = tw.Write([]byte(fl.name))
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestCheckArchives: complete archives pass; a missing helper or LICENSE,
// a binary that is not executable, a wrong checksum or a missing archive
// each fail with the archive's name.
func TestCheckArchives(t *testing.T) {
	complete := []file{{"kubectl-vc", 0o755}, {"kubectl_complete-vc", 0o755}, {"LICENSE", 0o644}}
	completeWin := []file{{"kubectl-vc.exe", 0}, {"kubectl_complete-vc.exe", 0}, {"LICENSE", 0}}
	cases := []struct {
		name          string
		linux, darwin []file
		windows       []file
		corrupt       bool
		want          []string
	}{
		{name: "complete", linux: complete, darwin: complete, windows: completeWin},
		{name: "no helper", linux: complete[:1:1], darwin: complete, windows: completeWin,
			want: []string{"kubectl-vc_linux_amd64.tar.gz: installs no kubectl_complete-vc", "installs no LICENSE"}},
		{name: "no windows helper", linux: complete, darwin: complete, windows: []file{completeWin[0], completeWin[2], {"kubectl_complete-vc", 0}},
			want: []string{"kubectl-vc_windows_amd64.zip: installs no kubectl_complete-vc.exe"}},
		{name: "not executable", linux: complete, darwin: []file{{"kubectl-vc", 0o644}, complete[1], complete[2]}, windows: completeWin,
			want: []string{"kubectl-vc_darwin_arm64.tar.gz: kubectl-vc is not executable"}},
		{name: "in a directory", linux: []file{{"kubectl-vc_linux/kubectl-vc", 0o755}, {"kubectl-vc_linux/kubectl_complete-vc", 0o755}, {"kubectl-vc_linux/LICENSE", 0o644}}, darwin: complete, windows: completeWin,
			want: []string{"kubectl-vc_linux_amd64.tar.gz: installs no kubectl-vc", "installs no kubectl_complete-vc", "installs no LICENSE"}},
		{name: "checksum", linux: complete, darwin: complete, windows: completeWin, corrupt: true,
			want: []string{"kubectl-vc_linux_amd64.tar.gz: sha256 is"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := good()
			for i, files := range [][]file{c.linux, c.darwin, c.windows} {
				pl := &p.Spec.Platforms[i]
				pl.Sha256 = writeArchive(t, filepath.Join(dir, filepath.Base(pl.URI)), files)
			}
			if c.corrupt {
				p.Spec.Platforms[0].Sha256 = strings.Repeat("0f", 32)
			}
			errs := CheckArchives(p, dir)
			if len(errs) != len(c.want) {
				t.Fatalf("got %v, want errors like %q", errs, c.want)
			}
			for i, want := range c.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %q, want it to say %q", errs[i], want)
				}
			}
		})
	}
	// No archive at all where the manifest points.
	p := good()
	errs := CheckArchives(p, t.TempDir())
	if len(errs) != 3 || !strings.Contains(errs[0].Error(), "kubectl-vc_linux_amd64.tar.gz: open") {
		t.Errorf("missing archives: %v", errs)
	}
}

// TestFilesOperations: krew copies only what the files globs match, to "."
// by base name, and renames a file given another name.
func TestFilesOperations(t *testing.T) {
	entries := []entry{{name: "dir/kubectl-vc", exec: true}, {name: "dir/LICENSE"}, {name: "README.md"}}
	got := install(entries, []FileOperation{{From: "dir/*", To: "."}, {From: "README.md", To: "doc.md"}})
	if len(got) != 3 || got["kubectl-vc"].name != "dir/kubectl-vc" || got["LICENSE"].name != "dir/LICENSE" || got["doc.md"].name != "README.md" {
		t.Errorf("install: %v", got)
	}
	if got := install(entries, nil); len(got) != 3 || got["dir/kubectl-vc"].name == "" {
		t.Errorf("install without files: %v", got)
	}
}
