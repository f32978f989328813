package nodeset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// canAdopt re-reads the NodeSet from the API server: the cache may still
// hold a NodeSet that was deleted and re-created under the same name, and
// adopting for the old one would hand its objects to a stranger.
func (s *nodeSetSync) canAdopt(ctx context.Context) error {
	ns := s.set
	fresh, err := s.c.vc.SlinkyV1beta1().NodeSets(ns.Namespace).Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if fresh.UID != ns.UID {
		return fmt.Errorf("original NodeSet %s/%s is gone: got UID %s, wanted %s", ns.Namespace, ns.Name, fresh.UID, ns.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("NodeSet %s/%s is being deleted", ns.Namespace, ns.Name)
	}
	return nil
}

// mayAdopt is canAdopt, asked at most once a sync (for revisions and pods
// alike): it costs a read from the API server.
func (s *nodeSetSync) mayAdopt(ctx context.Context) error {
	if !s.adoptChecked {
		s.adoptErr, s.adoptChecked = s.canAdopt(ctx), true
	}
	return s.adoptErr
}

// ownerPatch adds (or removes) our controller reference. The uid in the
// patch makes the API server refuse it if the object was re-created.
func ownerPatch(ns *slinkyv1beta1.NodeSet, uid types.UID, remove bool, extraLabels map[string]string) []byte {
	ref := map[string]any{"uid": ns.UID}
	if remove {
		ref["$patch"] = "delete"
	} else {
		r := metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)
		ref = map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": r.UID,
			"controller": true, "blockOwnerDeletion": true}
	}
	meta := map[string]any{"ownerReferences": []any{ref}, "uid": uid}
	if len(extraLabels) > 0 {
		meta["labels"] = extraLabels
	}
	b, _ := json.Marshal(map[string]any{"metadata": meta})
	return b
}

// claimRevisions reads the NodeSet's revisions from one list of the cache:
// those it controls, whatever their labels (Slinky's operator labels its
// revisions with the template's labels only, not with the selector), and
// the orphans that carry its selector's labels, which it adopts (the start
// of phase 2). One list, so that a revision orphaned while the sync runs
// is seen either owned or orphaned, never neither. Oldest first.
func (s *nodeSetSync) claimRevisions(ctx context.Context) ([]*appsv1.ControllerRevision, error) {
	ns := s.set
	all, err := s.c.revisions.ControllerRevisions(ns.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	selector := selectorOf(ns)
	var owned []*appsv1.ControllerRevision
	for _, r := range all {
		switch ref := metav1.GetControllerOf(r); {
		case ref != nil && ref.UID == ns.UID:
			owned = append(owned, r)
		case ns.DeletionTimestamp == nil && isOrphanOf(r, selector):
			adopted, err := s.adoptRevision(ctx, r)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			owned = append(owned, adopted)
		}
	}
	sortRevisions(owned)
	return owned, nil
}

// isOrphanOf says whether a revision has no controller, is not being
// deleted and carries the labels of a NodeSet's selector: one the NodeSet
// may adopt.
func isOrphanOf(r *appsv1.ControllerRevision, selector labels.Selector) bool {
	return metav1.GetControllerOf(r) == nil && r.DeletionTimestamp == nil && selector.Matches(labels.Set(r.Labels))
}

// adoptRevision makes the NodeSet the controller of an orphan revision and
// returns it as the API server now has it.
func (s *nodeSetSync) adoptRevision(ctx context.Context, r *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	ns := s.set
	if err := s.mayAdopt(ctx); err != nil {
		return nil, fmt.Errorf("cannot adopt ControllerRevisions: %w", err)
	}
	var extra map[string]string
	if _, ok := r.Labels[revisionHashLabel]; !ok {
		// Without a hash label the revision could not be found by hash;
		// its name ends in the hash it was created with.
		extra = map[string]string{revisionHashLabel: strings.TrimPrefix(r.Name, ns.Name+"-")}
	}
	return s.c.kube.AppsV1().ControllerRevisions(r.Namespace).Patch(ctx, r.Name, types.StrategicMergePatchType,
		ownerPatch(ns, r.UID, false, extra), metav1.PatchOptions{FieldManager: FieldManager})
}

// claimPods is phase 3 of a sync: it sets s.pods to the NodeSet's pods:
// those it controls that still match, plus orphans it adopts (matching
// selector and name). Controlled pods that no longer match are released.
func (s *nodeSetSync) claimPods(ctx context.Context) error {
	ctx, ns := ctx, s.set
	all, err := s.c.pods.Pods(ns.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	sel := selectorOf(ns)
	var owned []*corev1.Pod
	for _, p := range all {
		matches := sel.Matches(labels.Set(p.Labels)) && namedAsPodOf(ns, p)
		ref := metav1.GetControllerOf(p)
		if ref != nil {
			if ref.UID != ns.UID {
				continue
			}
			if matches {
				owned = append(owned, p)
				continue
			}
			if ns.DeletionTimestamp != nil || p.DeletionTimestamp != nil {
				continue
			}
			_, err := s.c.podControl.PatchPod(ctx, p.Namespace, p.Name, types.StrategicMergePatchType,
				ownerPatch(ns, p.UID, true, nil))
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			continue
		}
		if !matches || p.DeletionTimestamp != nil || ns.DeletionTimestamp != nil {
			continue
		}
		if err := s.mayAdopt(ctx); err != nil {
			return fmt.Errorf("cannot adopt pods: %w", err)
		}
		adopted, err := s.c.podControl.PatchPod(ctx, p.Namespace, p.Name, types.StrategicMergePatchType,
			ownerPatch(ns, p.UID, false, nil))
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		owned = append(owned, adopted)
	}
	sortByOrdinal(ns, owned)
	s.pods = owned
	return nil
}
