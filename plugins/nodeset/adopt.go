package nodeset

import (
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
func (s *nodeSetSync) canAdopt() error {
	ns := s.set
	fresh, err := s.c.vc.SlinkyV1beta1().NodeSets(ns.Namespace).Get(s.ctx, ns.Name, metav1.GetOptions{})
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

// adoptOrphanRevisions adopts the ControllerRevisions that carry the
// NodeSet's labels and have no controller (the start of phase 2).
func (s *nodeSetSync) adoptOrphanRevisions() error {
	ns := s.set
	revs, err := s.c.revisions.ControllerRevisions(ns.Namespace).List(selectorOf(ns))
	if err != nil {
		return err
	}
	var orphans []*appsv1.ControllerRevision
	for _, r := range revs {
		if metav1.GetControllerOf(r) == nil && r.DeletionTimestamp == nil {
			orphans = append(orphans, r)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := s.canAdopt(); err != nil {
		return fmt.Errorf("cannot adopt ControllerRevisions: %w", err)
	}
	for _, r := range orphans {
		var extra map[string]string
		if _, ok := r.Labels[revisionHashLabel]; !ok {
			// Without a hash label the revision could not be found by hash;
			// its name ends in the hash it was created with.
			extra = map[string]string{revisionHashLabel: strings.TrimPrefix(r.Name, ns.Name+"-")}
		}
		_, err := s.c.kube.AppsV1().ControllerRevisions(r.Namespace).Patch(s.ctx, r.Name, types.StrategicMergePatchType,
			ownerPatch(ns, r.UID, false, extra), metav1.PatchOptions{FieldManager: FieldManager})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// claimPods is phase 3 of a sync: it sets s.pods to the NodeSet's pods:
// those it controls that still match, plus orphans it adopts (matching
// selector and name). Controlled pods that no longer match are released.
func (s *nodeSetSync) claimPods() error {
	ctx, ns := s.ctx, s.set
	all, err := s.c.pods.Pods(ns.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	sel := selectorOf(ns)
	var owned []*corev1.Pod
	var adoptErr error
	adoptChecked := false
	for _, p := range all {
		matches := sel.Matches(labels.Set(p.Labels)) && ordinalOf(ns, p) >= 0
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
			_, err := s.c.kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType,
				ownerPatch(ns, p.UID, true, nil), metav1.PatchOptions{FieldManager: FieldManager})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			continue
		}
		if !matches || p.DeletionTimestamp != nil || ns.DeletionTimestamp != nil {
			continue
		}
		if !adoptChecked {
			adoptErr, adoptChecked = s.canAdopt(), true
		}
		if adoptErr != nil {
			return fmt.Errorf("cannot adopt pods: %w", adoptErr)
		}
		adopted, err := s.c.kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType,
			ownerPatch(ns, p.UID, false, nil), metav1.PatchOptions{FieldManager: FieldManager})
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
