package nodeset

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// revisionHashLabel is the hash label of a ControllerRevision and of the
// pods made from it (as the Kubernetes workload controllers and Slinky's
// operator label theirs).
const revisionHashLabel = slinkyv1beta1.LabelRevisionHash

// revisionData is the part of a NodeSet that shapes its pods, as stored in
// a ControllerRevision, in the shape Slinky's operator stores it: a patch of
// the NodeSet whose template, slurmd, logfile and ssh replace the saved ones,
// with ordinalPadding, oversubscribeNode and extraConf. Replicas and update
// strategy are left out: changing them must not count as a new revision of
// the pods.
func revisionData(ns *slinkyv1beta1.NodeSet) ([]byte, error) {
	replaced := func(v any) (map[string]any, error) {
		m, err := toMap(v)
		if err != nil {
			return nil, err
		}
		m["$patch"] = "replace"
		return m, nil
	}
	tmpl, err := replaced(ns.Spec.Template)
	if err != nil {
		return nil, err
	}
	slurmd, err := replaced(ns.Spec.Slurmd)
	if err != nil {
		return nil, err
	}
	spec := map[string]any{
		"template":          tmpl,
		"slurmd":            slurmd,
		"ordinalPadding":    ns.Spec.OrdinalPadding,
		"oversubscribeNode": ns.Spec.OversubscribeNode,
	}
	if ns.Spec.ExtraConf != "" {
		spec["extraConf"] = ns.Spec.ExtraConf
	}
	if !equality.Semantic.DeepEqual(ns.Spec.LogFile, corev1.Container{}) {
		if spec["logfile"], err = replaced(ns.Spec.LogFile); err != nil {
			return nil, err
		}
	}
	if ns.Spec.SSH != nil && !equality.Semantic.DeepEqual(*ns.Spec.SSH, slinkyv1beta1.NodeSetSSH{}) {
		if spec["ssh"], err = replaced(ns.Spec.SSH); err != nil {
			return nil, err
		}
	}
	// Drop nulls ("containers": null of an empty template, ...): the API
	// server drops them when it patches a revision (adoption), and would
	// then see the immutable data as changed.
	return json.Marshal(dropNulls(map[string]any{"spec": spec}))
}

func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(raw, &m)
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

// revisionSpec is revision data read back. It reads every shape a NodeSet
// revision has had: Slinky's (with "$patch" keys), this controller's
// earlier one (template, slurmd, logfile, extraConf) and the current one.
// Fields a shape lacks are nil and compare equal to anything.
type revisionSpec struct {
	Template          slinkyv1beta1.PodTemplate `json:"template"`
	Slurmd            corev1.Container          `json:"slurmd"`
	LogFile           corev1.Container          `json:"logfile"`
	ExtraConf         string                    `json:"extraConf"`
	SSH               *slinkyv1beta1.NodeSetSSH `json:"ssh"`
	OrdinalPadding    *int                      `json:"ordinalPadding"`
	OversubscribeNode *bool                     `json:"oversubscribeNode"`
}

func readRevisionSpec(data []byte) (*revisionSpec, error) {
	var r struct {
		Spec revisionSpec `json:"spec"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.Spec.SSH != nil && equality.Semantic.DeepEqual(*r.Spec.SSH, slinkyv1beta1.NodeSetSSH{}) {
		r.Spec.SSH = nil
	}
	return &r.Spec, nil
}

// sameRevision says whether two revision data describe the same pods: equal
// values, whatever the encoding and shape (a revision written by Slinky's
// operator or by an earlier version of this controller is the same
// revision as ours when it says the same). An unreadable one is different.
func sameRevision(a, b []byte) bool {
	ra, err := readRevisionSpec(a)
	if err != nil {
		return false
	}
	rb, err := readRevisionSpec(b)
	if err != nil {
		return false
	}
	if ra.OrdinalPadding == nil || rb.OrdinalPadding == nil {
		ra.OrdinalPadding, rb.OrdinalPadding = nil, nil
	}
	if ra.OversubscribeNode == nil || rb.OversubscribeNode == nil {
		ra.OversubscribeNode, rb.OversubscribeNode = nil, nil
	}
	return equality.Semantic.DeepEqual(ra, rb)
}

// revisionHash is the hash the Kubernetes workload controllers (and
// Slinky's operator) give revision data: FNV-32 of the data followed by
// the collision count in decimal, encoded without vowels. When two
// different templates hash alike, bumping the count (kept in the NodeSet's
// status) gives the newer one a different name.
func revisionHash(data []byte, collisionCount int32) string {
	h := fnv.New32()
	_, _ = h.Write(data)
	_, _ = h.Write([]byte(strconv.FormatInt(int64(collisionCount), 10)))
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// newRevision builds (does not create) the revision of ns's current
// template. Its labels are the template's, the NodeSet's selector labels
// (so that an orphaned revision can be found and adopted) and the hash.
func newRevision(ns *slinkyv1beta1.NodeSet, data []byte, number int64, collisionCount int32) *appsv1.ControllerRevision {
	hash := revisionHash(data, collisionCount)
	labels := map[string]string{}
	for k, v := range ns.Spec.Template.PodMetadata.Labels {
		labels[k] = v
	}
	for k, v := range selectorLabels(ns) {
		labels[k] = v
	}
	labels[revisionHashLabel] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            slinkyv1beta1.RevisionName(ns.Name, hash),
			Namespace:       ns.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
}

// hashOf is the hash of one of ns's revisions.
func hashOf(ns *slinkyv1beta1.NodeSet, r *appsv1.ControllerRevision) string {
	return slinkyv1beta1.RevisionHash(ns.Name, r.Name, r.Labels)
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

// syncRevisions is phase 2 of a sync: it reads the NodeSet's revisions,
// adopting orphans (adopt.go), and finds or creates the update revision. It
// records in s.current the hashes of every revision that says what the
// NodeSet now says: a pod made from any of them is up to date.
func (s *nodeSetSync) syncRevisions(ctx context.Context) error {
	revs, err := s.claimRevisions(ctx)
	if err != nil {
		return err
	}
	s.revisions = revs
	data, err := revisionData(s.set)
	if err != nil {
		return err
	}
	update, collision, err := s.updateRevision(ctx, data)
	if err != nil {
		return err
	}
	s.update, s.collision = update, collision
	s.updateHash = hashOf(s.set, update)
	s.current = map[string]bool{s.updateHash: true}
	for _, r := range revs {
		if sameRevision(r.Data.Raw, data) {
			s.current[hashOf(s.set, r)] = true
		}
	}
	return nil
}

// upToDate says whether the pod was made from a revision equal to the
// NodeSet's current one.
func (s *nodeSetSync) upToDate(p *corev1.Pod) bool {
	return s.current[slinkyv1beta1.PodRevisionHash(s.set.Name, p.Labels)]
}

// updateRevision finds or creates the revision of the current template and
// returns it with the collision count to record in status.
func (s *nodeSetSync) updateRevision(ctx context.Context, data []byte) (*appsv1.ControllerRevision, int32, error) {
	ctx, ns, revs := ctx, s.set, s.revisions
	var collision int32
	if ns.Status.CollisionCount != nil {
		collision = *ns.Status.CollisionCount
	}
	next := nextRevisionNumber(revs)
	// An equal revision is reused, whoever wrote it (a rollback to an old
	// template must not make a duplicate, and a NodeSet taken over from
	// Slinky's operator keeps its revision); if it is not the newest, it is
	// renumbered so the history shows it as the latest.
	for i := len(revs) - 1; i >= 0; i-- {
		if !sameRevision(revs[i].Data.Raw, data) {
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
		if sameRevision(existing.Data.Raw, data) {
			if metav1.IsControlledBy(existing, ns) {
				// Ours, just not in the cache yet.
				return existing, collision, nil
			}
			if isOrphanOf(existing, selectorOf(ns)) {
				// Ours, orphaned since the cache last showed it: adopted,
				// not mistaken for a collision (which would leave two
				// revisions of one template).
				adopted, err := s.adoptRevision(ctx, existing)
				return adopted, collision, err
			}
		}
		// Same name, different content: a hash collision. Count it, so the
		// name changes and status remembers how we got there.
		collision++
	}
	return nil, collision, fmt.Errorf("too many revision name collisions for %s/%s", ns.Namespace, ns.Name)
}

// truncateHistory deletes the oldest revisions beyond revisionHistoryLimit,
// never the update revision nor one that a pod still runs.
func (s *nodeSetSync) truncateHistory(ctx context.Context) error {
	ns := s.set
	live := map[string]bool{s.update.Name: true}
	running := map[string]bool{}
	for _, p := range s.pods {
		running[slinkyv1beta1.PodRevisionHash(ns.Name, p.Labels)] = true
	}
	for _, r := range s.revisions {
		if running[hashOf(ns, r)] {
			live[r.Name] = true
		}
	}
	var limit int32
	if ns.Spec.RevisionHistoryLimit != nil {
		limit = *ns.Spec.RevisionHistoryLimit
	}
	for _, r := range revisionsToPrune(s.revisions, live, limit) {
		err := s.c.kube.AppsV1().ControllerRevisions(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
