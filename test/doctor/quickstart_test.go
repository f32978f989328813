package doctor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/volcanoflow"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// quickStartLines returns the kubectl lines of the quick start's by-hand
// block (the one that starts serve), as written, comments cut.
func quickStartLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, "kubectl vc serve") {
			continue
		}
		var out []string
		for _, l := range strings.Split(block, "\n") {
			if i := strings.Index(l, "   #"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "kubectl ") {
				out = append(out, l)
			}
		}
		return out
	}
	t.Fatal("docs/quickstart.md has no block that starts serve")
	return nil
}

// removePoliciesAfter deletes, when the test ends, the admission policies
// and bindings 'kubectl vc install' applies, and waits until the API server
// no longer enforces them: it drops a deleted policy asynchronously, as it
// loads one. A server-side dry-run delete of queue probe, an open queue
// with children the policies refuse to delete, passes admission once they
// are gone and removes nothing.
func removePoliciesAfter(t *testing.T, probe string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		objs, err := manifests.Objects(manifests.Policies)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		adm := env.kube.AdmissionregistrationV1()
		for _, o := range objs {
			switch o.GetKind() {
			case "ValidatingAdmissionPolicyBinding":
				err = adm.ValidatingAdmissionPolicyBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "ValidatingAdmissionPolicy":
				err = adm.ValidatingAdmissionPolicies().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "MutatingAdmissionPolicyBinding":
				err = adm.MutatingAdmissionPolicyBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "MutatingAdmissionPolicy":
				err = adm.MutatingAdmissionPolicies().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "QueueIndex":
				err = env.vc.AdmissionV1alpha1().QueueIndexes().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "ValidatingWebhookConfiguration":
				err = adm.ValidatingWebhookConfigurations().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			default:
				err = fmt.Errorf("%s %s: a kind this cleanup does not know", o.GetKind(), o.GetName())
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: %v", err)
			}
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := env.vc.SchedulingV1beta1().Queues().Delete(ctx, probe, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil || apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "denied request"), nil
		})
		if err != nil {
			t.Errorf("cleanup: the deleted policies still refuse deleting queue %s: %v", probe, err)
		}
	})
}

// TestQuickStartAgreesWithDoctor runs the quick start's lines as a user
// types them (kubectl with the plugin on PATH) and then doctor: serve, as
// the quick start runs it, is seen acting on Commands, and doctor says
// nothing untrue of what 'kubectl vc install' installed.
func TestQuickStartAgreesWithDoctor(t *testing.T) {
	// What the quick start leaves goes when the test ends (cleanups run
	// last registered first, so after serve, started below, is stopped):
	// the admission policies 'kubectl vc install' applied, which would
	// refuse deleting its open queues and which TestDoctorReport expects
	// missing on a later run (go test -count=N); volcano-system, which its
	// line creates, with serve's Lease; then the queues and Commands.
	queues.ResetAfter(t, env.vc)
	deleteNamespaceAfter(t, "volcano-system")
	removePoliciesAfter(t, "team-a")
	// 'make cluster-up' serves Volcano's flow kinds too (standing in for
	// Volcano, as for its Job CRD); this package's cluster has ours alone.
	flow, err := volcanoflow.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Apply(context.Background(), apiextensionsclient.NewForConfigOrDie(env.cp.AdminConfig()), keys.CLIManager, flow...); err != nil {
		t.Fatal(err)
	}
	lines := quickStartLines(t)
	served := false
	for _, l := range lines {
		switch {
		case strings.HasSuffix(l, "&"):
			startLine(t, strings.TrimSuffix(l, "&"))
			served = true
		case strings.HasPrefix(l, "kubectl vc doctor"):
			// Below, once serve has taken its Lease.
		case strings.HasPrefix(l, "kubectl vc queue create"):
			// serve creates root first; the quick start's user is slower.
			until(t, "queue root", func([]finding) bool {
				_, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), "root", metav1.GetOptions{})
				return err == nil
			})
			runLine(t, l)
		default:
			runLine(t, l)
		}
	}
	if !served {
		t.Fatal("the quick start starts no serve in the background")
	}
	fs := until(t, "serve acting on Commands", func(fs []finding) bool {
		c := of(fs, "controllers")
		return len(c) == 1 && c[0].Status == "OK"
	})
	c := of(fs, "controllers")[0]
	if !strings.HasPrefix(c.Message, "serve (Lease volcano-system/kubectl-vc-serve held by ") {
		t.Errorf("controllers: %+v", c)
	}
	for _, f := range fs {
		// What the quick start sets up must be OK; queues other tests of
		// this package left behind are not its business.
		if f.Status == "FAIL" || (f.Status != "OK" && f.Check != "queues") {
			t.Errorf("after the quick start doctor reports: %+v", f)
		}
		if strings.Contains(f.Message, "jobs.batch.volcano.sh") && strings.Contains(f.Message, "installed by 'kubectl vc install'") {
			t.Errorf("doctor says install installed Volcano's Job CRD, which it never installs: %s", f.Message)
		}
	}
	runLine(t, "kubectl vc doctor")
}

// TestDoctorHintsRunAsPrinted: the commands doctor prints as fixes run as
// printed and fix what they are for: deleting stuck Commands, starting a
// serve it can see (the only change: its ports, which other tests on this
// machine may hold), and the queue fixes.
func TestDoctorHintsRunAsPrinted(t *testing.T) {
	ctx := context.Background()
	vc := env.vc
	// The queues and Commands go after the test, and the namespaces it or
	// a printed hint creates, with serve's Lease (after serve, started
	// below, is stopped: cleanups run last registered first).
	queues.ResetAfter(t, vc)
	deleteNamespaceAfter(t, "hint-jobs")
	deleteNamespaceAfter(t, "hint-ctl")
	runLine(t, "kubectl create namespace hint-jobs")

	// A job Command no job controller applies.
	ref := metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "train", UID: types.UID("hint-train")}
	cmd, err := vc.BusV1alpha1().Commands("hint-jobs").Create(ctx, &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "train-abortjob-"}, Action: busv1alpha1.AbortJobAction, TargetObject: &ref,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// root, as serve makes it (no serve has run when this test runs first).
	if _, err := vc.SchedulingV1beta1().Queues().Get(ctx, "root", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		_, err = vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// A queue in state Unknown, and one with a broken place (as the queue
	// controller reports a missing parent).
	for _, q := range []*schedulingv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "hint-unknown"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "hint-orphan", Annotations: map[string]string{rules.HierarchyProblemAnnotation: rules.HierarchyProblem(rules.ParentMissing, "gone")}},
			Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "gone"}},
	} {
		if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	u, err := vc.SchedulingV1beta1().Queues().Get(ctx, "hint-unknown", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Status.State = schedulingv1beta1.QueueStateUnknown
	if _, err := vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for time.Since(cmd.CreationTimestamp.Time) <= 2*time.Second {
		time.Sleep(100 * time.Millisecond)
	}

	fs := doctorAsUser(t, "--stuck-after=1s", "--controllers-namespace=hint-ctl")
	ran := map[string]bool{}
	for _, f := range fs {
		for _, h := range hints(f.Fix) {
			switch {
			case strings.HasPrefix(h, "kubectl vc serve"):
				// Run below, in the background.
			case strings.HasPrefix(h, "kubectl vc install"), strings.Contains(h, " logs "), strings.Contains(h, " scale "):
				// Not in this cluster: install --serve would deploy serve
				// where no node runs it; no Deployment exists to read or
				// scale.
			default:
				runLine(t, h)
				ran[strings.Join(strings.Fields(h)[:3], " ")] = true
			}
		}
	}
	for _, want := range []string{"kubectl vc command", "kubectl create namespace", "kubectl vc queue"} {
		if !ran[want] {
			t.Errorf("no hint %q printed and run; findings:\n%+v", want, fs)
		}
	}
	if _, err := vc.BusV1alpha1().Commands("hint-jobs").Get(ctx, cmd.Name, metav1.GetOptions{}); err == nil {
		t.Errorf("the printed delete left Command %s", cmd.Name)
	}
	if q, err := vc.SchedulingV1beta1().Queues().Get(ctx, "hint-orphan", metav1.GetOptions{}); err != nil || q.Spec.Parent != "root" {
		t.Errorf("the printed queue update did not move hint-orphan: %v %+v", err, q)
	}

	// Nobody acts: the printed serve, run as printed, is seen.
	var serve string
	for _, f := range of(fs, "controllers") {
		for _, h := range hints(f.Fix) {
			if strings.HasPrefix(h, "kubectl vc serve") {
				serve = h
			}
		}
	}
	if serve != "kubectl vc serve --leader-elect --leader-elect-resource-namespace=hint-ctl" {
		t.Fatalf("nobody acts: the fix prints no serve doctor can see: %+v", of(fs, "controllers"))
	}
	startLine(t, serve+" --controllers=queue --metrics-bind-address=0 --health-probe-bind-address=0")
	until(t, "serve acting on Commands", func(fs []finding) bool {
		c := of(fs, "controllers")
		return len(c) == 1 && c[0].Status == "OK" && strings.HasPrefix(c[0].Message, "serve (Lease hint-ctl/kubectl-vc-serve held by ")
	}, "--controllers-namespace=hint-ctl")
}
