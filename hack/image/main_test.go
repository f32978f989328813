package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestWriteReadBack builds an image from a small file, reads the tarball
// back with go-containerregistry and checks what a container runtime uses:
// the platform, entrypoint, user and labels of the config, the one layer's
// file (path, mode, owner, content) and the tag in manifest.json.
func TestWriteReadBack(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kubectl-vc")
	content := []byte("#!/bin/false\nnot really a binary\n")
	if err := os.WriteFile(bin, content, 0o600); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := Options{
		Binary: bin, Tag: "ghcr.io/kubectl-vc/kubectl-vc:v1.2.3-4-gabcdef0-dirty", Out: filepath.Join(dir, "image.tar"),
		OS: "linux", Arch: "arm64", Version: "v1.2.3-4-gabcdef0-dirty", Revision: "0123456789abcdef0123456789abcdef01234567",
		Created: created,
	}
	if err := Write(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.Out + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}

	// manifest.json names the image by the tag, as 'ctr images import'
	// and 'docker load' read it.
	mf, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(o.Out) })
	if err != nil {
		t.Fatal(err)
	}
	if len(mf) != 1 || !slices.Equal(mf[0].RepoTags, []string{o.Tag}) || len(mf[0].Layers) != 1 {
		t.Fatalf("manifest.json: %+v", mf)
	}

	cf, headers, contents := readBack(t, o)
	if cf.OS != "linux" || cf.Architecture != "arm64" {
		t.Errorf("platform %s/%s, want linux/arm64", cf.OS, cf.Architecture)
	}
	if !cf.Created.Equal(created) {
		t.Errorf("created %v, want %v", cf.Created, created)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/usr/local/bin/kubectl-vc"}) || len(cf.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cf.Config.User)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  "v1.2.3-4-gabcdef0-dirty",
		"org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
		"org.opencontainers.image.source":   "https://github.com/kubectl-vc/kubectl-vc",
		"org.opencontainers.image.created":  "2026-01-02T03:04:05Z",
		"org.opencontainers.image.licenses": "MIT",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	// The empty base: the image's only layer is the binary's.
	if n := len(cf.RootFS.DiffIDs); n != 1 {
		t.Fatalf("%d layers in rootfs, want 1", n)
	}

	var names []string
	found := false
	for _, h := range headers {
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(created) {
			t.Errorf("%s: owner %d:%d mtime %v, want 0:0 %v", h.Name, h.Uid, h.Gid, h.ModTime, created)
		}
		if h.Name != "usr/local/bin/kubectl-vc" {
			if h.Typeflag != tar.TypeDir || h.Mode != 0o755 {
				t.Errorf("%s: type %c mode %o, want a 755 directory", h.Name, h.Typeflag, h.Mode)
			}
			continue
		}
		found = true
		if h.Typeflag != tar.TypeReg || h.Mode != 0o755 {
			t.Errorf("binary: type %c mode %o, want a 755 regular file", h.Typeflag, h.Mode)
		}
		if got := contents[h.Name]; !bytes.Equal(got, content) {
			t.Errorf("binary content %q, want %q", got, content)
		}
	}
	if !found || !slices.Equal(names, []string{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/kubectl-vc"}) {
		t.Errorf("layer entries %q", names)
	}
}

// TestWriteRefusesBadInput: a missing flag or an untagged name is refused
// before anything is written.
func TestWriteRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kubectl-vc")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	for _, o := range []Options{
		{Tag: "ghcr.io/kubectl-vc/kubectl-vc:v1", Out: out, OS: "linux", Arch: "amd64"},
		{Binary: bin, Tag: "ghcr.io/kubectl-vc/kubectl-vc", Out: out, OS: "linux", Arch: "amd64"},
		{Binary: bin, Tag: "ghcr.io/Kubectl-VC/kubectl-vc:v1", Out: out, OS: "linux", Arch: "amd64"},
		{Binary: bin, Tag: "ghcr.io/kubectl-vc/kubectl-vc:v1", Out: out, OS: "linux"},
		{Binary: filepath.Join(dir, "missing"), Tag: "ghcr.io/kubectl-vc/kubectl-vc:v1", Out: out, OS: "linux", Arch: "amd64"},
		{Binary: bin, Path: "pause", Tag: "docker.io/kubectl-vc/pause:local", Out: out, OS: "linux", Arch: "amd64"},
		{Binary: bin, Path: "/", Tag: "docker.io/kubectl-vc/pause:local", Out: out, OS: "linux", Arch: "amd64"},
	} {
		if err := Write(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written: %v", err)
	}
}

// TestPathMovesBinaryAndEntrypoint: -path puts the binary elsewhere and
// makes that its entrypoint (the local node's pause image is /pause).
func TestPathMovesBinaryAndEntrypoint(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("pause"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, Path: "/pause", Tag: "docker.io/kubectl-vc/pause:local", Out: filepath.Join(dir, "pause.tar"),
		OS: "linux", Arch: "amd64", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := Write(o); err != nil {
		t.Fatal(err)
	}
	cf, headers, _ := readBack(t, o)
	if !slices.Equal(cf.Config.Entrypoint, []string{"/pause"}) {
		t.Errorf("entrypoint %q, want [/pause]", cf.Config.Entrypoint)
	}
	var names []string
	for _, h := range headers {
		names = append(names, h.Name)
	}
	if !slices.Equal(names, []string{"pause"}) {
		t.Errorf("layer entries %q, want [pause]", names)
	}
}

// readBack reads the tarball o.Out as 'ctr images import' would: the image
// named by o.Tag, its config, and its one layer's entries in order with the
// content of each regular file.
func readBack(t *testing.T, o Options) (*v1.ConfigFile, []*tar.Header, map[string][]byte) {
	t.Helper()
	tag, err := name.NewTag(o.Tag)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(o.Out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var headers []*tar.Header
	contents := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		headers = append(headers, h)
		if h.Typeflag == tar.TypeReg {
			if contents[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	return cf, headers, contents
}
