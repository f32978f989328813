package verdict

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Where kube-scheduler, the scheduler named default-scheduler, keeps its
// leader Lease.
const (
	kubeSchedulerNamespace = "kube-system"
	kubeSchedulerLease     = "kube-scheduler"
)

// Reader reads the Snapshot of one object: the object, then a few lists
// (podgroups, queues, nodes, Commands, events; pods of its namespace),
// each read ChunkSize objects at a time, and a few Leases. Only the object
// itself must be readable; what cannot be read is recorded in the
// snapshot (the report says what was not checked).
type Reader struct {
	VC                   versioned.Interface
	Kube                 kubernetes.Interface
	ChunkSize            int64
	SchedulerNames       []string
	ControllersNamespace string
	Now                  func() time.Time
}

// Read reads the snapshot of the object kind ns/name.
func (r *Reader) Read(ctx context.Context, kind analysis.Kind, ns, name string) (*analysis.Snapshot, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	s := &analysis.Snapshot{Kind: kind, Namespace: ns, Name: name, Now: now(),
		VolcanoSchedulers: r.SchedulerNames, ControllersNamespace: r.ControllersNamespace,
		Schedulers: map[string]analysis.SchedulerSeen{}}
	if err := r.readTarget(ctx, s); err != nil {
		return nil, err
	}
	r.readPodGroups(ctx, s)
	if err := r.readQueues(ctx, s); err != nil && kind == analysis.Queue {
		return nil, err
	}
	if kind != analysis.Queue {
		r.readPods(ctx, s)
		r.readNodes(ctx, s)
		r.readTopology(ctx, s)
		r.readEvents(ctx, s)
	}
	r.readQueueEvents(ctx, s)
	r.readCommands(ctx, s)
	r.readLeases(ctx, s)
	return s, nil
}

func (r *Reader) cannot(s *analysis.Snapshot, what string, err error) {
	s.Unreadable = append(s.Unreadable, analysis.Unreadable{What: what, Error: util.Message(err)})
}

// readTarget reads the object asked about; not finding it is the
// command's error.
func (r *Reader) readTarget(ctx context.Context, s *analysis.Snapshot) error {
	var err error
	switch s.Kind {
	case analysis.Job:
		s.Job, err = r.VC.BatchV1alpha1().Jobs(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil && noResource(err) {
			return util.UsageErrorf("the server has no Volcano Jobs (batch.volcano.sh/v1alpha1): install Volcano")
		}
	case analysis.PodGroup:
		s.PodGroup, err = r.VC.SchedulingV1beta1().PodGroups(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
	case analysis.Pod:
		s.Pod, err = r.Kube.CoreV1().Pods(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err == nil {
			s.GroupName = s.Pod.Annotations[keys.KubeGroupName]
		}
	case analysis.Queue:
		var q *schedulingv1beta1.Queue
		q, err = r.VC.SchedulingV1beta1().Queues().Get(ctx, s.Name, metav1.GetOptions{})
		if err == nil {
			s.Queues = []schedulingv1beta1.Queue{*q}
		}
	}
	if apierrors.IsNotFound(err) {
		if s.Kind == analysis.Queue {
			return util.UsageErrorf("queue %q not found", s.Name)
		}
		return util.UsageErrorf("%s %q not found in namespace %q", s.Kind, s.Name, s.Namespace)
	}
	return err
}

// noResource reports a 404 for the resource itself (its CRD missing).
func noResource(err error) bool {
	var status apierrors.APIStatus
	return apierrors.IsNotFound(err) && errors.As(err, &status) &&
		strings.Contains(status.Status().Message, "the server could not find the requested resource")
}

// readPodGroups lists every podgroup (the queue's accounting and a pod's
// group in another namespace need them all); without the right to list
// them everywhere, those of the namespace.
func (r *Reader) readPodGroups(ctx context.Context, s *analysis.Snapshot) {
	items, _, err := chunk.List[schedulingv1beta1.PodGroup](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List)
	if err != nil && s.Namespace != "" && apierrors.IsForbidden(err) {
		r.cannot(s, "podgroups of every namespace (the queue's other podgroups, a group in another namespace)", err)
		items, _, err = chunk.List[schedulingv1beta1.PodGroup](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.SchedulingV1beta1().PodGroups(s.Namespace).List)
	}
	if err != nil {
		r.cannot(s, "podgroups", err)
		return
	}
	s.PodGroups = items
	if s.PodGroup != nil { // the freshest copy is the one read last
		for i := range items {
			if items[i].Namespace == s.PodGroup.Namespace && items[i].Name == s.PodGroup.Name {
				s.PodGroup = &items[i]
			}
		}
	}
}

func (r *Reader) readQueues(ctx context.Context, s *analysis.Snapshot) error {
	items, _, err := chunk.List[schedulingv1beta1.Queue](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.SchedulingV1beta1().Queues().List)
	if err != nil {
		if s.Kind == analysis.Queue && len(s.Queues) == 1 {
			r.cannot(s, "the other queues (parents, children)", err)
			return nil
		}
		r.cannot(s, "queues", err)
		return nil
	}
	s.Queues = items
	return nil
}

// readPods reads the members: the job's pods (by its label), the group's
// (by the group-name annotation), or the pod's group's.
func (r *Reader) readPods(ctx context.Context, s *analysis.Snapshot) {
	opts := metav1.ListOptions{}
	group := ""
	switch s.Kind {
	case analysis.Job:
		opts.LabelSelector = batchv1alpha1.JobNameLabel + "=" + s.Name
	case analysis.PodGroup:
		group = s.Name
	case analysis.Pod:
		group = s.GroupName
		if group == "" {
			s.Pods = []corev1.Pod{*s.Pod}
			return
		}
	}
	items, _, err := chunk.List[corev1.Pod](ctx, r.ChunkSize, opts, r.Kube.CoreV1().Pods(s.Namespace).List)
	if err != nil {
		r.cannot(s, "pods of namespace "+s.Namespace, err)
		if s.Pod != nil {
			s.Pods = []corev1.Pod{*s.Pod}
		}
		return
	}
	for i := range items {
		p := &items[i]
		switch {
		case s.Kind == analysis.Job:
			if ownedByJob(p, s.Job) {
				s.Pods = append(s.Pods, *p)
			}
		case p.Annotations[keys.KubeGroupName] == group:
			s.Pods = append(s.Pods, *p)
		}
	}
}

// ownedByJob: made for this job by the job controller (a pod left from an
// earlier job of the same name is not).
func ownedByJob(p *corev1.Pod, j *batchv1alpha1.Job) bool {
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "Job" && ref.APIVersion == batchv1alpha1.SchemeGroupVersion.String() {
		return ref.UID == j.UID
	}
	return p.Labels[batchv1alpha1.JobNameLabel] == j.Name
}

func (r *Reader) readNodes(ctx context.Context, s *analysis.Snapshot) {
	items, _, err := chunk.List[corev1.Node](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Nodes().List)
	if err != nil {
		r.cannot(s, "nodes", err)
		// Without nodes the analysis would see an empty cluster: leave the
		// check out rather than report NoReadyNodes.
		s.Nodes = nil
		return
	}
	s.Nodes, s.NodesRead = items, true
}

// readTopology reads the HyperNodes and, with the nodes, the pods of every
// namespace: what runs on the nodes (idle resources under a HyperNode, and
// the cluster's headroom the scheduler admits groups against).
func (r *Reader) readTopology(ctx context.Context, s *analysis.Snapshot) {
	hns, _, err := chunk.List[topologyv1alpha1.HyperNode](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.TopologyV1alpha1().HyperNodes().List)
	switch {
	case err == nil:
		s.HyperNodes, s.HyperNodesRead = hns, true
	case noResource(err):
		// No HyperNode kind: no topology to read.
	default:
		r.cannot(s, "HyperNodes (the network topology)", err)
	}
	if !s.NodesRead {
		return
	}
	pods, _, err := chunk.List[corev1.Pod](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Pods(metav1.NamespaceAll).List)
	if err != nil {
		r.cannot(s, "the pods of every namespace (what the nodes' pods request: idle resources)", err)
		return
	}
	s.AllPods, s.AllPodsRead = pods, true
}

// readEvents reads the events of the namespace and keeps those of the
// job, its group and the pods.
func (r *Reader) readEvents(ctx context.Context, s *analysis.Snapshot) {
	uids := map[types.UID]bool{}
	names := map[string]bool{}
	add := func(kind string, m metav1.Object) {
		if m != nil && !isNil(m) {
			uids[m.GetUID()] = true
			names[kind+"/"+m.GetName()] = true
		}
	}
	if s.Job != nil {
		add("Job", s.Job)
	}
	if s.PodGroup != nil {
		add("PodGroup", s.PodGroup)
	}
	if s.Pod != nil {
		add("Pod", s.Pod)
	}
	for i := range s.Pods {
		add("Pod", &s.Pods[i])
	}
	if s.Kind == analysis.Job && s.PodGroup == nil {
		for i := range s.PodGroups { // the job's group, named as the job controller names it
			pg := &s.PodGroups[i]
			if pg.Namespace == s.Namespace && (pg.Name == s.Name+"-"+string(s.Job.UID) || pg.Name == s.Name || ControlledBy(pg, s.Job.UID)) {
				add("PodGroup", pg)
			}
		}
	}
	if s.GroupName != "" {
		names["PodGroup/"+s.GroupName] = true
	}
	items, _, err := chunk.List[corev1.Event](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Events(s.Namespace).List)
	if err != nil {
		r.cannot(s, "events of namespace "+s.Namespace, err)
		return
	}
	for _, e := range items {
		io := e.InvolvedObject
		if uids[io.UID] || (io.UID == "" && names[io.Kind+"/"+io.Name]) || (io.Kind == "PodGroup" && io.Name == s.GroupName && s.GroupName != "") {
			s.Events = append(s.Events, e)
		}
	}
}

func isNil(m metav1.Object) bool {
	switch v := m.(type) {
	case *batchv1alpha1.Job:
		return v == nil
	case *schedulingv1beta1.PodGroup:
		return v == nil
	case *corev1.Pod:
		return v == nil
	}
	return false
}

// ControlledBy reports whether o's controller is the object of uid (a
// job's PodGroup, a pod of a job): 'why' places a job's gang by it too.
func ControlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == uid
}

// readQueueEvents reads the events of queues (who closed one: the queue
// controller's CloseQueue or StateChanged events). Queues are
// cluster-scoped: their events may be in any namespace.
func (r *Reader) readQueueEvents(ctx context.Context, s *analysis.Snapshot) {
	sel := fields.Set{"involvedObject.kind": "Queue"}.AsSelector().String()
	items, _, err := chunk.List[corev1.Event](ctx, r.ChunkSize, metav1.ListOptions{FieldSelector: sel}, r.Kube.CoreV1().Events(metav1.NamespaceAll).List)
	if err != nil {
		r.cannot(s, "events of queues", err)
		return
	}
	s.Events = append(s.Events, items...)
}

// readCommands reads the Commands that target queues: a pending
// CloseQueue says who is closing one.
func (r *Reader) readCommands(ctx context.Context, s *analysis.Snapshot) {
	items, _, err := chunk.List[busv1alpha1.Command](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.BusV1alpha1().Commands(metav1.NamespaceAll).List)
	if err != nil {
		r.cannot(s, "Commands", err)
		return
	}
	for _, c := range items {
		if t := c.TargetObject; t != nil && t.Kind == "Queue" {
			s.Commands = append(s.Commands, c)
		}
	}
}
