package nodeset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

// Whose Slurm serve acts on (docs/security.md, "The Slurm key: trust
// model"). Through Slinky's objects serve signs a token with a key Secret
// and sends it to a Service's address, both named by objects of the
// NodeSet's namespace: whoever may write those objects chooses the key and
// the address, without being able to read the Secret. So the cluster
// administrator names the namespaces whose writers are trusted with their
// Slurm (--slurm-namespaces); in any other namespace no Secret is read and
// nothing is sent. And within them the key Secret must opt in (a label, or
// Slinky's chart's own Secret), so that a Controller cannot make serve sign
// with a Secret that holds something else.

// Condition reasons of SlurmReachable=False.
const (
	ReasonNotTrusted    = "SlurmNotTrusted"
	ReasonKeyNotTrusted = "KeyNotTrusted"
)

// addTrustFlags adds --slurm-namespaces.
func (c *Controller) addTrustFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.flags.namespaces, "slurm-namespaces", nil,
		"Namespaces whose NodeSets serve acts on (comma-separated). When given, only these: elsewhere a NodeSet "+
			"says SlurmReachable=False, reason "+ReasonNotServed+", serve makes nothing for it and reads no Secret "+
			"(install --slurm-namespaces grants the NodeSet writes only there). When not given, Slinky's objects are "+
			"used in no namespace (reason "+ReasonNotTrusted+") and --slurm-rest-url or --slurm-conf serve every namespace. "+
			"Every principal who may write NodeSets, Controllers, RestApis or Services in them is trusted with their Slurm key")
}

// validateNamespaces checks --slurm-namespaces.
func (f *slurmFlags) validateNamespaces() error {
	for _, ns := range f.namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("invalid --slurm-namespaces %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	return nil
}

// trusted returns nil where serve may act on the Slurm of a NodeSet in ns,
// else why not. Named namespaces bound every way of reaching Slurm; with
// none named, serve's own flags (--slurm-rest-url, --slurm-conf: a Slurm the
// administrator chose) serve every namespace, and Slinky's objects none.
func (c *Controller) trusted(ns string, viaSlinky bool) error {
	f := c.flags
	if slices.Contains(f.namespaces, ns) {
		return nil
	}
	if len(f.namespaces) == 0 {
		if !viaSlinky {
			return nil
		}
		return missing(ReasonNotTrusted, "serve uses Slinky's objects (Controller, RestApi, the JWT key Secret) only in the namespaces "+
			"its --slurm-namespaces names, and it names none: a cluster administrator adds %s to it "+
			"(kubectl vc install --serve --slurm-namespaces=%s) to trust this namespace with its Slurm key", ns, ns)
	}
	return missing(ReasonNotTrusted, "serve acts on Slurm only in the namespaces its --slurm-namespaces names (%s), not in %s: "+
		"a cluster administrator adds it to trust this namespace with its Slurm key", strings.Join(f.namespaces, ","), ns)
}

// keyTrusted returns nil where the endpoint's key Secret opted in.
func keyTrusted(ep *slinky.Endpoint) error {
	if ep.KeyTrusted {
		return nil
	}
	return missing(ReasonKeyNotTrusted, "JWT key Secret %s/%s is not marked for signing Slurm tokens: serve signs only with a Secret "+
		"labelled %s=true (or the one Slinky's Helm chart creates, key %q), so that a Controller cannot name any Secret; "+
		"whoever may read the Secret labels it: kubectl label secret -n %s %s %s=true",
		ep.Namespace, ep.Secret, slinky.KeyLabel, "jwt.key", ep.Namespace, ep.Secret, slinky.KeyLabel)
}

// logTrust says at start whom serve trusts with Slurm keys.
func (c *Controller) logTrust(logger klog.Logger) {
	if len(c.flags.namespaces) == 0 {
		if c.source.fixed == nil {
			logger.Info("nodeset controller: no --slurm-namespaces: the Slurm of NodeSets found through Slinky's objects is acted on in no namespace")
		}
		return
	}
	logger.Info("nodeset controller: Slurm trusted in these namespaces; whoever may write NodeSets, Controllers, RestApis or Services there "+
		"chooses which labelled key Secret serve signs with and where the token goes", "namespaces", c.flags.namespaces)
}
