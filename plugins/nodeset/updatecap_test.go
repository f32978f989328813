package nodeset

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// TestSyncRollingUpdateCapped (issue 58): a rolling update retires at most
// burst pods per sync, as docs/security.md's bounds table says; outdated
// pods that are not available were all retired at once before (they cost
// none of maxUnavailable).
func TestSyncRollingUpdateCapped(t *testing.T) {
	const n = 600
	ns := testNodeSet(n)
	nodes := map[string]slurm.NodeState{}
	var pods []runtime.Object
	for i := range n {
		p := newPod(ns, nil, i, "outdated")
		p.UID = types.UID(p.Name + "-uid")
		p.Status.Phase = corev1.PodRunning // not ready: not available
		pods = append(pods, p)
		nodes[p.Name] = slurm.NodeState{Name: p.Name, Base: "idle"}
	}
	sl := &fakeSlurm{nodes: nodes}
	f := newFakeNodeSetController(t, sl, ns, pods...)
	f.sync(t)
	if got := len(sl.drains); got != burst {
		t.Errorf("one sync drained %d outdated pods, want %d (burst)", got, burst)
	}
	cordons := 0
	for _, w := range f.podWrites() {
		if _, err := fmt.Sscanf(w, "cordon %s", new(string)); err == nil {
			cordons++
		}
	}
	if cordons > burst {
		t.Errorf("one sync cordoned %d pods, want at most %d", cordons, burst)
	}
}
