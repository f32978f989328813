package nodeset

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestScaleOutFromZero: 0 → 3 pods with stable names, Slinky labels, the
// revision label, a controller owner reference; the headless Service and
// PDB; status counts including Slurm idle nodes; a deleted pod comes back
// under its own ordinal (the lowest free one).
func TestScaleOutFromZero(t *testing.T) {
	e := start(t, "compute", 4)
	created := e.NewNodeSet("compute", 0)

	e.Eventually("status of the empty NodeSet", func() (bool, string) {
		st := e.Get("compute").Status
		return st.NodeSetHash != "" && st.Selector != "" && st.ObservedGeneration == created.Generation, fmt.Sprintf("%+v", st)
	})
	if n := len(e.Pods()); n != 0 {
		t.Fatalf("replicas 0 made %d pods", n)
	}
	svc, err := e.Kube.CoreV1().Services(e.NS).Get(e.Ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector[slinkyv1beta1.LabelAppInstance] != "compute" || !metav1.IsControlledBy(svc, created) {
		t.Fatalf("service not headless/selecting/owned: %+v", svc)
	}
	pdb, err := e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 0 || !metav1.IsControlledBy(pdb, created) ||
		pdb.Spec.Selector.MatchLabels[slinkyv1beta1.LabelPodProtect] != "true" {
		t.Fatalf("pdb: %+v", pdb.Spec)
	}

	e.PatchNodeSet("compute", `{"spec":{"replicas":3}}`)
	e.Eventually("three pods", func() (bool, string) {
		p := e.Pods()
		return names(p) == "compute-0,compute-1,compute-2", names(p)
	})
	hash := e.Get("compute").Status.NodeSetHash
	for i, name := range []string{"compute-0", "compute-1", "compute-2"} {
		p := e.Pods()[name]
		if p.Labels[slinkyv1beta1.LabelPodIndex] != fmt.Sprint(i) || p.Labels[slinkyv1beta1.LabelPodHostname] != name ||
			p.Labels["team"] != "hpc" || p.Labels[slinkyv1beta1.LabelRevisionHash] != hash {
			t.Errorf("%s labels: %v (hash %s)", name, p.Labels, hash)
		}
		if !metav1.IsControlledBy(p, created) {
			t.Errorf("%s not controlled by the NodeSet: %v", name, p.OwnerReferences)
		}
		if p.Spec.Hostname != name || p.Spec.Subdomain != "compute" || len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Name != "slurmd" {
			t.Errorf("%s spec: hostname %q subdomain %q containers %v", name, p.Spec.Hostname, p.Spec.Subdomain, p.Spec.Containers)
		}
	}
	e.MarkAllReady()
	e.Eventually("status counts", func() (bool, string) {
		st := e.Get("compute").Status
		return st.Replicas == 3 && st.ReadyReplicas == 3 && st.AvailableReplicas == 3 && st.UpdatedReplicas == 3 &&
			st.Desired == 3 && st.SlurmIdle == 3 && st.SlurmDrain == 0 && st.UnavailableReplicas == 0, fmt.Sprintf("%+v", st)
	})

	// A lost pod comes back under the lowest free ordinal, not a new one.
	oldUID := e.Pods()["compute-1"].UID
	if err := e.Kube.CoreV1().Pods(e.NS).Delete(e.Ctx, "compute-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("compute-1 re-created", func() (bool, string) {
		p := e.Pods()
		return names(p) == "compute-0,compute-1,compute-2" && p["compute-1"].UID != oldUID, names(p)
	})
}

// TestScaleInDrainsFirst: 3 → 1 while two Slurm nodes run jobs. The idle
// pod goes at once; a busy one is cordoned, its Slurm node DRAINING, its
// deadline annotated, and it stays until the job ends; the other busy pod
// is kept.
func TestScaleInDrainsFirst(t *testing.T) {
	e := start(t, "busy", 3)
	e.NewNodeSet("busy", 3)
	e.Eventually("three pods", func() (bool, string) { n := e.MarkAllReady(); return n == 3, fmt.Sprint(n) })
	var jobs []string
	for _, node := range []string{"busy-1", "busy-2"} {
		job, err := e.Slurm.Allocate(e.Ctx, node, 30)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	e.Eventually("allocated counted", func() (bool, string) {
		st := e.Get("busy").Status
		return st.SlurmAllocated == 2 && st.SlurmIdle == 1, fmt.Sprintf("%+v", st)
	})

	e.PatchNodeSet("busy", `{"spec":{"replicas":1}}`)
	e.Eventually("idle pod removed, busy pod cordoned with a deadline", func() (bool, string) {
		p := e.Pods()
		b2 := p["busy-2"]
		return names(p) == "busy-1,busy-2" && b2.Annotations[slinkyv1beta1.AnnotationPodCordon] == "true" &&
			b2.Annotations[slinkyv1beta1.AnnotationPodDeadline] != "", names(p)
	})
	if got := e.SlurmState("busy-2"); got != "DRAINING (kubectl-vc: scale-in)" {
		t.Fatalf("busy-2 in Slurm: %s", got)
	}
	if got := e.SlurmState("busy-1"); got != "ALLOCATED" {
		t.Fatalf("busy-1 must be left alone: %s", got)
	}
	e.Eventually("drain counted in status", func() (bool, string) {
		st := e.Get("busy").Status
		return st.SlurmDrain == 1 && st.Replicas == 2, fmt.Sprintf("%+v", st)
	})
	// The deadline was written by a sync that saw the node busy, and the
	// status by a later one: the pod survived syncs while DRAINING.
	if _, ok := e.Pods()["busy-2"]; !ok {
		t.Fatal("busy-2 deleted while its Slurm node was still running a job")
	}

	if err := e.Slurm.EndJob(e.Ctx, jobs[1], "busy-2"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("drained pod deleted", func() (bool, string) {
		p := e.Pods()
		return names(p) == "busy-1", names(p)
	})
	if _, ok := e.Pods()["busy-1"].Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
		t.Fatal("kept pod was cordoned")
	}
}

// TestNodeCordonDrainsSlurm: cordoning the Kubernetes node of a pod cordons
// the pod and drains its Slurm node; uncordoning resumes it. A cordon set
// by hand on the pod (what 'nodeset cordon' does) drains too, and its
// removal resumes.
func TestNodeCordonDrainsSlurm(t *testing.T) {
	e := start(t, "cord", 1)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kube-node-" + e.NS}}
	if _, err := e.Kube.CoreV1().Nodes().Create(e.Ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Kube.CoreV1().Nodes().Delete(e.Ctx, node.Name, metav1.DeleteOptions{}) })
	e.NewNodeSet("cord", 1)
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	// Play scheduler and kubelet.
	err := e.Kube.CoreV1().Pods(e.NS).Bind(e.Ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "cord-0"}, Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.MarkAllReady()

	setUnschedulable := func(v bool) {
		patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, v)
		if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setUnschedulable(true)
	want := "DRAINED (kubectl-vc: kubernetes node " + node.Name + " cordoned)"
	e.Eventually("pod cordoned and Slurm node drained", func() (bool, string) {
		p := e.Pods()["cord-0"]
		st := e.SlurmState("cord-0")
		return p.Annotations[slinkyv1beta1.AnnotationPodCordon] == "true" && st == want, st
	})
	setUnschedulable(false)
	e.Eventually("pod uncordoned and Slurm node resumed", func() (bool, string) {
		_, cordoned := e.Pods()["cord-0"].Annotations[slinkyv1beta1.AnnotationPodCordon]
		st := e.SlurmState("cord-0")
		return !cordoned && st == "IDLE", st
	})

	// By hand, on the pod.
	annotate := func(v string) {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, slinkyv1beta1.AnnotationPodCordon, v)
		if _, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, "cord-0", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	annotate(`"true"`)
	e.Eventually("manual cordon drains", func() (bool, string) {
		st := e.SlurmState("cord-0")
		return st == "DRAINED (kubectl-vc: pod cordoned)", st
	})
	annotate("null")
	e.Eventually("manual uncordon resumes", func() (bool, string) {
		st := e.SlurmState("cord-0")
		return st == "IDLE", st
	})

	// An administrator's own drain is never resumed by the controller.
	if _, err := e.Slurm.Scontrol(e.Ctx, "update", "nodename=cord-0", "state=drain", "reason=bad dimm"); err != nil {
		t.Fatal(err)
	}
	annotate(`"true"`)
	annotate("null")
	e.Eventually("status sees the admin drain", func() (bool, string) {
		st := e.Get("cord").Status
		return st.SlurmDrain == 1, fmt.Sprintf("%+v", st)
	})
	if st := e.SlurmState("cord-0"); st != "DRAINED (bad dimm)" {
		t.Fatalf("admin drain changed: %s", st)
	}
}

func revisionsOf(e *env, name string) map[string]*appsv1.ControllerRevision {
	e.T.Helper()
	list, err := e.Kube.AppsV1().ControllerRevisions(e.NS).List(e.Ctx, metav1.ListOptions{LabelSelector: slinkyv1beta1.LabelAppInstance + "=" + name})
	if err != nil {
		e.T.Fatal(err)
	}
	out := map[string]*appsv1.ControllerRevision{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// TestRollingUpdateOneAtATime: with maxUnavailable=1 a template change
// replaces one pod at a time (each drained first); at no point are fewer
// than two pods ready and uncordoned. The old revision is pruned once no
// pod runs it (revisionHistoryLimit 0).
func TestRollingUpdateOneAtATime(t *testing.T) {
	e := start(t, "roll", 3)
	e.NewNodeSet("roll", 3)
	e.Eventually("three ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 3, fmt.Sprint(n) })
	oldHash := e.Pods()["roll-0"].Labels[slinkyv1beta1.LabelRevisionHash]
	e.PatchNodeSet("roll", `{"spec":{"template":{"metadata":{"labels":{"team":"hpc2"}}}}}`)
	e.Eventually("new revision", func() (bool, string) {
		h := e.Get("roll").Status.NodeSetHash
		return h != oldHash && h != "", h
	})
	newHash := e.Get("roll").Status.NodeSetHash
	newRev := "roll-" + newHash

	e.Eventually("all pods updated", func() (bool, string) {
		pods := e.Pods()
		serving, updated := 0, 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.Annotations[slinkyv1beta1.AnnotationPodCordon] == "" {
				serving++
			}
			if p.Labels[slinkyv1beta1.LabelRevisionHash] == newHash {
				updated++
			}
		}
		if serving < 2 {
			t.Fatalf("maxUnavailable=1 violated: %d serving pods: %s", serving, names(pods))
		}
		e.MarkAllReady()
		return updated == 3 && serving == 3 && len(pods) == 3, fmt.Sprintf("updated %d serving %d", updated, serving)
	})
	e.Eventually("old revision pruned", func() (bool, string) {
		r := revisionsOf(e, "roll")
		_, ok := r[newRev]
		return len(r) == 1 && ok, fmt.Sprint(len(r))
	})
	for _, p := range e.Pods() {
		if p.Labels["team"] != "hpc2" {
			t.Errorf("%s still has the old template", p.Name)
		}
	}
}

// TestOnDeleteWaitsForDeletes: with OnDelete a template change touches no
// pod; a pod deleted by hand comes back on the new revision. The old
// revision is kept while pods still run it, even with a history limit of 0.
func TestOnDeleteWaitsForDeletes(t *testing.T) {
	e := start(t, "ondel", 2)
	e.NewNodeSet("ondel", 2, func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.UpdateStrategy = slinkyv1beta1.NodeSetUpdateStrategy{Type: slinkyv1beta1.OnDeleteNodeSetStrategyType}
	})
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })
	// The revision the pods run (status may not be written yet).
	oldHash := e.Pods()["ondel-0"].Labels[slinkyv1beta1.LabelRevisionHash]
	e.PatchNodeSet("ondel", `{"spec":{"template":{"metadata":{"labels":{"team":"new"}}}}}`)
	var gen int64
	e.Eventually("new revision observed", func() (bool, string) {
		ns := e.Get("ondel")
		gen = ns.Generation
		return ns.Status.ObservedGeneration == gen && ns.Status.NodeSetHash != oldHash, fmt.Sprintf("%+v", ns.Status)
	})
	newHash := e.Get("ondel").Status.NodeSetHash
	for _, p := range e.Pods() {
		if p.Labels[slinkyv1beta1.LabelRevisionHash] != oldHash {
			t.Fatalf("OnDelete replaced %s", p.Name)
		}
	}
	if r := revisionsOf(e, "ondel"); r["ondel-"+oldHash] == nil || r["ondel-"+newHash] == nil {
		t.Fatalf("live revision pruned: %v", r)
	}
	if err := e.Kube.CoreV1().Pods(e.NS).Delete(e.Ctx, "ondel-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("deleted pod back on the new revision", func() (bool, string) {
		p := e.Pods()
		return len(p) == 2 && p["ondel-0"] != nil && p["ondel-0"].Labels[slinkyv1beta1.LabelRevisionHash] == newHash &&
			p["ondel-1"].Labels[slinkyv1beta1.LabelRevisionHash] == oldHash, names(p)
	})
	e.Eventually("updated count", func() (bool, string) {
		st := e.Get("ondel").Status
		return st.UpdatedReplicas == 1 && st.Replicas == 2, fmt.Sprintf("%+v", st)
	})
}

// TestRevisionHistoryTruncated: revisionHistoryLimit=1 keeps the update
// revision and the newest old one; older ones are deleted.
func TestRevisionHistoryTruncated(t *testing.T) {
	e := start(t, "hist", 1)
	e.NewNodeSet("hist", 0, func(ns *slinkyv1beta1.NodeSet) { ns.Spec.RevisionHistoryLimit = ptr.To[int32](1) })
	var seen []string
	for i := range 4 {
		if i > 0 {
			e.PatchNodeSet("hist", fmt.Sprintf(`{"spec":{"template":{"metadata":{"labels":{"v":"%d"}}}}}`, i))
		}
		prev := ""
		if len(seen) > 0 {
			prev = seen[len(seen)-1]
		}
		e.Eventually("revision "+fmt.Sprint(i), func() (bool, string) {
			h := e.Get("hist").Status.NodeSetHash
			return h != "" && "hist-"+h != prev, h
		})
		seen = append(seen, "hist-"+e.Get("hist").Status.NodeSetHash)
	}
	e.Eventually("two revisions left", func() (bool, string) {
		r := revisionsOf(e, "hist")
		return len(r) == 2 && r[seen[3]] != nil && r[seen[2]] != nil, fmt.Sprint(len(r))
	})
	if r := revisionsOf(e, "hist")[seen[3]]; r.Revision != 4 {
		t.Fatalf("update revision number %d, want 4", r.Revision)
	}
}

// TestOrphanRevisionAdopted: a revision that lost its owner reference (and
// its hash label) is adopted back, not duplicated.
func TestOrphanRevisionAdopted(t *testing.T) {
	e := start(t, "orph", 1)
	ns := e.NewNodeSet("orph", 0)
	e.Eventually("revision", func() (bool, string) { return len(revisionsOf(e, "orph")) == 1, "" })
	var name string
	for n := range revisionsOf(e, "orph") {
		name = n
	}
	patch := `{"metadata":{"ownerReferences":null,"labels":{"controller.kubernetes.io/hash":null}}}`
	if _, err := e.Kube.AppsV1().ControllerRevisions(e.NS).Patch(e.Ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("adopted", func() (bool, string) {
		r := revisionsOf(e, "orph")[name]
		return r != nil && metav1.IsControlledBy(r, ns) && r.Labels["controller.kubernetes.io/hash"] == strings.TrimPrefix(name, "orph-"),
			fmt.Sprintf("%v %v", r.OwnerReferences, r.Labels)
	})
	if n := len(revisionsOf(e, "orph")); n != 1 {
		t.Fatalf("%d revisions, want the adopted one only", n)
	}
}

// TestDeletedNodeSetForgetsExpectations: the controller's expectations
// record of a NodeSet goes away with the NodeSet.
func TestDeletedNodeSetForgetsExpectations(t *testing.T) {
	e := start(t, "gone", 2)
	e.NewNodeSet("gone", 2)
	key := e.NS + "/gone"
	e.Eventually("pods created", func() (bool, string) { return len(e.Pods()) == 2, names(e.Pods()) })
	if !e.Ctrl.PendingExpectations(key) {
		t.Fatal("creating pods must have recorded expectations")
	}
	if err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Delete(e.Ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("expectations forgotten", func() (bool, string) { return !e.Ctrl.PendingExpectations(key), "" })
}

// TestClaimPods: an orphan pod with the NodeSet's labels and name is adopted
// (and counts towards replicas); a controlled pod that loses the labels is
// released, and replaced. A Slurm node set DOWN is counted as down.
func TestClaimPods(t *testing.T) {
	e := start(t, "claim", 3)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "claim-1", Namespace: e.NS, Labels: map[string]string{
			slinkyv1beta1.LabelAppName: slinkyv1beta1.AppName, slinkyv1beta1.LabelAppInstance: "claim"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "slurmd", Image: "x"}}},
	}
	if _, err := e.Kube.CoreV1().Pods(e.NS).Create(e.Ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := e.NewNodeSet("claim", 2)
	e.Eventually("orphan adopted, one pod created", func() (bool, string) {
		p := e.Pods()
		return names(p) == "claim-0,claim-1" && metav1.IsControlledBy(p["claim-1"], ns), names(p)
	})

	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, slinkyv1beta1.LabelAppInstance)
	if _, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, "claim-0", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("released and replaced", func() (bool, string) {
		p := e.Pods()
		return names(p) == "claim-0,claim-1,claim-2" && metav1.GetControllerOf(p["claim-0"]) == nil &&
			metav1.IsControlledBy(p["claim-2"], ns), names(p)
	})

	if _, err := e.Slurm.Scontrol(e.Ctx, "update", "nodename=claim-2", "state=down", "reason=dead"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("down counted", func() (bool, string) {
		st := e.Get("claim").Status
		return st.SlurmDown == 1 && st.SlurmIdle == 1 && st.Replicas == 2, fmt.Sprintf("%+v", st)
	})
}

// TestUpdateWaitsForDrainAndRevert: an update never replaces a pod whose
// Slurm node runs a job; it waits DRAINING. Reverting the template calls the
// update off: the pod is uncordoned and its node resumed, job untouched.
func TestUpdateWaitsForDrainAndRevert(t *testing.T) {
	e := start(t, "rev", 1)
	e.NewNodeSet("rev", 1)
	e.Eventually("ready pod", func() (bool, string) { n := e.MarkAllReady(); return n == 1, fmt.Sprint(n) })
	uid := e.Pods()["rev-0"].UID
	oldHash := e.Pods()["rev-0"].Labels[slinkyv1beta1.LabelRevisionHash]
	if _, err := e.Slurm.Allocate(e.Ctx, "rev-0", 30); err != nil {
		t.Fatal(err)
	}
	e.PatchNodeSet("rev", `{"spec":{"template":{"metadata":{"labels":{"team":"other"}}}}}`)
	e.Eventually("pod cordoned for the update, node draining", func() (bool, string) {
		p := e.Pods()["rev-0"]
		st := e.SlurmState("rev-0")
		return p != nil && p.Annotations[slinkyv1beta1.AnnotationPodDeadline] != "" && st == "DRAINING (kubectl-vc: update)", st
	})
	if p := e.Pods()["rev-0"]; p == nil || p.UID != uid {
		t.Fatal("pod replaced while its Slurm node runs a job")
	}
	e.PatchNodeSet("rev", `{"spec":{"template":{"metadata":{"labels":{"team":"hpc"}}}}}`)
	e.Eventually("update called off", func() (bool, string) {
		p := e.Pods()["rev-0"]
		_, cordoned := p.Annotations[slinkyv1beta1.AnnotationPodCordon]
		st := e.SlurmState("rev-0")
		return !cordoned && st == "ALLOCATED" && e.Get("rev").Status.NodeSetHash == oldHash, st
	})
	if p := e.Pods()["rev-0"]; p.UID != uid || p.Labels[slinkyv1beta1.LabelRevisionHash] != oldHash {
		t.Fatalf("pod replaced or relabelled: %v", p.Labels)
	}
}
