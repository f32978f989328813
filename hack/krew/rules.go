package main

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// Plugin is a krew index manifest, the fields krew reads. krew's own Go
// module (sigs.k8s.io/krew) is not a dependency: the rules below are those
// of its index validation (pkg/index/validation) and of krew-index's
// checks, written here.
type Plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage,omitempty"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description,omitempty"`
		Caveats          string     `json:"caveats,omitempty"`
		Platforms        []Platform `json:"platforms"`
	} `json:"spec"`
}

// Platform is one installable archive and the os/arch it is for.
type Platform struct {
	Selector *metav1.LabelSelector `json:"selector"`
	URI      string                `json:"uri"`
	Sha256   string                `json:"sha256"`
	Bin      string                `json:"bin"`
	Files    []FileOperation       `json:"files,omitempty"`
}

// FileOperation copies what matches From (a glob in the unpacked archive)
// to To in the plugin's installation directory.
type FileOperation struct {
	From string `json:"from"`
	To   string `json:"to"`
}

const (
	apiVersion = "krew.googlecontainertools.github.com/v1alpha2"
	kind       = "Plugin"
)

var (
	safeName = regexp.MustCompile(`^[\w-]+$`)
	sha256Re = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// Platforms krew runs on (GOOS/GOARCH as krew reports them): no two
	// platforms of a manifest may match one of them.
	krewOS   = []string{"darwin", "linux", "windows", "freebsd"}
	krewArch = []string{"386", "amd64", "arm", "arm64", "ppc64le", "s390x"}
)

// parse reads a manifest strictly: an unknown field is a typo krew would
// ignore silently.
func parse(b []byte) (*Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("manifest: %v", err)
	}
	return &p, nil
}

// Validate applies the index rules to a manifest; fileName, when not
// empty, is the file it is kept in (the index holds plugins/<name>.yaml).
// It returns every violation, not only the first.
func Validate(p *Plugin, fileName string) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.APIVersion != apiVersion {
		add("apiVersion is %q, want %q", p.APIVersion, apiVersion)
	}
	if p.Kind != kind {
		add("kind is %q, want %q", p.Kind, kind)
	}
	name := p.Metadata.Name
	if !safeName.MatchString(name) {
		add("metadata.name %q is not a plugin name (letters, digits, '_' and '-')", name)
	}
	if fileName != "" && path.Base(fileName) != name+".yaml" {
		add("file %s holds plugin %q: the index wants it in %s.yaml", path.Base(fileName), name, name)
	}
	if !strings.HasPrefix(p.Spec.Version, "v") {
		add("spec.version %q does not start with 'v'", p.Spec.Version)
	} else if _, err := version.ParseSemantic(p.Spec.Version); err != nil {
		add("spec.version %q is not a semantic version: %v", p.Spec.Version, err)
	}
	if p.Spec.ShortDescription == "" {
		add("spec.shortDescription is empty")
	}
	if p.Spec.Homepage == "" || !isHTTPS(p.Spec.Homepage) {
		add("spec.homepage %q is not an https URL", p.Spec.Homepage)
	}
	if len(p.Spec.Platforms) == 0 {
		add("spec.platforms is empty")
	}
	uris := map[string]int{}
	for i, pl := range p.Spec.Platforms {
		for _, err := range validatePlatform(pl) {
			add("platform %d (%s): %v", i, path.Base(pl.URI), err)
		}
		if j, dup := uris[pl.URI]; dup {
			add("platforms %d and %d install the same archive %s: one platform per archive", j, i, pl.URI)
		}
		uris[pl.URI] = i
	}
	errs = append(errs, overlappingSelectors(p.Spec.Platforms)...)
	return errs
}

func isHTTPS(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

func validatePlatform(pl Platform) []error {
	var errs []error
	if !isHTTPS(pl.URI) {
		errs = append(errs, fmt.Errorf("uri %q is not an https URL", pl.URI))
	}
	if !sha256Re.MatchString(pl.Sha256) {
		errs = append(errs, fmt.Errorf("sha256 %q is not 64 lowercase hex digits", pl.Sha256))
	}
	if pl.Bin == "" {
		errs = append(errs, errors.New("bin is empty"))
	}
	if pl.Files != nil && len(pl.Files) == 0 {
		errs = append(errs, errors.New("files is empty: leave it out or list files"))
	}
	for _, f := range pl.Files {
		if f.From == "" || f.To == "" {
			errs = append(errs, fmt.Errorf("files entry %+v needs both from and to", f))
		}
	}
	sel, err := selector(pl.Selector)
	if err != nil {
		return append(errs, err)
	}
	// krew runs bin on Windows by its name: without .exe it is no program.
	if sel.Matches(labels.Set{"os": "windows", "arch": "amd64"}) || sel.Matches(labels.Set{"os": "windows", "arch": "arm64"}) {
		if !strings.HasSuffix(pl.Bin, ".exe") {
			errs = append(errs, fmt.Errorf("bin %q of a windows platform does not end in .exe", pl.Bin))
		}
	}
	return errs
}

// selector turns a platform's selector into one that can be matched; krew
// refuses a missing or empty one (it would match every platform).
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return nil, errors.New("selector is missing")
	}
	if len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return nil, errors.New("selector is empty")
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fmt.Errorf("selector: %v", err)
	}
	return sel, nil
}

// overlappingSelectors reports every os/arch krew runs on that more than
// one platform matches: krew would install whichever comes first.
func overlappingSelectors(platforms []Platform) []error {
	var errs []error
	for _, os := range krewOS {
		for _, arch := range krewArch {
			var matched []string
			for _, pl := range platforms {
				sel, err := selector(pl.Selector)
				if err == nil && sel.Matches(labels.Set{"os": os, "arch": arch}) {
					matched = append(matched, path.Base(pl.URI))
				}
			}
			if len(matched) > 1 {
				errs = append(errs, fmt.Errorf("%s/%s is matched by %d platforms (%s): selectors must not overlap", os, arch, len(matched), strings.Join(matched, ", ")))
			}
		}
	}
	return errs
}
