package nodeset

import (
	"testing"

	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// TestSyncOutsideServedNamespaces: with --slurm-namespaces naming others,
// a NodeSet's sync writes its status and nothing else (no pod, claim,
// Service, budget, ConfigMap, revision; Slurm not asked); named, the same
// NodeSet is acted on at the next sync.
func TestSyncOutsideServedNamespaces(t *testing.T) {
	ns := testNodeSet(2)
	sl := &fakeSlurm{nodes: map[string]slurm.NodeState{"w-0": {Base: "idle"}, "w-1": {Base: "idle"}}}
	f := newFakeNodeSetController(t, sl, ns)
	f.c.flags.namespaces = []string{"elsewhere"}
	f.vc.ClearActions()
	f.sync(t)
	for _, a := range f.kube.Actions() {
		if a.GetVerb() != "list" && a.GetVerb() != "watch" && a.GetVerb() != "get" {
			t.Errorf("a NodeSet outside --slurm-namespaces made serve %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	var status int
	for _, a := range f.vc.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && p.GetSubresource() == "status" {
			status++
			continue
		}
		t.Errorf("a NodeSet outside --slurm-namespaces made serve %s %s", a.GetVerb(), a.GetResource().Resource)
	}
	if status != 1 {
		t.Errorf("%d status writes, want 1 (the NamespaceNotServed condition)", status)
	}
	if len(sl.drains) != 0 {
		t.Errorf("Slurm drained %v", sl.drains)
	}

	f.kube.ClearActions()
	f.c.flags.namespaces = []string{"elsewhere", ns.Namespace}
	f.sync(t)
	if w := f.podWrites(); len(w) != 2 {
		t.Errorf("named, the NodeSet got pod writes %v, want its two pods", w)
	}
}
