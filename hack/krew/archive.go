package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// entry is one regular file of an archive.
type entry struct {
	name string
	exec bool // any execute bit (tar); zip entries count as executable
}

// helper is kubectl's completion helper the plugin ships beside its binary.
const helper = "kubectl_complete-vc"

// CheckArchives opens, in dir, the archive each platform names (the last
// element of its uri) and checks that its sha256 is the manifest's and
// that installing it as krew does (the platform's files, then bin) gives
// the plugin binary, executable, its completion helper and LICENSE.
func CheckArchives(p *Plugin, dir string) []error {
	var errs []error
	for _, pl := range p.Spec.Platforms {
		name := path.Base(pl.URI)
		for _, err := range checkArchive(pl, filepath.Join(dir, name)) {
			errs = append(errs, fmt.Errorf("%s: %v", name, err))
		}
	}
	return errs
}

func checkArchive(pl Platform, file string) []error {
	b, err := os.ReadFile(file)
	if err != nil {
		return []error{err}
	}
	var errs []error
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != pl.Sha256 {
		errs = append(errs, fmt.Errorf("sha256 is %x, the manifest says %s", sum, pl.Sha256))
	}
	entries, err := list(file)
	if err != nil {
		return append(errs, err)
	}
	installed := install(entries, pl.Files)
	ext := ""
	if strings.HasSuffix(pl.Bin, ".exe") {
		ext = ".exe"
	}
	for _, want := range []string{pl.Bin, helper + ext, "LICENSE"} {
		e, ok := installed[want]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("installs no %s (archive has %s)", want, names(entries)))
		case want != "LICENSE" && !e.exec:
			errs = append(errs, fmt.Errorf("%s is not executable", want))
		}
	}
	return errs
}

// install maps what krew would put in the plugin's directory to the
// archive entry it comes from: each files operation copies the entries its
// glob matches (to "." keeps their base name, another name renames a
// single match); without files, everything is copied as it is.
func install(entries []entry, files []FileOperation) map[string]entry {
	out := map[string]entry{}
	if files == nil {
		for _, e := range entries {
			out[e.name] = e
		}
		return out
	}
	for _, op := range files {
		for _, e := range entries {
			if ok, _ := path.Match(op.From, e.name); !ok {
				continue
			}
			to := path.Clean(op.To)
			if to == "." {
				to = path.Base(e.name)
			} else if strings.HasSuffix(op.To, "/") {
				to = path.Join(to, path.Base(e.name))
			}
			out[to] = e
		}
	}
	return out
}

func names(entries []entry) string {
	var n []string
	for _, e := range entries {
		n = append(n, e.name)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// list returns the regular files of a .tar.gz or .zip archive.
func list(file string) ([]entry, error) {
	switch {
	case strings.HasSuffix(file, ".tar.gz"), strings.HasSuffix(file, ".tgz"):
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		var out []entry
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			if h.Typeflag == tar.TypeReg {
				out = append(out, entry{name: path.Clean(h.Name), exec: h.Mode&0o111 != 0})
			}
		}
	case strings.HasSuffix(file, ".zip"):
		z, err := zip.OpenReader(file)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		var out []entry
		for _, f := range z.File {
			if !f.FileInfo().IsDir() {
				out = append(out, entry{name: path.Clean(f.Name), exec: true})
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a .tar.gz or .zip archive")
}
