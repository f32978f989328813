package install

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
	"github.com/kubectl-vc/kubectl-vc/pkg/version"
)

// DefaultImage is the image of this binary's own version, which
// 'install --serve' deploys unless --image says otherwise: the repository
// of the releases (and of 'make image') with the version as tag, whatever
// the version is. A dev build's version names an image no registry has;
// the help text says to pass --image then.
func DefaultImage() string {
	return manifests.ImageRepository + ":" + version.Get().GitVersion
}

// IsRelease says whether a version is a release tag (v1.2.3, v1.2.3-rc.1),
// as opposed to a dev build (v0.0.0-dev, v1.2.3-4-gabcdef0-dirty, a
// goreleaser snapshot), whose image no registry has.
func IsRelease(v string) bool { return releaseVersion().MatchString(v) }

// The regular expressions are compiled on first use, not when the program
// starts: every command would pay for them (about 1 ms of the start of
// 'kubectl-vc version --client', GODEBUG=inittrace=1), and only install
// and serve's image checks use them.
var releaseVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.?[0-9]+)?$`)
})

// The grammar of an image reference (github.com/distribution/reference):
// [domain[:port]/]path[:tag][@digest], path in lower case.
var (
	refDomain    = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?|\[[a-fA-F0-9:]+\](?::[0-9]+)?`
	refComponent = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	refTag       = `[\w][\w.-]{0,127}`
	refDigest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	imageRef     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?P<name>(?:(?:` + refDomain + `)/)?` + refComponent + `(?:/` + refComponent + `)*)` +
			`(?::(?P<tag>` + refTag + `))?(?:@(?P<digest>` + refDigest + `))?$`)
	})
)

// maxImageLen bounds what is checked (and echoed in an error): a name is
// at most 255 characters, a tag 128, a digest about 100.
const maxImageLen = 512

// ValidateImage checks that ref is an image reference with a tag or a
// digest. An untagged reference means :latest, which says nothing about
// the version that runs, so it is refused.
func ValidateImage(ref string) error {
	switch {
	case ref == "":
		return fmt.Errorf("is empty: name an image, e.g. %s:v0.1.0", manifests.ImageRepository)
	case len(ref) > maxImageLen:
		return fmt.Errorf("is %d characters long, more than an image reference can be (%d)", len(ref), maxImageLen)
	}
	re := imageRef()
	m := re.FindStringSubmatch(ref)
	if m == nil {
		return fmt.Errorf("%q is not an image reference: want [registry/]repository:tag or @sha256:digest, the repository in lower case", ref)
	}
	if n := m[re.SubexpIndex("name")]; len(n) > 255 {
		return fmt.Errorf("%q: the repository name is longer than 255 characters", ref)
	}
	if m[re.SubexpIndex("tag")] == "" && m[re.SubexpIndex("digest")] == "" {
		return fmt.Errorf("%q has no tag or digest: an untagged image is :latest, which does not say which version runs; add :<version>", ref)
	}
	return nil
}

// setServeImage sets the image of the serve container in the Deployment of
// the serve set: the embedded manifest is a template for it.
func setServeImage(objs []*unstructured.Unstructured, image string) error {
	return editServeContainer(objs, func(cm map[string]any) error {
		cm["image"] = image
		return nil
	})
}

// imageNote is what install says about the image it deploys when the
// user named none and this build is not a release.
func imageNote(image string) string {
	v := version.Get().GitVersion
	if IsRelease(v) {
		return ""
	}
	return fmt.Sprintf("this build (%s) is not a release: the serve Deployment runs %s, which no registry has; "+
		"build it with 'make image' and load it into the nodes, or pass --image", strings.TrimSpace(v), image)
}
