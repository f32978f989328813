package admission

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// TestCommandNeedsQueueRights: a tenant who may create Commands in its own
// namespace cannot close another team's queue with one (the controllers
// take queue Commands from every namespace); who may update the queue can,
// as vcctl's users always could.
func TestCommandNeedsQueueRights(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	for _, n := range []string{"cr-theirs", "cr-mine"} {
		if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: n}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	k := kube(t)
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"bus.volcano.sh"}, Resources: []string{"commands"}, Verbs: []string{"create", "get", "list"}},
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cr-tenant", Namespace: "default"}, Rules: rules}
	if _, err := k.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cr-tenant", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cr-tenant"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "cr-tenant"}}}
	if _, err := k.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The tenant may update its own queue, and only that one.
	own := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cr-tenant-queue"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"queues"}, ResourceNames: []string{"cr-mine"}, Verbs: []string{"get", "update"}}}}
	if _, err := k.RbacV1().ClusterRoles().Create(ctx, own, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cr-tenant-queue"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cr-tenant-queue"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "cr-tenant"}}}
	if _, err := k.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "cr-tenant"}
	tenant := versioned.NewForConfigOrDie(cfg)

	command := func(queue string) *busv1alpha1.Command {
		return &busv1alpha1.Command{
			ObjectMeta: metav1.ObjectMeta{GenerateName: queue + "-closequeue-"},
			Action:     busv1alpha1.CloseQueueAction,
			TargetObject: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: queue,
				UID: mustGetQueue(t, queue).UID},
		}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	// The authorizer sees new bindings a moment later.
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err = tenant.BusV1alpha1().Commands("default").Create(ctx, command("cr-mine"), dry)
		return err == nil, nil
	})
	mustAdmit(t, err)
	_, err = tenant.BusV1alpha1().Commands("default").Create(ctx, command("cr-theirs"), dry)
	mustDeny(t, err, "cr-tenant may not update queue cr-theirs: a Command that targets a queue needs the right to update it")
	// An administrator, as vcctl's users are, may.
	_, err = c.BusV1alpha1().Commands("default").Create(ctx, command("cr-theirs"), dry)
	mustAdmit(t, err)
}
