package queue

import (
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
)

// TestPodGroupRows proves the queue controller's read of podgroups
// (podgrouprows.ListWatch: server-side Tables of the QUEUE and STATUS
// columns) against the real API server and the embedded CRD: the list
// gives every podgroup's namespace, name, queue and phase, read per
// namespace as admin and cluster-wide with each row's metadata as a user
// who may not list namespaces; the watch from the list's resourceVersion
// gives creations, phase changes, queue moves and deletions with the same
// fields.
func TestPodGroupRows(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	nsA, nsB := "rows-a", "rows-b"
	// The namespaces are kept: no namespace controller runs on this
	// control plane, so a deleted namespace would stay Terminating and
	// refuse the next run's podgroups. fresh deletes the podgroups.
	for _, ns := range []string{nsA, nsB} {
		ensureNamespace(t, kube, ns)
	}
	create := func(ns, name, queue string, phase v1beta1.PodGroupPhase) {
		t.Helper()
		if _, err := vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"volcano.sh/preemptable": "true"}},
			Spec:       v1beta1.PodGroupSpec{MinMember: 2, Queue: queue},
			Status:     v1beta1.PodGroupStatus{Phase: phase, Running: 1},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(nsA, "one", "rows-q1", v1beta1.PodGroupRunning)
	create(nsA, "two", "", v1beta1.PodGroupPending) // no queue: the CRD defaults it
	create(nsB, "three", "rows-q2", "")             // no phase yet

	// row is what the count reads of a podgroup, for podgroups of the
	// test's namespaces.
	row := func(pg *v1beta1.PodGroup) string {
		return fmt.Sprintf("%s/%s queue=%q phase=%q", pg.Namespace, pg.Name, pg.Spec.Queue, pg.Status.Phase)
	}
	ours := func(pg *v1beta1.PodGroup) bool { return pg.Namespace == nsA || pg.Namespace == nsB }
	want := map[string]bool{
		row(rowOf(nsA, "one", "rows-q1", "Running")): true,
		row(rowOf(nsA, "two", "default", "Pending")): true,
		row(rowOf(nsB, "three", "rows-q2", "")):      true,
	}

	// A user who may read podgroups but not list namespaces.
	const reader = "rows-reader"
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{v1beta1.SchemeGroupVersion.Group}, Resources: []string{"podgroups"}, Verbs: []string{"list", "watch"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.RbacV1().ClusterRoles().Delete(ctx, reader, metav1.DeleteOptions{}) })
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: reader}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, reader, metav1.DeleteOptions{}) })
	readerCfg := rest.CopyConfig(cp.AdminConfig())
	readerCfg.Impersonate = rest.ImpersonationConfig{UserName: reader}
	if _, err := kubernetes.NewForConfigOrDie(readerCfg).CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatalf("%s may list namespaces; the test needs a user who may not", reader)
	}

	var listRV string
	for _, c := range []struct {
		name string
		cfg  *rest.Config
	}{{"admin, per namespace", cp.AdminConfig()}, {"no namespace list, cluster-wide", readerCfg}} {
		t.Run(c.name, func(t *testing.T) {
			lw, ok := podgrouprows.New(kubernetes.NewForConfigOrDie(c.cfg), versioned.NewForConfigOrDie(c.cfg))
			if !ok {
				t.Fatal("podgrouprows.New refused a real client")
			}
			// A list at resourceVersion "0" is served from the API
			// server's watch cache, which may not have caught up with
			// the creates just made (nor with a previous run's
			// deletions): the rows are compared until they are what
			// was written, and a mismatch that lasts is reported.
			// (RBAC is also cached briefly by the authorizer: the list
			// is retried until the new binding lets the reader read.)
			var l *podgrouprows.RowList
			got := map[string]bool{}
			eventually(t, "podgroups listed as Tables", func() (bool, error) {
				obj, err := lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
				if err != nil {
					return false, err
				}
				var ok bool
				if l, ok = obj.(*podgrouprows.RowList); !ok {
					t.Fatalf("listed a %T, not Table rows", obj)
				}
				clear(got)
				for i := range l.Items {
					if pg := l.Items[i].PodGroup(); ours(pg) {
						got[row(pg)] = true
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					return false, fmt.Errorf("listed rows\n%v\nwant\n%v", got, want)
				}
				return true, nil
			})
			if l.ResourceVersion == "" {
				t.Fatal("the list has no resourceVersion to watch from")
			}
			listRV = l.ResourceVersion
		})
	}

	lw, _ := podgrouprows.New(kube, vc)
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Fatal(err)
	}
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: listRV, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	create(nsA, "four", "rows-q1", v1beta1.PodGroupInqueue)
	if _, err := vc.SchedulingV1beta1().PodGroups(nsA).Patch(ctx, "one", types.MergePatchType,
		[]byte(`{"status":{"phase":"Completed"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vc.SchedulingV1beta1().PodGroups(nsA).Patch(ctx, "two", types.MergePatchType,
		[]byte(`{"spec":{"queue":"rows-q2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := vc.SchedulingV1beta1().PodGroups(nsB).Delete(ctx, "three", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantEvents := []string{
		"ADDED " + row(rowOf(nsA, "four", "rows-q1", "Inqueue")),
		"MODIFIED " + row(rowOf(nsA, "one", "rows-q1", "Completed")),
		"MODIFIED " + row(rowOf(nsA, "two", "rows-q2", "Pending")),
		"DELETED " + row(rowOf(nsB, "three", "rows-q2", "")),
	}
	var gotEvents []string
	timeout := time.After(30 * time.Second)
	for len(gotEvents) < len(wantEvents) {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %v", gotEvents)
			}
			if e.Type == watch.Error {
				t.Fatalf("watch error: %v", e.Object)
			}
			pg, isPG := e.Object.(*v1beta1.PodGroup)
			if !isPG {
				t.Fatalf("a %s event of a %T", e.Type, e.Object)
			}
			if e.Type == watch.Bookmark || !ours(pg) {
				continue
			}
			if pg.ResourceVersion == "" {
				t.Errorf("%s %s has no resourceVersion", e.Type, pg.Name)
			}
			gotEvents = append(gotEvents, string(e.Type)+" "+row(pg))
		case <-timeout:
			t.Fatalf("watch events so far\n%v\nwant\n%v", gotEvents, wantEvents)
		}
	}
	if fmt.Sprint(gotEvents) != fmt.Sprint(wantEvents) {
		t.Errorf("watch events\n%v\nwant\n%v", gotEvents, wantEvents)
	}
}

func rowOf(ns, name, queue string, phase v1beta1.PodGroupPhase) *v1beta1.PodGroup {
	pg := &v1beta1.PodGroup{}
	pg.Namespace, pg.Name, pg.Spec.Queue, pg.Status.Phase = ns, name, queue, phase
	return pg
}
