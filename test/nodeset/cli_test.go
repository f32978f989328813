package nodeset

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

// vc runs 'kubectl vc' in-process as user against the test namespace.
func (e *env) vcCmd(user string, args ...string) (code int, stdout, stderr string) {
	e.T.Helper()
	kubeconfig := filepath.Join(e.T.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, user); err != nil {
		e.T.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
	code = cli.Execute(streams, append([]string{"--kubeconfig", kubeconfig, "--context", user, "-n", e.NS}, args...), cli.Commands()...)
	return code, out.String(), errOut.String()
}

func (e *env) mustVC(args ...string) string {
	e.T.Helper()
	code, out, errOut := e.vcCmd(controlplane.AdminUser, args...)
	if code != 0 {
		e.T.Fatalf("kubectl vc %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// TestCLI drives list, scale, cordon, describe, uncordon and history against
// the running controller and slurmctld, and the failure paths.
func TestCLI(t *testing.T) {
	e := start(t, "cli", 3)
	e.NewNodeSet("cli", 2)
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })
	e.Eventually("status", func() (bool, string) {
		st := e.Get("cli").Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})

	out := e.mustVC("nodeset", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME DESIRED CURRENT READY UPDATED IDLE ALLOC DRAIN DOWN AGE" {
		t.Fatalf("list:\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) != 10 || strings.Join(f[:9], " ") != "cli 2 2 2 2 2 0 0 0" {
		t.Fatalf("list row: %q", lines[1])
	}

	if out := e.mustVC("nodeset", "scale", "cli", "--replicas", "3"); !strings.Contains(out, "scaled to 3") {
		t.Fatalf("scale: %s", out)
	}
	e.Eventually("third pod", func() (bool, string) { n := e.MarkAllReady(); return n == 3, fmt.Sprint(n) })
	if got := *e.Get("cli").Spec.Replicas; got != 3 {
		t.Fatalf("replicas %d", got)
	}

	if out := e.mustVC("nodeset", "cordon", "cli-1"); out != "pod/cli-1 cordoned\n" {
		t.Fatalf("cordon: %q", out)
	}
	e.Eventually("cordon drains", func() (bool, string) {
		st := e.SlurmState("cli-1")
		return st == "DRAINED (kubectl-vc: pod cordoned)", st
	})
	out = e.mustVC(append([]string{"nodeset", "describe", "cli"}, e.Slurm.ServeFlags(t)...)...)
	for _, want := range []string{"Replicas:", "3 desired", "RollingUpdate (maxUnavailable 1)",
		"DRAINED (kubectl-vc: pod cordoned)"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "cli-1 ") {
			row = strings.Join(strings.Fields(l), " ")
		}
	}
	rev := "cli-" + e.Get("cli").Status.NodeSetHash
	if !strings.HasPrefix(row, "cli-1 1 "+rev+" Running,Ready <none> yes <none> DRAINED") {
		t.Errorf("describe row of cli-1: %q", row)
	}

	if out := e.mustVC("nodeset", "uncordon", "cli-1"); out != "pod/cli-1 uncordoned\n" {
		t.Fatalf("uncordon: %q", out)
	}
	e.Eventually("uncordon resumes", func() (bool, string) {
		st := e.SlurmState("cli-1")
		return st == "IDLE", st
	})

	out = e.mustVC("nodeset", "history", "cli")
	if !strings.Contains(out, rev+"*") || !strings.Contains(strings.Join(strings.Fields(out), " "), "1 "+rev+"* 3") {
		t.Fatalf("history:\n%s", out)
	}

	// Shell completion of NodeSet and pod names.
	if out := e.mustVC("__complete", "nodeset", "describe", "c"); !strings.HasPrefix(out, "cli\n") {
		t.Errorf("nodeset name completion: %q", out)
	}
	if out := e.mustVC("__complete", "nodeset", "cordon", "cli-"); !strings.HasPrefix(out, "cli-0\ncli-1\ncli-2\n") {
		t.Errorf("pod name completion: %q", out)
	}

	// Failure paths: one line on stderr, exit 1.
	stranger := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: e.NS},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := e.Kube.CoreV1().Pods(e.NS).Create(e.Ctx, stranger, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user string
		args []string
		want string
	}{
		{controlplane.AdminUser, []string{"nodeset", "scale", "cli"}, "--replicas is required"},
		{controlplane.AdminUser, []string{"nodeset", "scale", "nope", "--replicas", "1"}, "not found"},
		{controlplane.AdminUser, []string{"nodeset", "cordon", "stranger"}, "not managed by a NodeSet"},
		{controlplane.AdminUser, []string{"nodeset", "cordon", "nope-0"}, "not found"},
		{controlplane.AdminUser, []string{"nodeset", "describe", "Bad_Name"}, "invalid NodeSet name"},
		{controlplane.UnprivilegedUser, []string{"nodeset", "list"}, "forbidden"},
	} {
		code, _, errOut := e.vcCmd(tc.user, tc.args...)
		if code != 1 || !strings.HasPrefix(errOut, "error: ") || !strings.Contains(strings.ToLower(errOut), strings.ToLower(tc.want)) ||
			strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s %v: exit %d, stderr %q; want one line with %q", tc.user, tc.args, code, errOut, tc.want)
		}
	}
	if _, ok := e.Pods()["stranger"].Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
		t.Fatal("refused cordon still annotated the pod")
	}
}
