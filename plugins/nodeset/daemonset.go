package nodeset

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	corev1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// scalingMode DaemonSet, as Slinky's operator runs it: one pod per
// Kubernetes node that the template's node selector, required node
// affinity and tolerations admit, pinned to that node by a required node
// affinity on its name (as Kubernetes' DaemonSet controller pins its pods:
// the scheduler still places it, so priorities and resources count). The
// pod is named <nodeset>-<5 random characters> (the operator's
// generateName), and its hostname, hence its Slurm node, is the
// Kubernetes node's name up to its first dot, or the node's
// nodeset.slinky.slurm.net/hostname-override annotation.
//
// A pod whose node leaves the set (deleted, no longer admitted, a NoExecute
// taint it does not tolerate) or is cordoned goes the way a scale-in pod
// goes (retire, drain.go): cordoned, its Slurm node drained, deleted only
// once Slurm runs nothing there. Where the operator keeps a cordoned node's
// pod (drained) and cannot make one there again (slurm-operator #259),
// this controller retires it and makes it again once the node is
// uncordoned: a cordoned node is one to empty, and an uncordoned one comes
// back whole.

func daemonSetMode(ns *slinkyv1beta1.NodeSet) bool {
	return ns.Spec.ScalingMode == slinkyv1beta1.ScalingModeDaemonSet
}

// isDaemonPod says whether the pod was made in DaemonSet mode, by its
// scaling-mode label; a pod without one was made before the label existed,
// in StatefulSet mode, the only one there was.
func isDaemonPod(p *corev1.Pod) bool {
	return p.Labels[slinkyv1beta1.LabelScalingMode] == string(slinkyv1beta1.ScalingModeDaemonSet)
}

// daemonGenerateName is what a DaemonSet-mode pod's name starts with, as
// Slinky's operator asks the API server to name it.
func daemonGenerateName(ns *slinkyv1beta1.NodeSet) string { return ns.Name + "-" }

// namedAsPodOf says whether the pod bears the name of one of the NodeSet's
// pods, in either mode: <nodeset>-<ordinal>, or, labelled DaemonSet-mode,
// generated from <nodeset>- (a pod made in the other mode is claimed,
// then retired). Another pod named from that prefix is not ours.
func namedAsPodOf(ns *slinkyv1beta1.NodeSet, p *corev1.Pod) bool {
	return ordinalOf(ns, p) >= 0 || p.GenerateName == daemonGenerateName(ns) && isDaemonPod(p)
}

// maxGeneratedBase is the longest prefix the API server keeps of a
// generateName (63 characters with its 5 random ones): the pod-name
// label holds the name, and a label value is at most 63 characters.
const maxGeneratedBase = 58

// daemonPodName names a DaemonSet-mode pod as the API server would name it
// from its generateName. The name is chosen here rather than by the API
// server so that the pod-name label, made with the pod, holds it.
func daemonPodName(ns *slinkyv1beta1.NodeSet) string {
	base := daemonGenerateName(ns)
	if len(base) > maxGeneratedBase {
		base = base[:maxGeneratedBase]
	}
	return base + utilrand.String(5)
}

// daemonHostname is the hostname, hence Slurm node name, of the
// DaemonSet-mode pod on the node, as Slinky's operator makes it: the
// node's hostname-override annotation as it is, else the node's name up
// to its first dot.
func daemonHostname(node *corev1.Node) string {
	if v := node.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride]; v != "" {
		return v
	}
	name, _, _ := strings.Cut(node.Name, ".")
	return name
}

// newDaemonPod builds the NodeSet's pod for the Kubernetes node.
func newDaemonPod(ns *slinkyv1beta1.NodeSet, base *podBase, node *corev1.Node, revisionHash string) *corev1.Pod {
	pod := renderPod(ns, base, revisionHash, func(pod *corev1.Pod) {
		pod.GenerateName = daemonGenerateName(ns)
		pod.Name = daemonPodName(ns)
		pod.Labels[slinkyv1beta1.LabelScalingMode] = string(slinkyv1beta1.ScalingModeDaemonSet)
		pod.Spec.Hostname = daemonHostname(node)
	})
	// The scheduler places it, on that node only (a node name set here
	// would bypass it: no priority, no resource check).
	pod.Spec.NodeName = ""
	requireNode(&pod.Spec, node.Name)
	return pod
}

// daemonTarget is the Kubernetes node a DaemonSet-mode pod is for: the one
// it runs on, or, not yet scheduled, the one its node affinity requires by
// name (as Kubernetes' DaemonSet controller reads it); "" for neither.
func daemonTarget(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// nodeWantsPod answers, for a DaemonSet-mode NodeSet's template and a
// Kubernetes node, what Kubernetes' DaemonSet controller asks: run, should
// a pod be made there; keep, may a pod already there stay. The template's
// node selector and required node affinity must match the node (else
// neither); a NoSchedule or NoExecute taint it does not tolerate means no
// new pod, and only a NoExecute one means the pod there goes too. A
// cordoned node wants neither: its pod retires (drained first) and comes
// back when it is uncordoned.
func nodeWantsPod(logger klog.Logger, template *corev1.Pod, node *corev1.Node) (run, keep bool) {
	if node.Spec.Unschedulable {
		return false, false
	}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(template).Match(node); err != nil || !ok {
		return false, false
	}
	_, untolerated := corev1helper.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, template.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false)
	if !untolerated {
		return true, true
	}
	_, evicted := corev1helper.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, template.Spec.Tolerations,
		func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute }, false)
	return false, !evicted
}

// templatePod is the NodeSet's template as a pod, for nodeWantsPod: only
// its scheduling constraints are read. A node name in the template is not
// one of them (the operator overrides it too). With a pod base, the
// tolerations are the pods' (slurmdpod.go: the worker taint's unless the
// template lists its own).
func templatePod(ns *slinkyv1beta1.NodeSet, base *podBase) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{
		NodeSelector: ns.Spec.Template.PodSpec.NodeSelector,
		Affinity:     ns.Spec.Template.PodSpec.Affinity,
		Tolerations:  podTolerations(ns, base),
	}}
}

// daemonRetirement is a pod a DaemonSet-mode NodeSet no longer wants.
type daemonRetirement struct {
	pod *corev1.Pod
	// cordoned is the pod's Kubernetes node when the pod leaves because
	// that node is cordoned: its drain is worded as the node's cordon
	// (nodeCordonReason). Otherwise the drain says scale-in: the NodeSet
	// loses a node.
	cordoned *corev1.Node
}

// daemonPlan is what one sync of a DaemonSet-mode NodeSet does to its pods.
type daemonPlan struct {
	// desired counts the nodes that should run a pod (status.desired).
	desired int
	// create are the nodes to make a pod for.
	create []*corev1.Node
	// retire are the pods to drain and delete.
	retire []daemonRetirement
	// wait: a node wanting a pod still has its old one terminating, or a
	// pod of another node with the same hostname is still leaving; the
	// new one (same hostname, same Slurm node, same claims) waits for it
	// to be gone.
	wait bool
	// conflicts are the nodes that want a pod but get none: their
	// hostname is another node's (a.x and a.y are both "a"), whose pod
	// runs, or which comes first by name. Two pods of one hostname would
	// be one Slurm node registered twice, sharing its claims.
	conflicts []hostnameConflict
}

// hostnameConflict is a node left without a pod because its hostname is
// the one of node owner.
type hostnameConflict struct {
	node, owner, hostname string
}

// planDaemonPods decides, for a DaemonSet-mode NodeSet, which nodes get a
// pod and which pods go. active are its pods neither terminating nor
// finished, terminating the others. Per node, as Kubernetes' DaemonSet
// controller: one pod where the node wants one and has none; where it
// keeps its pods, the oldest stays and later ones go, and so does a pod
// whose hostname is no longer the node's (its hostname-override
// annotation changed: it is made again under the new name); where it
// keeps none, all go. Pods of a node that no longer exists go, and so do
// pods made in StatefulSet mode and pods tied to no node.
func planDaemonPods(logger klog.Logger, ns *slinkyv1beta1.NodeSet, base *podBase, nodes []*corev1.Node, active, terminating []*corev1.Pod) daemonPlan {
	var plan daemonPlan
	template := templatePod(ns, base)
	byNode := map[string][]*corev1.Pod{}
	for _, p := range active {
		target := daemonTarget(p)
		if !isDaemonPod(p) || target == "" {
			plan.retire = append(plan.retire, daemonRetirement{pod: p})
			continue
		}
		byNode[target] = append(byNode[target], p)
	}
	going := map[string]bool{}
	// leaving are the hostnames of pods still terminating or retiring.
	leaving := map[string]bool{}
	for _, p := range terminating {
		if t := daemonTarget(p); t != "" {
			going[t] = true
		}
		leaving[p.Spec.Hostname] = true
	}
	// hostOwner is the node each hostname is given to: first the nodes
	// whose pod stays, then, by name, those that get one.
	hostOwner := map[string]string{}
	var want []*corev1.Node
	nodes = append([]*corev1.Node(nil), nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, node := range nodes {
		run, keep := nodeWantsPod(logger, template, node)
		if run {
			plan.desired++
		}
		pods := byNode[node.Name]
		delete(byNode, node.Name)
		if !keep {
			var cordoned *corev1.Node
			if node.Spec.Unschedulable {
				cordoned = node
			}
			for _, p := range pods {
				plan.retire = append(plan.retire, daemonRetirement{pod: p, cordoned: cordoned})
			}
			continue
		}
		host := daemonHostname(node)
		var stay []*corev1.Pod
		for _, p := range pods {
			if p.Spec.Hostname != host {
				plan.retire = append(plan.retire, daemonRetirement{pod: p})
				// Its successor waits for it: one slurmd pod per node.
				going[node.Name] = true
				continue
			}
			stay = append(stay, p)
		}
		sort.SliceStable(stay, func(i, j int) bool {
			a, b := stay[i].CreationTimestamp, stay[j].CreationTimestamp
			if !a.Equal(&b) {
				return a.Before(&b)
			}
			return stay[i].Name < stay[j].Name
		})
		for _, p := range stay[min(len(stay), 1):] {
			plan.retire = append(plan.retire, daemonRetirement{pod: p})
		}
		switch {
		case len(stay) > 0:
			if _, taken := hostOwner[host]; !taken {
				hostOwner[host] = node.Name
			}
		case !run:
		case going[node.Name]:
			plan.wait = true
		default:
			want = append(want, node)
		}
	}
	// What is left is on nodes that are gone.
	for _, pods := range byNode {
		for _, p := range pods {
			plan.retire = append(plan.retire, daemonRetirement{pod: p})
		}
	}
	for _, r := range plan.retire {
		leaving[r.pod.Spec.Hostname] = true
	}
	for _, node := range want {
		host := daemonHostname(node)
		switch owner, taken := hostOwner[host]; {
		case taken:
			plan.conflicts = append(plan.conflicts, hostnameConflict{node: node.Name, owner: owner, hostname: host})
		case leaving[host]:
			plan.wait = true
		default:
			hostOwner[host] = node.Name
			plan.create = append(plan.create, node)
		}
	}
	sort.Slice(plan.retire, func(i, j int) bool { return plan.retire[i].pod.Name < plan.retire[j].pod.Name })
	return plan
}

// syncDaemonPods is the scaling phase of a DaemonSet-mode NodeSet: the
// pods its plan no longer wants retire (cordon, drain, delete once
// drained; at most burst start a sync, the ones under way always carry
// on), and the nodes without a pod get one (at most burst a sync). It
// returns whether it created any.
func (s *nodeSetSync) syncDaemonPods(ctx context.Context) bool {
	nodes, err := s.c.nodes.List(labels.Everything())
	if err != nil {
		s.errs = append(s.errs, err)
		return false
	}
	var terminating []*corev1.Pod
	for _, p := range s.pods {
		if s.terminating[p.Name] {
			terminating = append(terminating, p)
		}
	}
	base := s.c.podBaseFor(ctx, s.set) // slurmdpod.go
	plan := planDaemonPods(klog.FromContext(ctx), s.set, base, nodes, s.active, terminating)
	s.replicas = plan.desired
	s.wait = s.wait || plan.wait
	for _, c := range plan.conflicts {
		// The recorder aggregates the repeats of each sync.
		s.c.recorder.Eventf(s.set, corev1.EventTypeWarning, "HostnameConflict",
			"node %s gets no pod: its hostname %q is node %s's, which has the pod of that Slurm node", c.node, c.hostname, c.owner)
	}

	// Retirements under way first, so that the burst never strands one.
	sort.SliceStable(plan.retire, func(i, j int) bool { return isCordoned(plan.retire[i].pod) && !isCordoned(plan.retire[j].pod) })
	var pods []*corev1.Pod
	cordoned := map[string]*corev1.Node{}
	for _, r := range plan.retire {
		if len(pods) >= burst && !isCordoned(r.pod) {
			break
		}
		pods = append(pods, r.pod)
		s.condemned[r.pod.Name] = true
		if r.cordoned != nil {
			cordoned[r.pod.Name] = r.cordoned
		}
	}
	w, err := parallel(pods, func(p *corev1.Pod) (bool, error) {
		reason := reasonScaleIn
		if node := cordoned[p.Name]; node != nil {
			reason = s.c.nodeCordonReason(node)
		}
		return s.retire(ctx, p, reason)
	})
	if err != nil {
		s.errs = append(s.errs, err)
	}
	s.wait = s.wait || w

	create := plan.create[:min(len(plan.create), burst)]
	if len(create) == 0 || s.sshHold { // ssh.go: SSHConfigReady says why
		return false
	}
	ns := s.set
	s.c.recorder.Eventf(ns, corev1.EventTypeNormal, "ScaleUp", "creating %d pod(s), one per matching Kubernetes node", len(create))
	err = s.c.createFrom(ctx, s.key, ns, len(create), func(i int) *corev1.Pod { return newDaemonPod(ns, base, create[i], s.updateHash) })
	if err != nil {
		s.errs = append(s.errs, err)
	}
	return true
}
