package install

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

// TestInstallBesideVolcano (issue 42): where Volcano is installed,
// volcano-system is Volcano's. install --serve (which also applies
// --rbac's namespace) and uninstall leave its labels and annotations as
// they were, so a Volcano pod (its admission and scheduler pods add
// DAC_OVERRIDE, which the restricted Pod Security level refuses) can still
// be created there; a namespace install creates gets the restricted level.
func TestInstallBesideVolcano(t *testing.T) {
	// kube-controller-manager deletes the namespace at the end.
	own := cptest.StartLevel(t, controlplane.Controllers)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := own.WriteKubeconfig(kc, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	mine := kubernetes.NewForConfigOrDie(own.AdminConfig())
	ctx := context.Background()

	// volcano-system as Volcano's installer leaves it, plus what its
	// administrator may have set.
	theirs := map[string]string{"app.kubernetes.io/part-of": "volcano", "pod-security.kubernetes.io/enforce": "privileged"}
	theirNotes := map[string]string{"owner": "the Volcano administrators"}
	if _, err := mine.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "volcano-system", Labels: theirs, Annotations: theirNotes}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	volcanoPod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "volcano-system", Labels: map[string]string{"app": "volcano-scheduler"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "volcano-scheduler", Image: "volcanosh/vc-scheduler:latest",
				SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"DAC_OVERRIDE"}}},
			}}},
		}
	}
	if _, err := mine.CoreV1().Pods("volcano-system").Create(ctx, volcanoPod("volcano-scheduler-0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unchanged := func(after string) {
		t.Helper()
		ns, err := mine.CoreV1().Namespaces().Get(ctx, "volcano-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(ns.Labels, withNameLabel(theirs)) || !maps.Equal(ns.Annotations, theirNotes) {
			t.Fatalf("after %s, volcano-system has labels %v and annotations %v; want %v and %v", after, ns.Labels, ns.Annotations, withNameLabel(theirs), theirNotes)
		}
		// The real test of the labels: a pod as Volcano's is still admitted.
		p := volcanoPod("volcano-scheduler-check")
		if _, err := mine.CoreV1().Pods("volcano-system").Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("after %s, a pod as Volcano's is refused in volcano-system: %v", after, err)
		}
	}

	for _, args := range [][]string{{"install", "--dry-run=server", "--serve"}, {"install", "--rbac"}, {"install", "--serve", "--image=ghcr.io/kubectl-vc/kubectl-vc:beside"}} {
		out, stderr, code := runBinary(t, kc, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(out, "namespace/volcano-system unchanged (it exists") {
			t.Errorf("%q does not say it left volcano-system alone:\n%s", args, out)
		}
		unchanged(strings.Join(args, " "))
	}
	// serve's own objects went in beside Volcano's.
	if _, err := mine.AppsV1().Deployments("volcano-system").Get(ctx, "kubectl-vc-serve", metav1.GetOptions{}); err != nil {
		t.Fatalf("install --serve made no Deployment: %v", err)
	}
	if _, stderr, code := runBinary(t, kc, "uninstall", "--yes"); code != 0 {
		t.Fatalf("uninstall: exit %d: %s", code, stderr)
	}
	unchanged("uninstall")
	if _, err := mine.CoreV1().Pods("volcano-system").Get(ctx, "volcano-scheduler-0", metav1.GetOptions{}); err != nil {
		t.Fatalf("Volcano's pod after uninstall: %v", err)
	}
	if _, err := mine.AppsV1().Deployments("volcano-system").Get(ctx, "kubectl-vc-serve", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("serve's Deployment after uninstall: %v", err)
	}

	// Where install creates the namespace, it gets the restricted level.
	if err := mine.CoreV1().Namespaces().Delete(ctx, "volcano-system", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "volcano-system deleted", func() (bool, error) {
		_, err := mine.CoreV1().Namespaces().Get(ctx, "volcano-system", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, stderr, code := runBinary(t, kc, "install", "--rbac"); code != 0 {
		t.Fatalf("install --rbac: exit %d: %s", code, stderr)
	}
	ns, err := mine.CoreV1().Namespaces().Get(ctx, "volcano-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("a volcano-system install created has labels %v, want enforce=restricted", ns.Labels)
	}
	if _, err := mine.CoreV1().Pods("volcano-system").Create(ctx, volcanoPod("refused"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Fatal("a pod adding DAC_OVERRIDE is admitted in the restricted namespace install created")
	}
}

// withNameLabel adds the label the API server puts on every namespace.
func withNameLabel(l map[string]string) map[string]string {
	out := maps.Clone(l)
	out[corev1.LabelMetadataName] = "volcano-system"
	return out
}
