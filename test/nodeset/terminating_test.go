package nodeset

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// TestTerminatingPodDoesNotFreeze: a pod the controller deleted that takes
// long to go (here a finalizer holds it; a long grace period does the
// same) counts as deleted once it is terminating, as upstream counts it: the
// NodeSet scales out meanwhile, waiting only for that pod's own ordinal.
// The expectations timeout is an hour, so nothing but the terminating pod
// can unblock the NodeSet within the test.
func TestTerminatingPodDoesNotFreeze(t *testing.T) {
	e := startWithoutController(t, "term", 3)
	e.runControllerWith(controllerOptions{config: func(c *nodeset.Config) { c.ExpectationsTimeout = time.Hour }})
	e.NewNodeSet("term", 2)
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })

	hold := func(on bool) {
		patch := `{"metadata":{"finalizers":["test.kubectl-vc.io/hold"]}}`
		if !on {
			patch = `{"metadata":{"finalizers":null}}`
		}
		if _, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, "term-1", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hold(true)
	defer func() {
		if p, err := e.Kube.CoreV1().Pods(e.NS).Get(e.Ctx, "term-1", metav1.GetOptions{}); err == nil && len(p.Finalizers) > 0 {
			hold(false)
		}
	}()

	e.PatchNodeSet("term", `{"spec":{"replicas":1}}`)
	e.Eventually("term-1 drained and terminating", func() (bool, string) {
		p, err := e.Kube.CoreV1().Pods(e.NS).Get(e.Ctx, "term-1", metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp != nil, fmt.Sprint(err)
	})

	e.PatchNodeSet("term", `{"spec":{"replicas":3}}`)
	e.Eventually("term-2 created while term-1 terminates", func() (bool, string) {
		p := e.Pods()
		return names(p) == "term-0,term-2", names(p)
	})

	hold(false)
	e.Eventually("term-1 back once gone", func() (bool, string) {
		p := e.Pods()
		return names(p) == "term-0,term-1,term-2", names(p)
	})
}
