package nodeset

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset/podcontrol"
)

// TestCreatePodsSlowStart is pure logic (a fake clientset counts calls):
// batches grow 1, 2, 4, ...; the first failing batch stops the rest, and
// the expectations keep only the creations that really happened.
func TestCreatePodsSlowStart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failAt    map[string]bool
		attempted int
		pending   int
	}{
		{"all fail", map[string]bool{"w-0": true}, 1, 0},
		{"third batch fails", map[string]bool{"w-4": true}, 7, 6},
		{"none fails", nil, 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			var mu sync.Mutex
			attempted := 0
			kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
				mu.Lock()
				attempted++
				mu.Unlock()
				if tc.failAt[pod.Name] {
					return true, nil, errors.New("admission says no")
				}
				return false, nil, nil
			})
			c := New(Config{})
			c.kube, c.podControl, c.recorder = kube, podcontrol.New(kube, FieldManager), &record.FakeRecorder{}
			ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "x", UID: "u"}}
			ords := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
			err := c.createPods(context.Background(), "x/w", ns, ords, "w-1")
			if (err != nil) != (tc.failAt != nil) {
				t.Fatalf("err = %v", err)
			}
			if attempted != tc.attempted {
				t.Fatalf("attempted %d creates, want %d", attempted, tc.attempted)
			}
			for range tc.pending {
				if c.exp.satisfied("x/w") {
					t.Fatal("expectations satisfied before every real creation was observed")
				}
				c.exp.CreationObserved("x/w")
			}
			if !c.exp.satisfied("x/w") {
				t.Fatal("expectations still pending after the real creations were observed")
			}
		})
	}
}
