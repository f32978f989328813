package main

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestHostOnly: the copy of the real configuration builds only the given
// platform and renders a partial manifest; nothing else changes.
func TestHostOnly(t *testing.T) {
	orig, err := os.ReadFile("../../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := hostOnly(orig, "linux", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := yaml.Unmarshal(orig, &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(out, &b); err != nil {
		t.Fatal(err)
	}
	for i, build := range b["builds"].([]any) {
		m := build.(map[string]any)
		if len(m["goos"].([]any)) != 1 || m["goos"].([]any)[0] != "linux" || len(m["goarch"].([]any)) != 1 || m["goarch"].([]any)[0] != "arm64" {
			t.Errorf("build %d: %v %v", i, m["goos"], m["goarch"])
		}
		orig := a["builds"].([]any)[i].(map[string]any)
		m["goos"], m["goarch"] = orig["goos"], orig["goarch"]
	}
	sign := b["signs"].([]any)[0].(map[string]any)
	args := sign["args"].([]any)
	if args[len(args)-1] != "-partial" {
		t.Errorf("krew step args %v", args)
	}
	sign["args"] = args[:len(args)-1]
	ja, _ := yaml.Marshal(a)
	jb, _ := yaml.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("more changed than the platforms and -partial:\n%s", jb)
	}
	if _, err := hostOnly([]byte("builds: []\n"), "linux", "amd64"); err == nil || !strings.Contains(err.Error(), "no builds") {
		t.Errorf("no builds: %v", err)
	}
}
