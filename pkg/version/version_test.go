package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

func TestResolve(t *testing.T) {
	bi := func(v, rev string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kubectl-vc/kubectl-vc", Version: v}}
		if rev != "" {
			b.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}
		}
		return b
	}
	cases := []struct {
		ldV, ldC string
		bi       *debug.BuildInfo
		v, c     string
	}{
		{"v0.1.0-3-gbff520f", "bff520f0", bi("v0.1.0", "other"), "v0.1.0-3-gbff520f", "bff520f0"}, // make build
		{"", "", bi("v0.2.0", "abc"), "v0.2.0", "abc"},                                            // go install ...@v0.2.0
		{"", "", bi("v0.2.0-rc.1", ""), "v0.2.0-rc.1", "unknown"},
		{"", "", bi("v0.0.0-20251123112000-8e44303abcde", "8e44303"), Dev, "8e44303"}, // pseudo-version
		{"", "", bi("v0.1.1-0.20251123112000-8e44303abcde", ""), Dev, "unknown"},      // pseudo-version after a tag
		{"", "", bi("v0.1.0+dirty", ""), Dev, "unknown"},                              // go build, dirty tree
		{"", "", bi("(devel)", ""), Dev, "unknown"},
		{"", "", nil, Dev, "unknown"},
	}
	for _, c := range cases {
		v, cm := resolve(c.ldV, c.ldC, c.bi)
		if v != c.v || cm != c.c {
			t.Errorf("resolve(%q, %q, %v) = %q, %q; want %q, %q", c.ldV, c.ldC, c.bi, v, cm, c.v, c.c)
		}
	}
}

// TestMakefileVersion runs the Makefile's VERSION ('make version') in git
// repositories of known history: semantic versions from tags, and
// v0.0.0-<n>-g<commit> before the first one.
func TestMakefileVersion(t *testing.T) {
	for _, tool := range []string{"git", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	makefile, err := filepath.Abs("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	version := func() string {
		t.Helper()
		v := run("make", "-s", "--no-print-directory", "-f", makefile, "version")
		if !strings.HasPrefix(v, "v") {
			t.Errorf("version %q does not start with v", v)
		} else if _, err := utilversion.ParseSemantic(v); err != nil {
			t.Errorf("version %q is not semantic: %v", v, err)
		}
		return v
	}
	if v := version(); v != Dev {
		t.Errorf("outside git: %q, want %s", v, Dev)
	}
	run("git", "init", "-q")
	if v := version(); v != Dev {
		t.Errorf("no commit: %q, want %s", v, Dev)
	}
	for i := 0; i < 3; i++ {
		run("git", "commit", "-q", "--allow-empty", "-m", "c")
	}
	short := run("git", "rev-parse", "--short", "HEAD")
	if v, want := version(), "v0.0.0-3-g"+short; v != want {
		t.Errorf("before the first tag: %q, want %q", v, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("git", "add", "f")
	if v, want := version(), "v0.0.0-3-g"+short+"-dirty"; v != want {
		t.Errorf("uncommitted change: %q, want %q", v, want)
	}
	run("git", "commit", "-q", "-m", "f")
	run("git", "tag", "not-a-version")
	run("git", "tag", "v0.1.0", "HEAD~1")
	short = run("git", "rev-parse", "--short", "HEAD")
	if v, want := version(), "v0.1.0-1-g"+short; v != want {
		t.Errorf("after tag v0.1.0: %q, want %q", v, want)
	}
	run("git", "tag", "-a", "-m", "release", "v0.2.0")
	if v := version(); v != "v0.2.0" {
		t.Errorf("on tag v0.2.0: %q", v)
	}
}
