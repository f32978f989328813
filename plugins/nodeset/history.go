package nodeset

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// revisionHashLabel is the hash label of a ControllerRevision (as the
// Kubernetes workload controllers label theirs).
const revisionHashLabel = "controller.kubernetes.io/hash"

// revisionData is the part of a NodeSet that shapes its pods, as stored in
// a ControllerRevision. Replicas and update strategy are left out: changing
// them must not count as a new revision of the pods.
func revisionData(ns *slinkyv1beta1.NodeSet) ([]byte, error) {
	spec := map[string]any{
		"template": ns.Spec.Template,
		"slurmd":   ns.Spec.Slurmd,
		"logfile":  ns.Spec.LogFile,
	}
	if ns.Spec.ExtraConf != "" {
		spec["extraConf"] = ns.Spec.ExtraConf
	}
	raw, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return nil, err
	}
	// Drop nulls ("containers": null of an empty template, ...): the API
	// server drops them when it patches a revision (adoption), and would
	// then see the immutable data as changed.
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(dropNulls(v))
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(val)
		}
	case []any:
		for i := range x {
			x[i] = dropNulls(x[i])
		}
	}
	return v
}

// revisionHash hashes the revision data together with the collision count:
// when two different templates hash alike, bumping the count (kept in the
// NodeSet's status) gives the newer one a different name.
func revisionHash(data []byte, collisionCount int32) string {
	h := fnv.New32a()
	_, _ = h.Write(data)
	if collisionCount != 0 {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(collisionCount))
		_, _ = h.Write(b[:])
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// newRevision builds (does not create) the revision of ns's current template.
func newRevision(ns *slinkyv1beta1.NodeSet, data []byte, number int64, collisionCount int32) *appsv1.ControllerRevision {
	hash := revisionHash(data, collisionCount)
	labels := selectorLabels(ns)
	labels[revisionHashLabel] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            ns.Name + "-" + hash,
			Namespace:       ns.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
}

// sameData compares revision data as JSON values: the API server may hand
// back the bytes re-encoded, so byte equality would see false differences.
func sameData(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// sortRevisions orders oldest first: by revision number, then creation, then name.
func sortRevisions(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// nextRevisionNumber is one more than the highest revision number.
func nextRevisionNumber(revs []*appsv1.ControllerRevision) int64 {
	var n int64
	for _, r := range revs {
		n = max(n, r.Revision)
	}
	return n + 1
}

// revisionsToPrune picks the revisions to delete so that at most limit
// revisions remain beyond the live ones. Live revisions (the update
// revision and any revision a pod still runs) are never picked, and the
// oldest go first.
func revisionsToPrune(revs []*appsv1.ControllerRevision, live map[string]bool, limit int32) []*appsv1.ControllerRevision {
	var old []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	excess := len(old) - int(max(limit, 0))
	if excess <= 0 {
		return nil
	}
	sortRevisions(old)
	return old[:excess]
}

func revisionName(ns *slinkyv1beta1.NodeSet, hash string) string {
	return fmt.Sprintf("%s-%s", ns.Name, hash)
}

// syncRevisions is phase 2 of a sync: it adopts orphan revisions (adopt.go),
// reads the NodeSet's own and finds or creates the update revision.
func (s *nodeSetSync) syncRevisions() error {
	if err := s.adoptOrphanRevisions(); err != nil {
		return err
	}
	revs, err := s.ownedRevisions()
	if err != nil {
		return err
	}
	s.revisions = revs
	update, collision, err := s.updateRevision()
	if err != nil {
		return err
	}
	s.update, s.collision = update, collision
	return nil
}

func (s *nodeSetSync) ownedRevisions() ([]*appsv1.ControllerRevision, error) {
	ns := s.set
	all, err := s.c.revisions.ControllerRevisions(ns.Namespace).List(selectorOf(ns))
	if err != nil {
		return nil, err
	}
	var owned []*appsv1.ControllerRevision
	for _, r := range all {
		if ref := metav1.GetControllerOf(r); ref != nil && ref.UID == ns.UID {
			owned = append(owned, r)
		}
	}
	sortRevisions(owned)
	return owned, nil
}

// updateRevision finds or creates the revision of the current template and
// returns it with the collision count to record in status.
func (s *nodeSetSync) updateRevision() (*appsv1.ControllerRevision, int32, error) {
	ctx, ns, revs := s.ctx, s.set, s.revisions
	data, err := revisionData(ns)
	if err != nil {
		return nil, 0, err
	}
	var collision int32
	if ns.Status.CollisionCount != nil {
		collision = *ns.Status.CollisionCount
	}
	next := nextRevisionNumber(revs)
	// An equal revision is reused (a rollback to an old template must not
	// make a duplicate); if it is not the newest, it is renumbered so the
	// history shows it as the latest.
	for i := len(revs) - 1; i >= 0; i-- {
		if !sameData(revs[i].Data.Raw, data) {
			continue
		}
		if i == len(revs)-1 {
			return revs[i], collision, nil
		}
		patch := fmt.Appendf(nil, `{"revision":%d}`, next)
		r, err := s.c.kube.AppsV1().ControllerRevisions(ns.Namespace).Patch(ctx, revs[i].Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		return r, collision, err
	}
	for range 100 {
		cand := newRevision(ns, data, next, collision)
		created, err := s.c.kube.AppsV1().ControllerRevisions(ns.Namespace).Create(ctx, cand, metav1.CreateOptions{FieldManager: FieldManager})
		if err == nil {
			return created, collision, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, collision, err
		}
		existing, err := s.c.kube.AppsV1().ControllerRevisions(ns.Namespace).Get(ctx, cand.Name, metav1.GetOptions{})
		if err != nil {
			return nil, collision, err
		}
		if metav1.IsControlledBy(existing, ns) && sameData(existing.Data.Raw, data) {
			// Ours, just not in the cache yet.
			return existing, collision, nil
		}
		// Same name, different content: a hash collision. Count it, so the
		// name changes and status remembers how we got there.
		collision++
	}
	return nil, collision, fmt.Errorf("too many revision name collisions for %s/%s", ns.Namespace, ns.Name)
}

// truncateHistory deletes the oldest revisions beyond revisionHistoryLimit,
// never the update revision nor one that a pod still runs.
func (s *nodeSetSync) truncateHistory() error {
	ns := s.set
	live := map[string]bool{s.update.Name: true}
	for _, p := range s.pods {
		live[p.Labels[slinkyv1beta1.LabelRevisionHash]] = true
	}
	var limit int32
	if ns.Spec.RevisionHistoryLimit != nil {
		limit = *ns.Spec.RevisionHistoryLimit
	}
	for _, r := range revisionsToPrune(s.revisions, live, limit) {
		err := s.c.kube.AppsV1().ControllerRevisions(r.Namespace).Delete(s.ctx, r.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
