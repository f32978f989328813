package cptest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
)

// SharedDirEnv names the directory holding upstream's own CRDs under
// upstream/<project>-crds. Without it, the directory "shared" beside the
// repository is used, which is where CI puts it.
const SharedDirEnv = "KUBECTL_VC_SHARED_DIR"

// UpstreamCRDs returns the directory of upstream's own CRDs for sub
// ("volcano-crds", "slinky-crds"). They come from the Volcano and Slinky
// repositories, which neither this repository nor the Go module proxy
// provides, so a plain clone does not have them: there the test is skipped
// with a line saying what was not checked and how to provide the files.
// Under CI=true their absence fails the test instead, so CI never stops
// checking compatibility without anyone noticing.
func UpstreamCRDs(t testing.TB, sub string) string {
	t.Helper()
	dir, ok, err := UpstreamDir(sub)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		msg := "upstream " + sub + " not found at " + dir + ": compatibility with upstream's own CRDs NOT checked; " +
			"put upstream/" + sub + "/*.yaml under the directory named by " + SharedDirEnv + " (see docs/development.md)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: required)")
		}
		t.Skip(msg)
	}
	return dir
}

// UpstreamDir is where upstream's CRDs for sub are looked for, and whether
// they are there, for a test that goes on without them (saying so) rather
// than skip.
func UpstreamDir(sub string) (dir string, ok bool, err error) {
	base := os.Getenv(SharedDirEnv)
	if base == "" {
		root, err := controlplane.RepoRoot()
		if err != nil {
			return "", false, err
		}
		base = filepath.Join(root, "..", "shared")
	}
	dir = filepath.Join(base, "upstream", sub)
	_, err = os.Stat(dir)
	return dir, err == nil, nil
}
