package nodeset

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// FuzzSyncDecisions drives one sync of a NodeSet through the fake
// clientset harness, over pods of ordinals 0 to 15 in every mix of states
// the masks give (bit i for ordinal i): present, cordoned, not ready,
// terminating, finished, on an old revision, held by another owner, and
// their Slurm nodes busy or marked DRAIN; replicas from 0 to 63 (2^31-1 is
// TestSyncScaleOutHugeReplicas's: one burst of creations takes seconds
// here), and an ordinal padding. Whatever the mix, the sync's writes keep to:
//   - no more creations than the burst, nor than the missing pods;
//   - each creation a new name, of a valid ordinal, none a name a pod
//     already holds (terminating, finished, another owner's);
//   - no deletion of a pod whose Slurm node is busy, unless the pod has
//     finished (a dead slurmd); none of a terminating pod or another
//     owner's;
//   - no write at all when the padding makes names no hostname can be.
func FuzzSyncDecisions(f *testing.F) {
	f.Add(uint16(3), uint8(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0))
	f.Add(uint16(2), uint8(0), uint16(0b111), uint16(0b001), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0b101), uint16(0))
	f.Add(uint16(5), uint8(2), uint16(0b1011), uint16(0), uint16(0b10), uint16(0b1000), uint16(0), uint16(0b1), uint16(0b100), uint16(0b11), uint16(0b1))
	f.Add(uint16(1), uint8(0), uint16(0xffff), uint16(0xf0), uint16(0x0f), uint16(0x100), uint16(0x200), uint16(0x3000), uint16(0), uint16(0x5555), uint16(0xaaaa))
	f.Add(uint16(4), uint8(0), uint16(0b1111), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0b1111), uint16(0), uint16(0b1010), uint16(0))
	f.Add(uint16(0xffff), uint8(0), uint16(0b101), uint16(0), uint16(0), uint16(0b1), uint16(0), uint16(0), uint16(0b10000), uint16(0), uint16(0))
	f.Add(uint16(3), uint8(200), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, replicas uint16, padding uint8, present, cordoned, notReady, terminating, finished, outdated, foreign, busy, drainFlag uint16) {
		ns := testNodeSet(int32(replicas % 64))
		ns.Spec.OrdinalPadding = int(padding % 70)
		bit := func(mask uint16, i int) bool { return mask&(1<<i) != 0 }

		var objs []runtime.Object
		names := map[string]bool{}     // every pod's name
		deletable := map[string]bool{} // a delete of these breaks no rule
		active := 0
		nodes := map[string]slurm.NodeState{}
		for i := range 16 {
			if !bit(present, i) {
				continue
			}
			p := runningPod(t, ns, i)
			if bit(cordoned, i) {
				p.Annotations[slinkyv1beta1.AnnotationPodCordon] = "true"
			}
			if bit(notReady, i) {
				p.Status.Conditions = nil
			}
			if bit(outdated, i) {
				p.Labels[slinkyv1beta1.LabelRevisionHash] = "old"
			}
			switch {
			case bit(foreign, i):
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "x", UID: "x-uid", Controller: ptr.To(true)}}
			case bit(terminating, i):
				p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
				p.Finalizers = []string{"test/keep"}
			case bit(finished, i):
				p.Status.Phase = corev1.PodFailed
				deletable[p.Name] = true
			default:
				active++
			}
			st := slurm.NodeState{Name: p.Name, Base: "idle"}
			if bit(busy, i) {
				st.Base = "allocated"
			}
			if bit(drainFlag, i) {
				st.Flags = []string{"DRAIN"}
			}
			if !st.Busy() && !bit(foreign, i) && !bit(terminating, i) {
				deletable[p.Name] = true
			}
			nodes[p.Name] = st
			names[p.Name] = true
			objs = append(objs, p)
		}
		sl := &fakeSlurm{nodes: nodes, byState: true}
		fc := newFakeNodeSetController(t, sl, ns, objs...)
		_, _ = fc.c.sync(context.Background(), testKey) // errors are fine; writes are checked

		creates := 0
		for _, a := range fc.kube.Actions() {
			if a.GetResource().Resource != "pods" {
				continue
			}
			switch a := a.(type) {
			case clienttesting.CreateAction:
				pod := a.GetObject().(*corev1.Pod)
				creates++
				if names[pod.Name] {
					t.Fatalf("created %s, a name a pod holds already", pod.Name)
				}
				if ordinalOf(ns, pod) < 0 {
					t.Fatalf("created %s, no ordinal of %s", pod.Name, ns.Name)
				}
				names[pod.Name] = true
			case clienttesting.DeleteAction:
				if !deletable[a.GetName()] {
					t.Fatalf("deleted %s (Slurm: %+v; terminating, finished or another owner's: see the masks)", a.GetName(), nodes[a.GetName()])
				}
			}
		}
		if creates > burst || creates > max(0, int(*ns.Spec.Replicas)-active) {
			t.Fatalf("%d creations towards %d replicas with %d active pods (burst %d)", creates, *ns.Spec.Replicas, active, burst)
		}
		if ns.Spec.OrdinalPadding > maxOrdinalPadding(ns) {
			for _, a := range fc.kube.Actions() {
				if a.GetResource().Resource == "pods" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
					t.Fatalf("a NodeSet refused for its padding: %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
		}
	})
}
