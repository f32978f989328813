// Package topology reads what the network topology is built from
// (HyperNodes, nodes, the pods on them) for the commands that show it or
// reason with it: 'hypernode', 'why' and 'doctor'. What it cannot read it
// says in words; the tree itself is pkg/rules/topology's.
package topology

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	rules "github.com/kubectl-vc/kubectl-vc/pkg/rules/topology"
)

// World is the topology as read: the tree, the resources under it, and
// what could not be read.
type World struct {
	HyperNodes []topologyv1alpha1.HyperNode
	// Served is false when the server has no HyperNode kind (neither
	// Volcano's CRD nor ours): there is no topology.
	Served bool
	// RV is the resourceVersion of the HyperNode list, for a watch.
	RV    string
	Tree  *rules.Tree
	Usage *rules.Usage
	Nodes []corev1.Node
	Pods  []corev1.Pod
	// Unreadable says, one line each, what could not be read and what is
	// therefore not shown.
	Unreadable []string
}

// Reader reads a World, ChunkSize objects a request.
type Reader struct {
	VC        versioned.Interface
	Kube      kubernetes.Interface
	ChunkSize int64
	// Pods: read the pods of every namespace too (idle resources,
	// placements); without them only allocatable is known.
	Pods bool
}

// Read reads HyperNodes, nodes and (with r.Pods) pods. Only a HyperNode
// list that fails for another reason than the kind not being served, or
// being forbidden, is an error.
func (r *Reader) Read(ctx context.Context) (*World, error) {
	w := &World{Served: true}
	hns, rv, err := chunk.List[topologyv1alpha1.HyperNode](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.TopologyV1alpha1().HyperNodes().List)
	switch {
	case err == nil:
		w.HyperNodes, w.RV = hns, rv
	case NotServed(err):
		w.Served = false
	case apierrors.IsForbidden(err):
		w.Unreadable = append(w.Unreadable, "cannot list HyperNodes ("+util.Message(err)+"): the topology is not known")
	default:
		return nil, err
	}
	nodesRead := true
	w.Nodes, _, err = chunk.List[corev1.Node](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Nodes().List)
	if err != nil {
		nodesRead = false
		w.Nodes = nil
		w.Unreadable = append(w.Unreadable, "you may not list nodes ("+util.Message(err)+"): regex and label members are not resolved, exact members are taken as written, and no resources are shown")
	}
	podsRead := false
	if r.Pods && nodesRead {
		w.Pods, _, err = chunk.List[corev1.Pod](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Pods(metav1.NamespaceAll).List)
		if err != nil {
			w.Pods = nil
			w.Unreadable = append(w.Unreadable, "you may not list the pods of every namespace ("+util.Message(err)+"): idle resources and placements are not known")
		} else {
			podsRead = true
		}
	}
	w.Tree = rules.Build(w.HyperNodes, w.Nodes, nodesRead)
	w.Usage = rules.NewUsage(w.Nodes, w.Pods, podsRead)
	return w, nil
}

// NotServed reports a 404 for the HyperNode resource itself (no CRD).
func NotServed(err error) bool {
	var status apierrors.APIStatus
	return apierrors.IsNotFound(err) && errors.As(err, &status) &&
		strings.Contains(status.Status().Message, "the server could not find the requested resource")
}

// Replace puts h in place of the HyperNode of its name (or adds it) and
// builds the tree again: a watched change.
func (w *World) Replace(h topologyv1alpha1.HyperNode) { w.Merge([]topologyv1alpha1.HyperNode{h}) }

// Merge puts each of hns in place of the HyperNode of its name (or adds
// it) and builds the tree once: objects read after the world (a list that
// raced with a create) are resolved too, never shown as unknown.
func (w *World) Merge(hns []topologyv1alpha1.HyperNode) {
	at := make(map[string]int, len(w.HyperNodes))
	for i := range w.HyperNodes {
		at[w.HyperNodes[i].Name] = i
	}
	for _, h := range hns {
		if i, ok := at[h.Name]; ok {
			w.HyperNodes[i] = h
			continue
		}
		at[h.Name] = len(w.HyperNodes)
		w.HyperNodes = append(w.HyperNodes, h)
	}
	w.Tree = rules.Build(w.HyperNodes, w.Nodes, w.Tree.NodesRead)
}

// Remove drops the HyperNode of that name and builds the tree again.
func (w *World) Remove(name string) {
	kept := w.HyperNodes[:0]
	for _, h := range w.HyperNodes {
		if h.Name != name {
			kept = append(kept, h)
		}
	}
	w.HyperNodes = kept
	w.Tree = rules.Build(w.HyperNodes, w.Nodes, w.Tree.NodesRead)
}
