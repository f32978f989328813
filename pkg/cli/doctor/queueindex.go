package doctor

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// checkAdmissionIndex says whether admission costs the same at any number
// of queues (docs/admission.md): no binding of an older install goes
// through every Queue, the QueueIndexes exist and agree with the queues,
// and every queue is in them (labelled), so that no request goes through
// queues one by one.
func (o *Options) checkAdmissionIndex(ctx context.Context) {
	const check = "admission-index"
	bindings, err := o.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx,
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=kubectl-vc"})
	if apierrors.IsNotFound(err) {
		return // no policy API: checkAdmission says so
	}
	if err != nil {
		o.cannot(check, "ValidatingAdmissionPolicyBindings", err)
		return
	}
	if len(bindings.Items) == 0 {
		return // no policies installed: checkAdmission says so
	}
	var every []string
	for _, b := range bindings.Items {
		p := b.Spec.ParamRef
		if p != nil && p.Selector != nil && len(p.Selector.MatchLabels) == 0 && len(p.Selector.MatchExpressions) == 0 {
			every = append(every, "PolicyBinding "+b.Name)
		}
	}
	if len(every) > 0 {
		sort.Strings(every)
		o.add(check, Warn, fmt.Sprintf("%d binding(s) of an earlier install go through every Queue for each request they check (%s): admission slows down as queues are added",
			len(every), some(every, 3)), "kubectl vc install --policies", every...)
		return
	}
	queues, err := o.vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		o.cannot(check, "queues", err)
		return
	}
	ptrs := make([]*v1beta1.Queue, len(queues.Items))
	var unlabelled []string
	for i := range queues.Items {
		ptrs[i] = &queues.Items[i]
		if _, ok := queues.Items[i].Labels[keys.AdmissionIndexed]; !ok {
			unlabelled = append(unlabelled, queues.Items[i].Name)
		}
	}
	want := rules.QueueIndexes(ptrs)
	var missing, stale []string
	for _, name := range admissionv1alpha1.QueueIndexNames {
		idx, err := o.vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
			continue
		case err != nil:
			o.cannot(check, "queueindex "+name, err)
			return
		}
		if !sameEntries(idx.Spec.Queues, want[name]) {
			stale = append(stale, name)
		}
	}
	switch {
	case len(missing) > 0:
		o.add(check, Fail, fmt.Sprintf("the queue index(es) %s are missing: the API server refuses every PodGroup, Job and queue write that their policies check", some(missing, 3)),
			"kubectl vc install --policies")
	case len(stale) > 0:
		o.add(check, Warn, fmt.Sprintf("the queue index(es) %s disagree with the queues: serve's queueindex controller is not running or not keeping up (admission then refuses more than it should, never less)", some(stale, 3)),
			"run kubectl vc serve (its queueindex controller keeps the index), or see its log")
	case len(unlabelled) > 0:
		sort.Strings(unlabelled)
		o.add(check, Warn, fmt.Sprintf("%d of %d queues are not in the queue index (%s): each PodGroup, Job and queue request goes through them one by one",
			len(unlabelled), len(queues.Items), some(unlabelled, 3)), "run kubectl vc serve (its queueindex controller labels them once indexed)")
	default:
		o.add(check, OK, fmt.Sprintf("all %d queues are in the queue index: each admission request reads one index, whatever the number of queues", len(queues.Items)), "")
	}
}

// sameEntries treats a nil and an empty map as equal.
func sameEntries(a, b map[string]admissionv1alpha1.QueueIndexEntry) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
