package evictions

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Reader reads, once, what the inference needs to list the evictions of
// a namespace ("" for all): 'evictions', 'why' and the describe pages
// share it.
type Reader struct {
	Kube      kubernetes.Interface
	VC        versioned.Interface
	ChunkSize int64
}

// Read returns the input of infer.Evictions for the evictions in ns, and
// the resourceVersion of the list of Evict events (for --watch). The Evict
// events of ns must be readable (an error otherwise); everything else the
// preemptor may hide in (other namespaces' events, pods and podgroups,
// priority classes) is read where it can be, and what could not be is
// said in Input.Unreadable.
func (r *Reader) Read(ctx context.Context, ns string) (infer.Input, string, error) {
	var in infer.Input
	evicts, rv, err := r.events(ctx, ns, fields.OneTermEqualSelector("reason", infer.EvictReason))
	if err != nil {
		return in, "", util.InNamespace(err, ns)
	}
	in.Events = append(in.Events, evicts...)
	// The victims' Scheduled and kubelet events name the node of a pod
	// that is gone.
	for _, sel := range []fields.Selector{
		fields.OneTermEqualSelector("reason", "Scheduled"),
		fields.AndSelectors(fields.OneTermEqualSelector("source", "kubelet"), fields.OneTermEqualSelector("involvedObject.kind", "Pod")),
	} {
		evs, _, err := r.events(ctx, ns, sel)
		if err != nil {
			in.Unreadable = append(in.Unreadable, fmt.Sprintf("events %s%s: %s", sel, where(ns), util.Message(err)))
			continue
		}
		in.Events = append(in.Events, evs...)
	}
	// The preemptor may be in any namespace (reclaim takes from another
	// queue, often another team's): its records are read cluster-wide
	// where the user may, else in ns alone.
	failed, err := wide(ctx, ns, &in, "FailedScheduling events", func(ns string) ([]corev1.Event, error) {
		evs, _, err := r.events(ctx, ns, fields.OneTermEqualSelector("reason", infer.FailedScheduling))
		return evs, err
	})
	if err != nil {
		in.Unreadable = append(in.Unreadable, "FailedScheduling events"+where(ns)+": "+util.Message(err))
	}
	in.Events = append(in.Events, failed...)
	pods, err := wide(ctx, ns, &in, "pods", func(ns string) ([]corev1.Pod, error) {
		items, _, err := chunk.List[corev1.Pod](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Pods(ns).List)
		return items, err
	})
	if err != nil {
		in.Unreadable = append(in.Unreadable, "pods"+where(ns)+": "+util.Message(err))
	}
	in.Pods = pods
	groups, err := wide(ctx, ns, &in, "podgroups", func(ns string) ([]schedulingv1beta1.PodGroup, error) {
		items, _, err := chunk.List[schedulingv1beta1.PodGroup](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.SchedulingV1beta1().PodGroups(ns).List)
		return items, err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		in.Unreadable = append(in.Unreadable, "podgroups"+where(ns)+": "+util.Message(err))
	}
	in.PodGroups = groups
	in.Events = dedupe(in.Events)
	// A victim whose pod is gone has its priority from its PodGroup's
	// priority class only: without them, say so rather than leave the
	// priority unknown with no reason (a user who may read one namespace
	// may not list these cluster-scoped objects, as seen against the
	// real scheduler).
	if pcs, err := r.Kube.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{}); err == nil {
		in.PriorityClasses = map[string]int32{}
		for _, pc := range pcs.Items {
			in.PriorityClasses[pc.Name] = pc.Value
		}
	} else {
		in.Unreadable = append(in.Unreadable, "priority classes: "+util.Message(err)+"; the priority of a victim whose pod is gone is not known, and preempt's priorities are not compared for it")
	}
	return in, rv, nil
}

func (r *Reader) events(ctx context.Context, ns string, sel fields.Selector) ([]corev1.Event, string, error) {
	return chunk.List[corev1.Event](ctx, r.ChunkSize, metav1.ListOptions{FieldSelector: sel.String()}, r.Kube.CoreV1().Events(ns).List)
}

// wide reads what of every namespace the user may read: all of them when
// allowed, else ns alone, noting in in.Unreadable that the others could
// not be read.
func wide[T any](ctx context.Context, ns string, in *infer.Input, what string, list func(ns string) ([]T, error)) ([]T, error) {
	items, err := list(metav1.NamespaceAll)
	if err == nil {
		return items, nil
	}
	if ns == metav1.NamespaceAll || !(apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
		return nil, err
	}
	in.Unreadable = append(in.Unreadable, fmt.Sprintf("%s of namespaces other than %s: %s", what, ns, util.Message(err)))
	return list(ns)
}

// dedupe keeps each event once (a server that ignores a field selector
// returns an event to more than one of the lists).
func dedupe(evs []corev1.Event) []corev1.Event {
	seen := map[string]bool{}
	out := evs[:0]
	for _, e := range evs {
		k := e.Namespace + "/" + e.Name
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}

func where(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}
