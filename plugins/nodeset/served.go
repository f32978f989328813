package nodeset

import (
	"context"
	"slices"
	"strings"

	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// Where serve acts (docs/security.md, "What --slurm-namespaces limits").
// When the administrator names the namespaces serve serves
// (--slurm-namespaces), `kubectl vc install --serve` grants the NodeSet
// controller's writes (pods, claims, Services, PodDisruptionBudgets,
// ConfigMaps, revisions) only there, in a Role per namespace. A NodeSet
// elsewhere is then not acted on at all: serve writes only its status,
// saying why, so that a tenant of another namespace learns what to ask for
// instead of seeing a stream of Forbidden errors, and nothing serve could
// write with a wider grant (a manual ClusterRole) appears there either.
// The check runs at every sync: naming the namespace and restarting serve
// makes the next sync act.

// ReasonNotServed is the SlurmReachable=False reason of a NodeSet outside
// --slurm-namespaces.
const ReasonNotServed = "NamespaceNotServed"

// served tells whether serve acts on the NodeSets of namespace ns: every
// namespace when --slurm-namespaces names none (then serve's ClusterRole
// holds the writes), else only those it names.
func (c *Controller) served(ns string) bool {
	return len(c.flags.namespaces) == 0 || slices.Contains(c.flags.namespaces, ns)
}

// syncNotServed is the whole sync of a NodeSet serve does not serve: its
// status as it was, with SlurmReachable=False saying why. The counts and
// hashes stay as last written: serve does not read what it does not act on.
func (s *nodeSetSync) syncNotServed(ctx context.Context) error {
	ns := s.set.Namespace
	s.setFalseWithWarning(conditions.SlurmReachable, ReasonNotServed, "NamespaceNotServed",
		"serve acts only on the NodeSets of the namespaces its --slurm-namespaces names ("+strings.Join(s.c.flags.namespaces, ",")+
			"), not "+ns+": it makes no pods, claims, Service, PodDisruptionBudget, ConfigMap or revisions here "+
			"(kubectl vc install --serve grants those writes only in the namespaces named); a cluster administrator adds "+ns+
			" to trust this namespace's writers with its Slurm key and with those writes")
	st := *s.set.Status.DeepCopy()
	if st.CollisionCount == nil {
		st.CollisionCount = new(int32)
	}
	st.Conditions = s.mergedConditions()
	return s.applyStatus(ctx, st)
}
