package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Waiting for the admission policies.
//
// The API server enforces a ValidatingAdmissionPolicy only once its policy
// plugin has seen the policy and its binding (it recompiles them about once a
// second) and, for a policy with a paramKind, once its informer for the param
// kind (Queue) has listed. Until then a request the policy matches is either
// not checked at all (policy not seen yet) or refused with a configuration
// error ("failed to configure ...": the param kind is not found yet, or
// "paramKind ... not yet synced to use for admission"). Both ends of that
// window look the same to a request that breaks no rule: admitted. So the
// wait proves each state separately, with dry-run requests only:
//
//  1. Seen: install creates a throwaway policy and binding of its own
//     (named with a fresh nonce, after every other policy and binding) that
//     refuses one queue name, and dry-runs a create of that name until the
//     refusal carries the nonce. The plugin builds its hooks from everything
//     its two informers hold, and an informer holds a prefix of the writes
//     in order, so a hook for this binding means every policy and binding
//     install wrote before it is loaded too. The probe is deleted afterwards.
//  2. In force: a dry-run create of an ordinary queue (with a capability),
//     and of a PodGroup naming a queue that does not exist, are admitted. These are what a
//     user does next; a configuration error refuses them while the params
//     are not synced.
//
// A policy refusing a bad queue would prove the same for one policy only
// when its params let it refuse something (vc-queue-children needs a parent
// queue with resources), which a fresh cluster does not have and install
// will not create. With several API servers the wait sees the one it reaches.
//
// In index mode the queue create of step 2 also proves the queue webhook
// (vc-queue-hierarchy), which its capability makes the API server call:
// with failurePolicy Fail the API server refuses even a dry run until
// serve answers it, over TLS it trusts. A refusal
// that names the webhook makes the error on timeout say where it points.

var (
	vapGVR  = vapGV.WithResource("validatingadmissionpolicies")
	vapbGVR = vapGV.WithResource("validatingadmissionpolicybindings")
	queueGK = schema.GroupKind{Group: "scheduling.volcano.sh", Kind: "Queue"}
	pgGK    = schema.GroupKind{Group: "scheduling.volcano.sh", Kind: "PodGroup"}
)

const (
	// probePrefix names the throwaway policy, binding and probe objects.
	probePrefix = "kubectl-vc-install-probe"
	// probeLabel marks the throwaway policy and binding, so that a probe
	// left by an interrupted install is removed by the next one.
	probeLabel = "kubectl-vc.io/install-probe"
	// probeNamespace holds the dry-run PodGroup; it exists in every cluster.
	probeNamespace = metav1.NamespaceDefault
	probeInterval  = 200 * time.Millisecond
)

// prober dry-runs requests until the admission policies are in force.
type prober struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	nonce  string
}

// probePolicy returns the throwaway policy and binding: they refuse the
// create of exactly one queue name, with a message carrying the nonce.
func (p *prober) probePolicy() (policy, binding *unstructured.Unstructured) {
	name := probePrefix + "-" + p.nonce
	labels := map[string]any{"app.kubernetes.io/part-of": "kubectl-vc", probeLabel: "true"}
	policy = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": vapGV.String(), "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{queueGK.Group}, "apiVersions": []any{"*"},
				"operations": []any{"CREATE"}, "resources": []any{"queues"},
			}}},
			"matchConditions": []any{map[string]any{
				"name": "probe-only", "expression": fmt.Sprintf("object.metadata.name == '%s'", name),
			}},
			"validations": []any{map[string]any{
				"expression": "false", "message": p.refusal(),
			}},
		},
	}}
	binding = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": vapGV.String(), "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"policyName": name, "validationActions": []any{"Deny"}},
	}}
	return policy, binding
}

func (p *prober) refusal() string { return "kubectl-vc install probe " + p.nonce }

// waitPolicies waits, up to timeout, until the policies install applied are
// in force (see above), and the queue webhook answers when webhook (where
// it points) is not empty. It returns nil at once when the server does not
// serve Queues: the policies then have nothing to check.
//
// A webhook whose Service has no ready pod yet (serve just applied, its
// image still pulling, or a cluster with no node to run it) is not waited
// for: it refuses every queue write it checks until serve is ready, which
// is failurePolicy Fail doing its job, not a rule lapsing; errOut says so
// in one line.
func waitPolicies(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, timeout time.Duration, webhook string, errOut io.Writer) error {
	qm, err := mapper.RESTMapping(queueGK)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	p := &prober{dyn: dyn, mapper: mapper, nonce: utilrand.String(8)}
	// Leftovers of an interrupted install first, then this run's probe;
	// it goes whatever happens next.
	p.cleanup(ctx)
	policy, binding := p.probePolicy()
	if _, err := dyn.Resource(vapGVR).Create(ctx, policy, metav1.CreateOptions{FieldManager: keys.CLIManager}); err != nil {
		return namedErr("create", "the probe policy validatingadmissionpolicy.admissionregistration.k8s.io/"+policy.GetName(), err)
	}
	defer p.cleanup(context.WithoutCancel(ctx))
	if _, err := dyn.Resource(vapbGVR).Create(ctx, binding, metav1.CreateOptions{FieldManager: keys.CLIManager}); err != nil {
		return namedErr("create", "the probe policy binding validatingadmissionpolicybinding.admissionregistration.k8s.io/"+binding.GetName(), err)
	}
	var pgs dynamic.ResourceInterface
	var pgGV string
	if m, err := mapper.RESTMapping(pgGK); err == nil {
		pgs = dyn.Resource(m.Resource).Namespace(probeNamespace)
		pgGV = m.GroupVersionKind.GroupVersion().String()
	}
	queues := dyn.Resource(qm.Resource)
	gv := qm.GroupVersionKind.GroupVersion().String()

	// pending is the server's last answer that kept the wait going; an
	// error of the client itself (the deadline cutting a request short)
	// does not replace it.
	var pending, noServe string
	hookFailed := false
	refused := func(err error) (bool, error) {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			pending = util.Message(err)
			hookFailed = strings.Contains(pending, keys.QueueWebhookName)
		}
		return false, nil
	}
	err = wait.PollUntilContextTimeout(ctx, probeInterval, timeout, true, func(ctx context.Context) (bool, error) {
		// 1. Seen: our probe policy refuses its queue.
		_, err := queues.Create(ctx, probeQueue(gv, probePrefix+"-"+p.nonce, ""), dryRun)
		if err == nil {
			pending = "the API server has not loaded the policies yet"
			return false, nil
		}
		if !strings.Contains(err.Error(), p.refusal()) {
			return refused(err)
		}
		// 2. In force: an ordinary queue and podgroup are admitted.
		if _, err := queues.Create(ctx, probeQueue(gv, "", probePrefix+"-"), dryRun); err != nil {
			if msg := util.Message(err); webhook != "" && strings.Contains(msg, keys.QueueWebhookName) && strings.Contains(msg, "no endpoints available for service") {
				noServe = msg
			} else {
				return refused(err)
			}
		}
		if pgs != nil {
			_, err := pgs.Create(ctx, probePodGroup(pgGV), dryRun)
			if err != nil && !apierrors.IsNotFound(err) {
				return refused(err)
			}
		}
		return true, nil
	})
	if err != nil {
		if pending == "" || !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("waiting for the admission policies: %w", err)
		}
		if hookFailed && webhook != "" {
			return fmt.Errorf("the queue webhook %s (validatingwebhookconfiguration %s, calling %s) does not answer after %s, so queue creates that name a parent or set resources are refused (a dry-run queue create got: %s): serve must run there and answer over TLS with a certificate of its caBundle; kubectl vc doctor says why, then run install again (or raise --timeout)",
				keys.QueueWebhookName, keys.QueueWebhookConfigName, webhook, timeout, pending)
		}
		return fmt.Errorf("the admission policies are not in force after %s (a dry-run request got: %s); run install again or raise --timeout", timeout, pending)
	}
	if noServe != "" {
		fmt.Fprintf(errOut, "warning: the queue webhook %s (calling %s) has no ready serve pod yet: queue creates that name a parent or set resources, and changes of parent or resources, are refused until serve is ready (kubectl vc doctor says why)\n",
			keys.QueueWebhookName, webhook)
	}
	return nil
}

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

// cleanup deletes every probe policy and binding, this run's and any an
// interrupted run left. Failing to delete is not install's failure: the
// probe refuses only its own queue name.
func (p *prober) cleanup(ctx context.Context) {
	sel := metav1.ListOptions{LabelSelector: probeLabel + "=true"}
	for _, gvr := range []schema.GroupVersionResource{vapbGVR, vapGVR} {
		list, err := p.dyn.Resource(gvr).List(ctx, sel)
		if err != nil {
			continue
		}
		for _, u := range list.Items {
			_ = p.dyn.Resource(gvr).Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		}
	}
}

// probeQueue is a queue under root with a capability and no children: no
// rule can refuse it, and the capability is what makes the API server call
// the queue webhook for it (a plain queue under root bounds nothing and is
// not sent).
func probeQueue(gv, name, generateName string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv, "kind": "Queue",
		"spec": map[string]any{"weight": int64(1), "capability": map[string]any{"cpu": "1"}},
	}}
	u.SetName(name)
	u.SetGenerateName(generateName)
	return u
}

// probePodGroup names a queue that does not exist: no rule can refuse it.
func probePodGroup(gv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv, "kind": "PodGroup",
		"metadata": map[string]any{"generateName": probePrefix + "-", "namespace": probeNamespace},
		"spec":     map[string]any{"minMember": int64(1), "queue": probePrefix + "-no-such-queue"},
	}}
}
