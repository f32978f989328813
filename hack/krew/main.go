// Command krew renders krew-manifest.yaml for a release, the tag and the
// sha256 of each archive from goreleaser's checksums.txt, and refuses to
// write it unless it passes krew's index rules (rules.go) and every archive
// it names, read from beside checksums.txt, holds what the manifest
// installs (archive.go). goreleaser runs it (.goreleaser.yaml, signs):
//
//	go run ./hack/krew -tag v0.1.0 -checksums dist/checksums.txt -o dist/vc.yaml
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

func main() {
	tag := flag.String("tag", "", "release tag, e.g. v0.1.0 (default: from -metadata)")
	metadata := flag.String("metadata", "dist/metadata.json", "goreleaser metadata, read when -tag is empty")
	sums := flag.String("checksums", "dist/checksums.txt", "goreleaser checksums file; the archives are beside it")
	manifest := flag.String("manifest", "krew-manifest.yaml", "the manifest template")
	out := flag.String("o", "", "write the manifest to this file, named <plugin>.yaml (default: stdout)")
	partial := flag.Bool("partial", false, "keep only the platforms whose archive is in the checksums (a build for some platforms, e.g. 'make release-check')")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(2, fmt.Errorf("unexpected arguments: %v", flag.Args()))
	}
	if *tag == "" {
		*tag = tagFromMetadata(*metadata)
	}
	if *tag == "" {
		fail(2, fmt.Errorf("-tag is required (no version in %s)", *metadata))
	}
	rendered, err := renderFiles(*manifest, *sums, *tag, *partial)
	if err != nil {
		fail(1, err)
	}
	// Written to stdout, the manifest has no file name to check yet.
	if errs := check(rendered, *out, filepath.Dir(*sums)); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "error:", e)
		}
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(rendered)
	} else {
		err = os.WriteFile(*out, rendered, 0o644)
	}
	if err != nil {
		fail(1, err)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(code)
}

// renderFiles renders the template file with the checksums file; partial
// drops the platforms whose archive has no checksum.
func renderFiles(manifest, sums, tag string, partial bool) ([]byte, error) {
	tmpl, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(sums)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	checksums, err := parseChecksums(f)
	if err != nil {
		return nil, err
	}
	if partial {
		return renderPartial(string(tmpl), tag, checksums)
	}
	return render(string(tmpl), tag, checksums)
}

// renderPartial renders the platforms whose archive has a checksum and
// drops the others, by rendering with an empty checksum for those and
// removing the platforms left with one. At least one must remain.
func renderPartial(tmpl, tag string, checksums map[string]string) ([]byte, error) {
	const absent = "absent"
	t, err := template.New("krew").Option("missingkey=error").Funcs(template.FuncMap{
		"sha256": func(archive string) string {
			if sum, ok := checksums[archive]; ok {
				return sum
			}
			return absent
		},
	}).Parse(tmpl)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, map[string]string{"TagName": tag}); err != nil {
		return nil, err
	}
	p, err := parse(buf.Bytes())
	if err != nil {
		return nil, err
	}
	kept := p.Spec.Platforms[:0]
	for _, pl := range p.Spec.Platforms {
		if pl.Sha256 != absent {
			kept = append(kept, pl)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no archive of the manifest has a checksum")
	}
	p.Spec.Platforms = kept
	return yaml.Marshal(p)
}

// check parses a rendered manifest and applies the index rules (fileName
// empty: not the file name rule) and, when archiveDir is not empty, the
// archive checks.
func check(rendered []byte, fileName, archiveDir string) []error {
	p, err := parse(rendered)
	if err != nil {
		return []error{err}
	}
	errs := Validate(p, fileName)
	if archiveDir != "" {
		errs = append(errs, CheckArchives(p, archiveDir)...)
	}
	return errs
}

// tagFromMetadata returns "v" + the version goreleaser recorded, or "".
func tagFromMetadata(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var m struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &m) != nil || m.Version == "" {
		return ""
	}
	return "v" + strings.TrimPrefix(m.Version, "v")
}

// parseChecksums reads "<sha256>  <file>" lines.
func parseChecksums(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) != 2 {
			continue
		}
		out[fields[1]] = fields[0]
	}
	return out, s.Err()
}

// render fills the template; an archive without a checksum is an error, so a
// manifest can never point at something the release did not produce.
func render(tmpl, tag string, checksums map[string]string) ([]byte, error) {
	t, err := template.New("krew").Option("missingkey=error").Funcs(template.FuncMap{
		"sha256": func(archive string) (string, error) {
			sum, ok := checksums[archive]
			if !ok {
				return "", fmt.Errorf("no checksum for %s", archive)
			}
			return sum, nil
		},
	}).Parse(tmpl)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, map[string]string{"TagName": tag}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
