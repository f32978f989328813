package nodeset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// hashLabel is the revision hash label of Slinky's operator and of the
// Kubernetes workload controllers, spelled out: it is the wire contract.
const hashLabel = "controller.kubernetes.io/hash"

// slinkyRevision builds the ControllerRevision Slinky's operator keeps for
// a NodeSet: its data a strategic merge patch replacing template and slurmd
// (nulls and all), with ordinalPadding and oversubscribeNode; labelled with
// the template's labels and the hash; named <nodeset>-<hash>, the hash
// being history.HashControllerRevision's.
func slinkyRevision(t *testing.T, ns *slinkyv1beta1.NodeSet) *appsv1.ControllerRevision {
	t.Helper()
	raw, err := json.Marshal(ns)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	tmpl := spec["template"].(map[string]any)
	tmpl["$patch"] = "replace"
	slurmd := spec["slurmd"].(map[string]any)
	slurmd["$patch"] = "replace"
	data, err := json.Marshal(map[string]any{"spec": map[string]any{
		"template": tmpl, "slurmd": slurmd,
		"ordinalPadding": ns.Spec.OrdinalPadding, "oversubscribeNode": ns.Spec.OversubscribeNode,
	}})
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New32()
	h.Write(data)
	h.Write([]byte("0"))
	hash := rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
	labels := map[string]string{hashLabel: hash}
	for k, v := range ns.Spec.Template.PodMetadata.Labels {
		labels[k] = v
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-" + hash, Namespace: ns.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 1,
	}
}

// earlierRevision builds the revision an earlier version of this
// controller kept: template, slurmd and logfile, nulls dropped, FNV-32a
// hash; its pods were labelled controller-revision-hash=<revision name>.
func earlierRevision(t *testing.T, ns *slinkyv1beta1.NodeSet) *appsv1.ControllerRevision {
	t.Helper()
	data, err := json.Marshal(map[string]any{"spec": map[string]any{
		"template": ns.Spec.Template, "slurmd": ns.Spec.Slurmd, "logfile": ns.Spec.LogFile}})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	_ = json.Unmarshal(data, &v)
	var drop func(any)
	drop = func(v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				if x == nil {
					delete(m, k)
				} else {
					drop(x)
				}
			}
		}
	}
	drop(v)
	data, _ = json.Marshal(v)
	h := fnv.New32a()
	h.Write(data)
	hash := rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-" + hash, Namespace: ns.Namespace,
			Labels: map[string]string{slinkyv1beta1.LabelAppName: slinkyv1beta1.AppName,
				slinkyv1beta1.LabelAppInstance: ns.Name, hashLabel: hash},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 1,
	}
}

// TestTakeOverKeepsPods: a NodeSet whose pods and revision were made by
// Slinky's operator (pods labelled controller.kubernetes.io/hash=<hash>),
// or by an earlier version of this controller (controller-revision-hash=
// <nodeset>-<hash>), is taken over without touching a pod: the existing
// revision is the update revision, every pod counts as updated, none is
// cordoned, drained or replaced. A real template change afterwards still
// replaces them.
func TestTakeOverKeepsPods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		revision func(*testing.T, *slinkyv1beta1.NodeSet) *appsv1.ControllerRevision
		label    func(ns *slinkyv1beta1.NodeSet, r *appsv1.ControllerRevision) map[string]string
	}{
		{"slinky", slinkyRevision, func(_ *slinkyv1beta1.NodeSet, r *appsv1.ControllerRevision) map[string]string {
			return map[string]string{hashLabel: r.Labels[hashLabel],
				"nodeset.slinky.slurm.net/scaling-mode": "StatefulSet", "app.kubernetes.io/part-of": "slurm"}
		}},
		{"earlier", earlierRevision, func(_ *slinkyv1beta1.NodeSet, r *appsv1.ControllerRevision) map[string]string {
			return map[string]string{"controller-revision-hash": r.Name}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "tk" + tc.name[:1]
			e := startWithoutController(t, name, 2)
			ns := e.NewNodeSet(name, 2)
			rev := tc.revision(t, ns)
			if _, err := e.Kube.AppsV1().ControllerRevisions(e.NS).Create(e.Ctx, rev, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			hash := rev.Labels[hashLabel]
			for i := range 2 {
				pod := fmt.Sprintf("%s-%d", name, i)
				labels := map[string]string{
					slinkyv1beta1.LabelAppName: slinkyv1beta1.AppName, slinkyv1beta1.LabelAppInstance: name,
					slinkyv1beta1.LabelAppComponent: slinkyv1beta1.AppComponent, "team": "hpc",
					slinkyv1beta1.LabelPodIndex: fmt.Sprint(i), slinkyv1beta1.LabelPodHostname: pod,
				}
				for k, v := range tc.label(ns, rev) {
					labels[k] = v
				}
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: e.NS, Labels: labels,
						OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)}},
					Spec: corev1.PodSpec{Hostname: pod, Subdomain: name,
						Containers: []corev1.Container{{Name: "slurmd", Image: ns.Spec.Slurmd.Image}}},
				}
				if _, err := e.Kube.CoreV1().Pods(e.NS).Create(e.Ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e.MarkAllReady()
			uids := map[string]types.UID{}
			for n, p := range e.Pods() {
				uids[n] = p.UID
			}

			e.RunController()
			e.Eventually("status of the taken-over NodeSet", func() (bool, string) {
				st := e.Get(name).Status
				return st.ObservedGeneration == ns.Generation && st.Replicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
			})
			st := e.Get(name).Status
			if st.NodeSetHash != hash || st.UpdatedReplicas != 2 {
				t.Fatalf("update revision %s (want %s), %d of 2 pods updated", st.NodeSetHash, hash, st.UpdatedReplicas)
			}
			if r := revisionsOfOwner(e, ns); len(r) != 1 {
				t.Fatalf("revisions %v, want the existing %s only", r, rev.Name)
			}
			for n, p := range e.Pods() {
				if p.UID != uids[n] {
					t.Fatalf("%s replaced", n)
				}
				if _, ok := p.Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
					t.Fatalf("%s cordoned", n)
				}
				if got := e.SlurmState(n); got != "IDLE" {
					t.Fatalf("%s in Slurm: %s", n, got)
				}
			}

			// The CLI reads the revision of Slinky's pods: history marks it
			// current with both pods, describe names it per pod.
			out := e.mustVC("nodeset", "history", name)
			if !strings.Contains(strings.Join(strings.Fields(out), " "), rev.Name+"* 2") {
				t.Errorf("history:\n%s", out)
			}
			out = e.mustVC("nodeset", "describe", name)
			if strings.Count(out, " "+rev.Name+" ") != 2 {
				t.Errorf("describe does not show %s on both pods:\n%s", rev.Name, out)
			}

			// A real change is an update: the pods are replaced.
			e.PatchNodeSet(name, `{"spec":{"template":{"metadata":{"labels":{"team":"hpc2"}}}}}`)
			e.Eventually("pods replaced on the new revision", func() (bool, string) {
				e.MarkAllReady()
				st := e.Get(name).Status
				replaced := 0
				for n, p := range e.Pods() {
					if p.UID != uids[n] && p.Labels[hashLabel] == st.NodeSetHash && st.NodeSetHash != hash {
						replaced++
					}
				}
				return replaced == 2, fmt.Sprintf("%d replaced, %+v", replaced, st)
			})
		})
	}
}

// revisionsOfOwner lists the revisions the NodeSet controls, whatever
// their labels.
func revisionsOfOwner(e *env, ns *slinkyv1beta1.NodeSet) []string {
	e.T.Helper()
	list, err := e.Kube.AppsV1().ControllerRevisions(e.NS).List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], ns) {
			out = append(out, list.Items[i].Name)
		}
	}
	return out
}

// TestTemplateHostnameIsSlurmNodeName: Slinky's slurm chart gives each
// NodeSet's template a hostname ("<key>-"), and its operator names each
// pod's host, and so its Slurm node, that hostname followed by the
// ordinal: pod worker-hn-1 is Slurm node hn-1. The controller names them
// alike, and drains, protects and reads the Slurm node by that name: a
// busy one is drained, never deleted, until its job ends.
func TestTemplateHostnameIsSlurmNodeName(t *testing.T) {
	e := start(t, "hn", 2)
	e.NewNodeSet("worker-hn", 2, func(ns *slinkyv1beta1.NodeSet) { ns.Spec.Template.PodSpec.Hostname = "hn-" })
	e.Eventually("2 pods", func() (bool, string) { return len(e.Pods()) == 2, names(e.Pods()) })
	e.MarkAllReady()
	p := e.Pods()["worker-hn-1"]
	if p == nil || p.Spec.Hostname != "hn-1" || p.Labels[slinkyv1beta1.LabelPodHostname] != "hn-1" || p.Labels[slinkyv1beta1.LabelPodName] != "worker-hn-1" {
		t.Fatalf("pod %v", p)
	}
	e.Eventually("Slurm counts by hostname", func() (bool, string) {
		st := e.Get("worker-hn").Status
		return st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})
	job, err := e.Slurm.Allocate(e.Ctx, "hn-1", 10)
	if err != nil {
		t.Fatal(err)
	}
	e.Eventually("busy pod protected", func() (bool, string) {
		return e.Pods()["worker-hn-1"].Labels[slinkyv1beta1.LabelPodProtect] == "true", fmt.Sprint(e.Pods()["worker-hn-1"].Labels)
	})
	// The idle one goes first; then the busy one is drained, not deleted.
	e.PatchNodeSet("worker-hn", `{"spec":{"replicas":0}}`)
	e.Eventually("hn-1 draining, its pod kept", func() (bool, string) {
		st := e.SlurmState("hn-1")
		_, alive := e.Pods()["worker-hn-1"]
		return st == "DRAINING (kubectl-vc: scale-in)" && alive && len(e.Pods()) == 1, st + " " + names(e.Pods())
	})
	if err := e.Slurm.EndJob(e.Ctx, job, "hn-1"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("pod gone once drained", func() (bool, string) { return len(e.Pods()) == 0, names(e.Pods()) })
}
