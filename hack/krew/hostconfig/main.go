// Command hostconfig writes a copy of .goreleaser.yaml that builds for
// this machine's platform only, and whose krew manifest step (hack/krew)
// keeps the platforms it has archives for (-partial). 'make release-check'
// runs goreleaser's snapshot with it, so 'make test' checks a real
// goreleaser archive and manifest without cross-compiling five platforms.
//
//	go run ./hack/krew/hostconfig -in .goreleaser.yaml -out bin/goreleaser-host.yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"sigs.k8s.io/yaml"
)

func main() {
	in := flag.String("in", ".goreleaser.yaml", "goreleaser configuration")
	out := flag.String("out", "", "where to write the copy for this platform")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "error: usage: hostconfig -in .goreleaser.yaml -out FILE")
		os.Exit(2)
	}
	b, err := os.ReadFile(*in)
	if err == nil {
		b, err = hostOnly(b, runtime.GOOS, runtime.GOARCH)
	}
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// hostOnly restricts every build to goos/goarch and adds -partial to the
// krew manifest signing step.
func hostOnly(config []byte, goos, goarch string) ([]byte, error) {
	var c map[string]any
	if err := yaml.Unmarshal(config, &c); err != nil {
		return nil, err
	}
	builds, _ := c["builds"].([]any)
	if len(builds) == 0 {
		return nil, fmt.Errorf("no builds")
	}
	for _, b := range builds {
		m, ok := b.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a build is not a map")
		}
		m["goos"], m["goarch"] = []string{goos}, []string{goarch}
	}
	found := false
	signs, _ := c["signs"].([]any)
	for _, s := range signs {
		m, ok := s.(map[string]any)
		if !ok || m["id"] != "krew-manifest" {
			continue
		}
		args, _ := m["args"].([]any)
		m["args"] = append(args, "-partial")
		found = true
	}
	if !found {
		return nil, fmt.Errorf("no signs entry krew-manifest")
	}
	return yaml.Marshal(c)
}
