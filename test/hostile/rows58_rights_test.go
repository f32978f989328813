package hostile

// The row of issue 58's item 5: a tenant allowed to create Commands in its
// own namespace tries to close another team's queue.

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

func init() { rows = append(rows, rowCommandRights) }

// commandRightsPolicy is the admission policy install ships for it
// (pkg/manifests/policies); the row installs it and its binding alone,
// as the other policies need the queue index controller.
const commandRightsPolicy = "vc-command-queue-rights"

// tenantCommands is how many Commands the tenant sends.
const tenantCommands = 50

var rowCommandRights = row{
	name: "a tenant's Commands for another team's queue",
	apply: func(t *testing.T, w *world) {
		ctx := context.Background()
		installed := installCommandRights(t, w)
		q := victimLike(t, w, "theirs")
		w.put("theirs", q.Name)
		user := runName("tenant")
		if _, err := env.kube.RbacV1().Roles(w.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "commands"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"bus.volcano.sh"}, Resources: []string{"commands"}, Verbs: []string{"create"}}}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.kube.RbacV1().RoleBindings(w.ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "commands"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "commands"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(env.cp.AdminConfig())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		tenant := versioned.NewForConfigOrDie(cfg)
		cmd := &busv1alpha1.Command{ObjectMeta: metav1.ObjectMeta{GenerateName: "close-theirs-"}, Action: busv1alpha1.CloseQueueAction,
			TargetObject: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: q.Name, UID: q.UID}}
		// The tenant's right to create Commands, and the policy, reach the
		// API server's authorizer and admission a moment after they are
		// written: until the RBAC refusal is gone and (where installed) the
		// policy refuses, a create proves nothing.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			_, err := tenant.BusV1alpha1().Commands(w.ns).Create(ctx, cmd, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			byRBAC := err != nil && strings.Contains(err.Error(), "cannot create resource")
			if !byRBAC && (err != nil) == installed {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		refused := 0
		for range tenantCommands {
			_, err := tenant.BusV1alpha1().Commands(w.ns).Create(ctx, cmd, metav1.CreateOptions{})
			if err != nil {
				if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
					t.Fatalf("the tenant's Command: %v", err)
				}
				refused++
				w.put("refusal", err.Error())
			}
		}
		w.put("refused", refused)
		w.put("sent", time.Now())
	},
	handled: func(t *testing.T, w *world) {
		refused := w.get("refused").(int)
		if r, ok := w.get("refusal").(string); ok {
			t.Logf("%d of the tenant's %d Commands refused, e.g.: %s", refused, tenantCommands, r)
		}
		if refused != tenantCommands {
			t.Errorf("%d of the tenant's %d Commands for queue %s were admitted", tenantCommands-refused, tenantCommands, w.get("theirs"))
		}
		// serve applies a Command within milliseconds (the close rows):
		// five seconds after, the queue is still Open.
		time.Sleep(time.Until(w.get("sent").(time.Time).Add(5 * time.Second)))
		q, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), w.get("theirs").(string), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if q.Status.State != v1beta1.QueueStateOpen {
			t.Errorf("another team's queue %s is %s after the tenant's Commands", q.Name, q.Status.State)
		}
	},
}

// installCommandRights creates the policy and its binding from the
// manifests install ships, until the test ends. Without them (code before
// issue 58) the row goes on, and the tenant closes the queue.
func installCommandRights(t *testing.T, w *world) bool {
	t.Helper()
	objs, err := manifests.Objects(manifests.Policies)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(env.cp.AdminConfig())
	ctx := context.Background()
	found := 0
	for _, o := range objs {
		if o.GetName() != commandRightsPolicy {
			continue
		}
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1",
			Resource: map[string]string{"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
				"ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}[o.GetKind()]}
		if _, err := dyn.Resource(gvr).Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		found++
		w.t.Cleanup(func() {
			if err := dyn.Resource(gvr).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		})
	}
	if found == 0 {
		t.Logf("install ships no policy %s: the tenant's Commands are admitted", commandRightsPolicy)
		return false
	}
	if found != 2 {
		t.Fatalf("%d objects named %s in the manifests, want the policy and its binding", found, commandRightsPolicy)
	}
	return true
}
