// Package version holds the build's version, set at link time with
// -ldflags "-X github.com/kubectl-vc/kubectl-vc/pkg/version.gitVersion=...".
//
// The version is semantic and comes from git tags (see the Makefile's
// VERSION): v0.1.0 on a tag, v0.1.0-3-gbff520f after it, v0.0.0-3-gbff520f
// before the first tag, -dirty with uncommitted changes. A binary built
// without the ldflags reports the module version Go recorded when that is
// a release (go install github.com/kubectl-vc/kubectl-vc/cmd/kubectl-vc@v0.1.0),
// else v0.0.0-dev.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
)

// Set by the linker (see Makefile and .goreleaser.yaml).
var (
	gitVersion = ""
	gitCommit  = ""
	buildDate  = "unknown"
)

// Dev is the version of a build that knows none.
const Dev = "v0.0.0-dev"

// Info describes this build.
type Info struct {
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	BuildDate  string `json:"buildDate"`
	GoVersion  string `json:"goVersion"`
	Platform   string `json:"platform"`
}

// Get returns the build's version information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	v, c := resolve(gitVersion, gitCommit, bi)
	return Info{
		GitVersion: v,
		GitCommit:  c,
		BuildDate:  buildDate,
		GoVersion:  runtime.Version(),
		Platform:   fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
}

// moduleRelease is a module version that is a release: no pseudo-version
// (v0.0.0-20250101000000-abcdef012345) and no +dirty or +incompatible.
var (
	moduleRelease = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	pseudoVersion = regexp.MustCompile(`[0-9]{14}-[0-9a-f]{12}$`)
)

// resolve picks the version and commit: the linker's when set, else what
// Go recorded in the binary (a release module version, the VCS revision).
func resolve(ldVersion, ldCommit string, bi *debug.BuildInfo) (version, commit string) {
	version, commit = ldVersion, ldCommit
	if bi != nil {
		if mv := bi.Main.Version; version == "" && moduleRelease.MatchString(mv) && !pseudoVersion.MatchString(mv) {
			version = mv
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && commit == "" {
				commit = s.Value
			}
		}
	}
	if version == "" {
		version = Dev
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}
