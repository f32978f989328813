// Command image writes the container image of kubectl-vc, the one that
// 'kubectl vc install --serve' deploys, as a docker-save tarball that
// 'ctr -n k8s.io images import', 'docker load' and 'crane push' read.
//
// It needs neither a Docker daemon nor a registry: the image is an empty
// base (scratch) plus one layer holding the static binary, assembled with
// go-containerregistry. 'make image' builds the binary and runs it:
//
//	go run . -binary /tmp/kubectl-vc -arch amd64 \
//	    -tag ghcr.io/kubectl-vc/kubectl-vc:v0.1.0 -out ../../dist/kubectl-vc-image.tar \
//	    -version v0.1.0 -revision "$(git rev-parse HEAD)" -created 2026-01-02T03:04:05Z
//
// It is a module of its own (like hack/release and hack/tools) so that the
// main module never depends on go-containerregistry.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// BinaryPath is where the binary lives in the image (and its
	// entrypoint), unless -path says otherwise.
	BinaryPath = "/usr/local/bin/kubectl-vc"
	// User is distroless' "nonroot": the image holds no /etc/passwd, so the
	// user is given by number.
	User = "65532:65532"
	// Source is the repository the image is built from.
	Source = "https://github.com/kubectl-vc/kubectl-vc"
	// Licenses is the SPDX expression of the LICENSE file.
	Licenses = "MIT"
	// defaultPath is the PATH distroless images set; a scratch image has
	// none, and the runtime's default differs between runtimes.
	defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// Options describe one image.
type Options struct {
	// Binary is the static kubectl-vc to put in the image.
	Binary string
	// Path is where the binary goes in the image, and the entrypoint
	// (default BinaryPath). The local node's pause image is made by this
	// program too, with -path /pause.
	Path string
	// Tag names the image in the tarball's manifest.json (RepoTags).
	Tag string
	// Out is the tarball written.
	Out string
	// OS, Arch and Variant are the platform of the binary.
	OS, Arch, Variant string
	// Version and Revision are the build's version and full commit.
	Version, Revision string
	// Created is the build time: the image's creation time, the label and
	// the modification time of the layer's files.
	Created time.Time
}

func main() {
	var o Options
	var created string
	flag.StringVar(&o.Binary, "binary", "", "the static kubectl-vc binary (CGO_ENABLED=0) to put in the image (required)")
	flag.StringVar(&o.Path, "path", BinaryPath, "where the binary goes in the image; also the entrypoint")
	flag.StringVar(&o.Tag, "tag", "", "image name and tag, e.g. ghcr.io/kubectl-vc/kubectl-vc:v0.1.0 (required)")
	flag.StringVar(&o.Out, "out", "", "the docker-save tarball to write (required)")
	flag.StringVar(&o.OS, "os", "linux", "OS of the binary")
	flag.StringVar(&o.Arch, "arch", envOr("GOARCH", runtime.GOARCH), "architecture of the binary (default $GOARCH, else this machine's)")
	flag.StringVar(&o.Variant, "variant", "", "architecture variant, e.g. v7 for arm")
	flag.StringVar(&o.Version, "version", "", "version of the binary (label org.opencontainers.image.version; default: the tag)")
	flag.StringVar(&o.Revision, "revision", "unknown", "full commit of the binary (label org.opencontainers.image.revision)")
	flag.StringVar(&created, "created", "", "build time, RFC 3339 (default: now)")
	flag.Parse()
	if err := run(o, created); err != nil {
		fmt.Fprintln(os.Stderr, "error: "+err.Error())
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func run(o Options, created string) error {
	if created == "" {
		o.Created = time.Now().UTC().Truncate(time.Second)
	} else {
		t, err := time.Parse(time.RFC3339, created)
		if err != nil {
			return fmt.Errorf("-created %q is not an RFC 3339 time: %w", created, err)
		}
		o.Created = t.UTC()
	}
	if err := Write(o); err != nil {
		return err
	}
	fmt.Printf("image %s (%s/%s) written to %s\n", o.Tag, o.OS, o.Arch, o.Out)
	return nil
}

// Write builds the image and writes it to o.Out.
func Write(o Options) error {
	if o.Binary == "" || o.Tag == "" || o.Out == "" {
		return errors.New("-binary, -tag and -out are required")
	}
	if o.Path == "" {
		o.Path = BinaryPath
	}
	if !path.IsAbs(o.Path) || path.Clean(o.Path) != o.Path || o.Path == "/" {
		return fmt.Errorf("-path %q: want an absolute file path such as %s", o.Path, BinaryPath)
	}
	tag, err := name.NewTag(o.Tag, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("-tag %q: %w (want registry/repository:tag)", o.Tag, err)
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return err
	}
	if o.Version == "" {
		o.Version = tag.TagStr()
	}
	img, err := Build(bin, o)
	if err != nil {
		return err
	}
	// Written beside the target and renamed, so that an interrupted build
	// never leaves a truncated tarball behind under the final name.
	tmp := o.Out + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", o.Out, err)
	}
	return os.Rename(tmp, o.Out)
}

// Build returns the image: no base layers, one layer with the binary, and
// a config that runs it as a non-root user.
func Build(bin []byte, o Options) (v1.Image, error) {
	if o.OS == "" || o.Arch == "" {
		return nil, errors.New("the platform (-os, -arch) is required")
	}
	layerTar, err := binaryLayer(bin, o.Path, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.DockerLayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: o.Created},
			CreatedBy: "hack/image: COPY " + path.Base(o.Path) + " " + o.Path,
			Comment:   "static kubectl-vc " + o.Version,
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = o.OS, o.Arch, o.Variant
	cf.Created = v1.Time{Time: o.Created}
	cf.Author = Source
	cf.Config.Entrypoint = []string{o.Path}
	cf.Config.Cmd = nil
	cf.Config.User = User
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{defaultPath}
	cf.Config.Labels = Labels(o)
	return mutate.ConfigFile(img, cf)
}

// Labels are the OCI annotations of the image config.
func Labels(o Options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "kubectl-vc",
		"org.opencontainers.image.description": "kubectl vc serve: the Volcano queue and podgroup controllers and the Slinky NodeSet controller",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.created":     o.Created.Format(time.RFC3339),
		"org.opencontainers.image.licenses":    Licenses,
	}
}

// binaryLayer is an uncompressed tar of the binary at binPath, with its
// parent directories, owned by root and readable and executable by all.
func binaryLayer(bin []byte, binPath string, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := strings.TrimPrefix(path.Dir(binPath), "/")
	var parents []string
	for d := dir; d != "." && d != ""; d = path.Dir(d) {
		parents = append([]string{d}, parents...)
	}
	for _, d := range parents {
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX,
		}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: strings.TrimPrefix(binPath, "/"), Mode: 0o755,
		Size: int64(len(bin)), ModTime: mtime, Format: tar.FormatPAX,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
