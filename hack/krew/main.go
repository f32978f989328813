// Command krew renders krew-manifest.yaml for a release: the tag and the
// sha256 of each archive from goreleaser's checksums.txt.
//
//	go run ./hack/krew -tag v0.1.0 -checksums dist/checksums.txt > dist/vc.yaml
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"
)

func main() {
	tag := flag.String("tag", "", "release tag, e.g. v0.1.0 (default: from -metadata)")
	metadata := flag.String("metadata", "dist/metadata.json", "goreleaser metadata, read when -tag is empty")
	sums := flag.String("checksums", "dist/checksums.txt", "goreleaser checksums file")
	manifest := flag.String("manifest", "krew-manifest.yaml", "the manifest template")
	flag.Parse()
	if *tag == "" {
		*tag = tagFromMetadata(*metadata)
	}
	if *tag == "" {
		fmt.Fprintln(os.Stderr, "error: -tag is required (no version in "+*metadata+")")
		os.Exit(2)
	}
	tmpl, err := os.ReadFile(*manifest)
	if err == nil {
		var f *os.File
		if f, err = os.Open(*sums); err == nil {
			defer f.Close()
			var checksums map[string]string
			if checksums, err = parseChecksums(f); err == nil {
				var out []byte
				if out, err = render(string(tmpl), *tag, checksums); err == nil {
					_, err = os.Stdout.Write(out)
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
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
