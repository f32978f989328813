package podgroup

import (
	"context"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
)

// No pod is left without a group for good. The cluster is set up as users
// run it: 'kubectl vc install' (its admission policy refuses a PodGroup in
// a queue that is not Open) and the queue controller next to the podgroup
// controller; queues are closed and opened with Commands, as 'kubectl vc
// queue close|open' does.
//
// First, with the periodic resync off: pods submitted while their queue is
// Closed (a bare pod, a Deployment's) wait for it, with a QueueNotOpen
// Warning, without using up their retries (nothing is dropped), and get
// their groups once the queue opens. Then, with a one-second resync: a
// request dropped after --max-requeue-num retries for a reason no event
// announces the end of (a site's admission policy that refuses PodGroups
// in a namespace with a label) is tried again until it succeeds once the
// label is gone.
func TestNoPodLeftUngrouped(t *testing.T) {
	cp := ownCluster(t, controlplane.Controllers)
	ctx := context.Background()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	if _, err := cptest.Install(ctx, cptest.Factory(kubeconfig), &install.Options{}); err != nil {
		t.Fatal(err)
	}

	m := startManager(t, cp, managerConfig{queue: true}, "--scheduler-name=volcano", "--podgroup-resync-period=0")
	ns := namespace(t)
	q := queues.Create(t, env.vc, "gated", "")
	queues.WaitState(t, env.vc, "gated", v1beta1.QueueStateOpen)
	queues.CommandGone(t, env.vc, queues.Command(t, env.vc, q, busv1alpha1.CloseQueueAction))
	queues.WaitState(t, env.vc, "gated", v1beta1.QueueStateClosed)
	eventually(t, "the API server refusing groups in the Closed queue", func(ctx context.Context) (bool, error) {
		_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: v1beta1.PodGroupSpec{MinMember: 1, Queue: "gated"},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})

	bare := createPod(t, ns, "waits", podSpec("volcano", res("cpu", "100m"), nil), withAnnotations(keys.QueueName, "gated"))
	d := createDeployment(t, deployment(ns, "waits", 2, map[string]string{keys.GroupMinMember: "2", keys.VolcanoQueueName: "gated"},
		template("waits", nil, podSpec("volcano", res("cpu", "100m"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	rsPods := podsOf(t, ns, rs.UID, 2, nil)
	warningFor(t, ns, bare.Name, "QueueNotOpen")
	for _, p := range rsPods {
		warningFor(t, ns, p.Name, "QueueNotOpen")
	}
	s := settled(t, ns)
	groupsAre(t, ns, groupName(s.UID))
	for _, p := range append(rsPods, bare) {
		got, err := env.kube.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := got.Annotations[keys.KubeGroupName]; ok {
			t.Errorf("pod %s annotated with %q although its group was refused", p.Name, g)
		}
	}
	if n, _ := m.metric(t, "volcano_podgroup_requests_dropped_total"); n != 0 {
		t.Errorf("%v requests dropped: waiting for a queue must not use up retries", n)
	}

	queues.CommandGone(t, env.vc, queues.Command(t, env.vc, queues.Get(t, env.vc, "gated"), busv1alpha1.OpenQueueAction))
	queues.WaitState(t, env.vc, "gated", v1beta1.QueueStateOpen)
	if pg := groupOf(t, bare, groupName(bare.UID)); pg.Spec.Queue != "gated" {
		t.Errorf("bare pod's group in queue %q", pg.Spec.Queue)
	}
	pg := minMemberFromOwner(t, allIn(t, rsPods, groupName(rs.UID)), 2)
	if pg.Spec.Queue != "gated" {
		t.Errorf("Deployment's group in queue %q", pg.Spec.Queue)
	}
	m.stop()

	m = startManager(t, cp, managerConfig{queue: true}, "--scheduler-name=volcano", "--podgroup-resync-period=1s")
	ns = namespace(t)
	freeze(t, ns)
	over := createPod(t, ns, "frozen", podSpec("volcano", nil, nil))
	warningFor(t, ns, over.Name, "PodGroupSyncFailed")
	if n, _ := m.metric(t, "volcano_podgroup_requests_dropped_total", `kind="Pod"`); n < 1 {
		t.Errorf("volcano_podgroup_requests_dropped_total{kind=\"Pod\"} = %v after a drop", n)
	}
	// Nothing the controller watches changes: only the namespace's label.
	unlabel := []byte(`{"metadata":{"labels":{"` + freezeLabel + `":null}}}`)
	if _, err := env.kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, unlabel, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	groupOf(t, over, groupName(over.UID))
}

// freezeLabel marks a namespace where the admission policy of freeze
// refuses new PodGroups.
const freezeLabel = "pg-test/freeze"

// freeze makes the API server refuse new PodGroups in ns until the
// namespace loses freezeLabel, as a site's own admission policy might (a
// change freeze, a budget): a ValidatingAdmissionPolicy that refuses
// every PodGroup created in a namespace with the label. It returns once
// the API server enforces it.
func freeze(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	label := []byte(`{"metadata":{"labels":{"` + freezeLabel + `":"true"}}}`)
	if _, err := env.kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	name := "pg-test-freeze"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{freezeLabel: "true"}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{
						APIGroups: []string{"scheduling.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"podgroups"},
					},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "new podgroups are frozen in this namespace"}},
		},
	}
	if _, err := env.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := env.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the API server refusing groups in the frozen namespace", func(ctx context.Context) (bool, error) {
		_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: v1beta1.PodGroupSpec{MinMember: 1},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
}
