package install

import (
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// TestServedNamespacesOnly: with install --slurm-namespaces serve's
// ServiceAccount may create pods, claims, Services, PodDisruptionBudgets,
// ConfigMaps and revisions only in the named namespaces (the API server's
// RBAC decides), and serve, run as that ServiceAccount with the same
// --slurm-namespaces, makes a named namespace's NodeSet's pods and
// dependents without one 403, while a NodeSet of another namespace gets
// SlurmReachable=False, reason NamespaceNotServed, and nothing else: no
// pod, claim, Service, budget, ConfigMap or revision. On a control plane
// of its own (install replaces serve's ClusterRole).
func TestServedNamespacesOnly(t *testing.T) {
	own, f := ownControlPlane(t)
	admin := own.AdminConfig()
	kube, vc := kubernetes.NewForConfigOrDie(admin), versioned.NewForConfigOrDie(admin)
	const served, other = "slurm-served", "tenant-other"
	for _, ns := range []string{served, other} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := cptest.Install(ctx, f, &install.Options{Selection: install.Selection{RBAC: true, SlurmNamespaces: []string{served}}}); err != nil {
		t.Fatalf("install --rbac --slurm-namespaces=%s: %v\n%s", served, err, out)
	}

	// What RBAC lets serve's ServiceAccount do, namespace by namespace.
	may := func(ns, verb, group, resource, sub string) bool {
		t.Helper()
		r, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:volcano-system:kubectl-vc-serve",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:volcano-system", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource,
				Subresource: sub},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	for _, w := range []struct{ verb, group, resource, sub string }{
		{"create", "", "pods", ""}, {"delete", "", "pods", ""}, {"patch", "", "pods", "status"},
		{"create", "", "persistentvolumeclaims", ""}, {"create", "", "services", ""}, {"create", "policy", "poddisruptionbudgets", ""},
		{"create", "", "configmaps", ""}, {"create", "apps", "controllerrevisions", ""}, {"delete", "apps", "controllerrevisions", ""},
	} {
		if !may(served, w.verb, w.group, w.resource, w.sub) {
			t.Errorf("serve may not %s %s %s/%s in %s, a namespace of --slurm-namespaces", w.verb, w.group, w.resource, w.sub, served)
		}
		if may(other, w.verb, w.group, w.resource, w.sub) {
			t.Errorf("serve may %s %s %s/%s in %s, a namespace --slurm-namespaces does not name", w.verb, w.group, w.resource, w.sub, other)
		}
	}
	// What the podgroup controller needs everywhere stays.
	for _, ns := range []string{served, other} {
		if !may(ns, "patch", "", "pods", "") || !may(ns, "watch", "", "pods", "") {
			t.Errorf("serve may not patch or watch pods in %s (the podgroup controller's annotation)", ns)
		}
	}

	// serve as the ServiceAccount, with the Slurm of a throw-away cluster
	// (its node: the served NodeSet's only pod).
	cluster := slurmtest.StartT(t, "workers-0")
	path := tokenKubeconfig(t, admin, kube)
	p := cptest.StartServe(t, binary, path, "--controllers=nodeset", "--slurm-conf="+cluster.Conf, "--slurm-namespaces="+served)

	nodeSet := func(ns string) *slinkyv1beta1.NodeSet {
		t.Helper()
		created, err := vc.SlinkyV1beta1().NodeSets(ns).Create(ctx, &slinkyv1beta1.NodeSet{
			ObjectMeta: metav1.ObjectMeta{Name: "workers"},
			Spec: slinkyv1beta1.NodeSetSpec{
				ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
				Replicas:      ptr.To[int32](1),
				Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
				Template:      slinkyv1beta1.PodTemplate{PodSpec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0)}},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
					},
				}},
				SSH: &slinkyv1beta1.NodeSetSSH{Enabled: true,
					SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}, Key: "sssd.conf"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	outside := nodeSet(other)
	nodeSet(served)

	eventually(t, "the served NodeSet's pod, claim, Service, budget, ConfigMap and revision", func() (bool, error) {
		return livePodNames(t, kube, served) == "workers-0" && len(made(t, kube, served)) == 6, nil
	})
	if _, err := kube.CoreV1().Services(served).Get(ctx, "workers", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	var cond *metav1.Condition
	eventually(t, "the NodeSet of "+other+" says it is not served", func() (bool, error) {
		got, err := vc.SlinkyV1beta1().NodeSets(other).Get(ctx, outside.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cond = meta.FindStatusCondition(got.Status.Conditions, "SlurmReachable")
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == nodeset.ReasonNotServed, nil
	})
	if !strings.Contains(cond.Message, "--slurm-namespaces") || !strings.Contains(cond.Message, served) {
		t.Errorf("the condition does not say what to do: %q", cond.Message)
	}
	// A few more resyncs, then nothing in the other namespace.
	time.Sleep(3 * time.Second)
	if got := made(t, kube, other); len(got) != 0 {
		t.Errorf("serve made %v in %s, a namespace it does not serve", got, other)
	}
	byCode, samples := requestsByCode(t, p)
	if len(samples) > 0 {
		t.Errorf("serve got 403s as the ServiceAccount (by code %v): %s", byCode, strings.Join(samples, "\n"))
	}
}

// made names the objects serve makes for a NodeSet found in ns: pods,
// claims, Services, budgets, ConfigMaps (not the API server's
// kube-root-ca.crt) and revisions.
func made(t *testing.T, kube kubernetes.Interface, ns string) []string {
	t.Helper()
	var out []string
	add := func(kind string, n int, err error, names func(i int) string) {
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if name := names(i); name != "kube-root-ca.crt" {
				out = append(out, kind+"/"+name)
			}
		}
	}
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	add("pod", len(pods.Items), err, func(i int) string { return pods.Items[i].Name })
	claims, err := kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	add("claim", len(claims.Items), err, func(i int) string { return claims.Items[i].Name })
	svcs, err := kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	add("service", len(svcs.Items), err, func(i int) string { return svcs.Items[i].Name })
	pdbs, err := kube.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	add("pdb", len(pdbs.Items), err, func(i int) string { return pdbs.Items[i].Name })
	cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	add("configmap", len(cms.Items), err, func(i int) string { return cms.Items[i].Name })
	revs, err := kube.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	add("revision", len(revs.Items), err, func(i int) string { return revs.Items[i].Name })
	return out
}
