package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// checkAdmissionIndex says how the rules that need other queues are
// checked, and whether that holds up (docs/admission.md): in per-queue mode
// what it costs at this many queues; in index mode that each QueueIndex
// exists, was refreshed lately (or every create is refused) and agrees
// with the queues; in either, bindings an earlier install left behind.
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
	mode, found := "", false
	var old, leftovers []string
	for _, b := range bindings.Items {
		if b.Name == "vc-workload-open-queue" {
			mode, found = b.Labels[keys.AdmissionMode], true
		}
		if strings.HasSuffix(b.Name, "-unindexed") || b.Name == "vc-queue-index-label" {
			old = append(old, "PolicyBinding "+b.Name)
		}
		if b.Labels[keys.AdmissionMode] == keys.AdmissionModeIndex && retiredInIndexMode[b.Name] {
			leftovers = append(leftovers, "PolicyBinding "+b.Name)
		}
	}
	if !found {
		return // the rules are not installed: checkAdmission says so
	}
	if len(old) > 0 || (mode != keys.AdmissionModeIndex && mode != keys.AdmissionModePerQueue) {
		sort.Strings(old)
		o.add(check, Warn, fmt.Sprintf("the admission policies are those of an earlier install (%s): each request goes through queues one by one", some(append(old, "no admission mode recorded"), 3)),
			"kubectl vc install --policies", old...)
		return
	}
	queues, err := o.vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		o.cannot(check, "queues", err)
		return
	}
	if mode == keys.AdmissionModePerQueue {
		if _, err := o.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, keys.QueueWebhookConfigName, metav1.GetOptions{}); err == nil {
			o.add(check, Warn, fmt.Sprintf("admission is in per-queue mode but the index mode's queue webhook (validatingwebhookconfiguration %s) is still installed: while serve does not answer it, every queue create that names a parent or sets resources, and every change of parent or resources, is refused", keys.QueueWebhookConfigName),
				"kubectl vc install --policies --admission=per-queue", keys.QueueWebhookConfigName)
		}
		n := len(queues.Items)
		level := OK
		if n > perQueueWarnAt {
			level = Warn
		}
		o.add(check, level, fmt.Sprintf("admission is in per-queue mode: each PodGroup, Job and queue request is checked against all %d queues, at a cost that grows with their number", n),
			"with serve running (kubectl vc install --serve), kubectl vc install --policies --admission=index")
		return
	}
	ptrs := make([]*v1beta1.Queue, len(queues.Items))
	for i := range queues.Items {
		ptrs[i] = &queues.Items[i]
	}
	want := rules.QueueIndexEntriesText(ptrs)
	o.checkQueueWebhook(ctx, check)
	for _, name := range admissionv1alpha1.QueueIndexLegacyNames {
		if _, err := o.vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, name, metav1.GetOptions{}); err == nil {
			leftovers = append(leftovers, "QueueIndex "+name)
		}
	}
	if len(leftovers) > 0 {
		sort.Strings(leftovers)
		o.add(check, Warn, fmt.Sprintf("an earlier install left index-mode queue policies or indexes this release no longer uses (%s): the queue requests they match still pay for them, and serve no longer keeps those indexes", some(leftovers, 3)),
			"kubectl vc install --policies", leftovers...)
	}
	var missing, unrefreshed, disagree []string
	for _, name := range indexNames() {
		idx, err := o.vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
			continue
		case err != nil:
			o.cannot(check, "queueindex "+name, err)
			return
		}
		switch {
		case idx.Spec.RefreshedAt == nil:
			unrefreshed = append(unrefreshed, name+" (never)")
		case time.Since(idx.Spec.RefreshedAt.Time) > admissionv1alpha1.QueueIndexMaxAge:
			unrefreshed = append(unrefreshed, fmt.Sprintf("%s (%s ago)", name, time.Since(idx.Spec.RefreshedAt.Time).Round(time.Second)))
		}
		if idx.Spec.Entries != want[name] {
			disagree = append(disagree, name)
		}
	}
	switch {
	case len(missing) > 0:
		o.add(check, Fail, fmt.Sprintf("the queue index(es) %s are missing: the API server refuses every PodGroup, Job and queue write that their policies check", some(missing, 3)),
			"kubectl vc install --policies")
	case len(unrefreshed) > 0:
		o.add(check, Fail, fmt.Sprintf("the queue index(es) %s were not refreshed in the last %s: serve's queueindex controller is not running, or cannot write them (its IndexNotWritten events say why, e.g. an index past the API server's request size), and the API server refuses every new PodGroup, Job and queue", some(unrefreshed, 3), admissionv1alpha1.QueueIndexMaxAge),
			"run kubectl vc serve (its queueindex controller keeps the index; see its log), or kubectl vc install --policies --admission=per-queue")
	case len(disagree) > 0:
		o.add(check, Warn, fmt.Sprintf("the queue index(es) %s disagree with the queues: serve's queueindex controller is not keeping up (see its log)", some(disagree, 3)),
			"see the log of kubectl vc serve")
	default:
		o.add(check, OK, fmt.Sprintf("admission is in index mode and the queue index is current: each admission request reads one index, whatever the number of queues (%d now)", len(queues.Items)), "")
	}
}

// perQueueWarnAt is the number of queues above which doctor warns of the
// per-queue mode's cost: at a few hundred queues a PodGroup create takes
// several times as long (docs/admission.md, Measured).
const perQueueWarnAt = 100

// retiredInIndexMode are the index mode's policies (and bindings) of
// earlier releases that this one no longer ships in that mode:
// vc-queue-children, which serve's queue webhook replaced, and
// vc-queue-delete-children, whose rule vc-queue-delete now checks (one
// policy a delete meets, not two); the per-queue mode
// still has policies of these names, without the index mode's label.
var retiredInIndexMode = map[string]bool{"vc-queue-children": true, "vc-queue-delete-children": true}

// indexNames are the QueueIndexes this binary's index mode reads, as
// install makes them.
func indexNames() []string {
	objs, err := manifests.PolicyObjects(keys.AdmissionModeIndex)
	if err != nil {
		return admissionv1alpha1.QueueIndexNames
	}
	var names []string
	for _, u := range objs {
		if u.GetKind() == "QueueIndex" {
			names = append(names, u.GetName())
		}
	}
	return names
}
