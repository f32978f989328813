package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The report of 'kubectl vc doctor -o json'.
type doctorReport struct {
	Checks []struct {
		Check, Status, Message, Fix string
		Objects                     []string
	}
	Summary struct{ OK, Warn, Fail int }
}

// doctor runs 'doctor -o json' with kubeconfig and returns the report and
// the run.
func doctor(t *testing.T, kubeconfig string, args ...string) (doctorReport, result) {
	t.Helper()
	r := runCmd(t, command(kubeconfig, append([]string{"doctor", "-o", "json"}, args...)...))
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, r)
	}
	fails := 0
	for _, c := range rep.Checks {
		if c.Status == "FAIL" {
			fails++
		}
	}
	// Exit code and stderr follow the FAILs: non-zero with one line.
	if want := fails > 0; (r.Code != 0) != want || rep.Summary.Fail != fails {
		t.Errorf("doctor: %d FAIL findings, summary %d, exit %d\n%s", fails, rep.Summary.Fail, r.Code, r)
	}
	if fails > 0 && strings.TrimSpace(r.Stderr) != fmt.Sprintf("error: %d of %d checks failed", fails, len(rep.Checks)) {
		t.Errorf("doctor stderr: %q", r.Stderr)
	}
	return rep, r
}

// findings returns the findings of one check.
func (r doctorReport) findings(check string) []struct {
	Check, Status, Message, Fix string
	Objects                     []string
} {
	var out []struct {
		Check, Status, Message, Fix string
		Objects                     []string
	}
	for _, c := range r.Checks {
		if c.Check == check {
			out = append(out, c)
		}
	}
	return out
}

// controllersNamespace makes a namespace of its own for a test's Leases
// and Deployments (--controllers-namespace), so tests do not see each
// other's, removed with them when the test ends.
func controllersNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := kube(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteNamespaceAfter(t, name)
	return name
}

// lease writes a leader-election Lease as client-go's leader election
// keeps it: a holder, renewed renewedAgo ago, for an hour (so a slow
// machine cannot let it expire during the test).
func lease(t *testing.T, ns, name, holder string, renewedAgo time.Duration) {
	t.Helper()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime:          ptr.To(metav1.NewMicroTime(time.Now().Add(-renewedAgo))),
			RenewTime:            ptr.To(metav1.NewMicroTime(time.Now().Add(-renewedAgo))),
		},
	}
	if renewedAgo > time.Hour {
		l.Spec.LeaseDurationSeconds = ptr.To[int32](15)
	}
	if _, err := kube(t).CoordinationV1().Leases(ns).Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorReport: on the test cluster as admin, with serve's Lease held:
// every CRD OK, the policies missing (WARN, not installed here), serve
// acting on Commands, RBAC OK; exit 0. The text form is one line per
// finding.
func TestDoctorReport(t *testing.T) {
	ns := controllersNamespace(t, "doctor-report")
	lease(t, ns, "kubectl-vc-serve", "serve-0_abc", 10*time.Minute) // "renewed 10m ago" in both runs
	rep, r := doctor(t, env.admin, "--controllers-namespace", ns, "--stuck-after", "24h")
	if r.Code != 0 {
		t.Fatalf("doctor:\n%s", r)
	}
	crds := rep.findings("crds")
	if len(crds) != 7 { // queues, podgroups, Commands, Jobs, NodeSets, queue indexes, HyperNodes
		t.Errorf("crds: %+v", crds)
	}
	for _, c := range crds {
		// The test cluster applies every embedded CRD with kubectl-vc's
		// field manager; install never installs Volcano's Job CRD, and
		// doctor must not say it did.
		by := "installed by 'kubectl vc install'"
		if slices.Contains(c.Objects, "jobs.batch.volcano.sh") {
			by = "by another means than 'kubectl vc install', which never installs it"
		}
		if c.Status != "OK" || !strings.Contains(c.Message, "serves v") || !strings.Contains(c.Message, by) {
			t.Errorf("crd finding: %+v", c)
		}
	}
	if a := rep.findings("admission"); len(a) != 1 || a[0].Status != "WARN" || a[0].Fix != "kubectl vc install --policies" ||
		!slices.Contains(a[0].Objects, "PolicyBinding vc-queue-delete") || !slices.Contains(a[0].Objects, "Policy vc-queue-spec") {
		t.Errorf("admission: %+v", a)
	}
	if c := rep.findings("controllers"); len(c) != 1 || c[0].Status != "OK" ||
		!strings.HasPrefix(c[0].Message, "serve (Lease doctor-report/kubectl-vc-serve held by serve-0_abc, renewed") {
		t.Errorf("controllers: %+v", c)
	}
	if c := rep.findings("commands"); len(c) != 1 || c[0].Status != "OK" {
		t.Errorf("commands: %+v", c)
	}
	if c := rep.findings("rbac"); len(c) != 1 || c[0].Status != "OK" || !strings.Contains(c[0].Message, "(admin)") {
		t.Errorf("rbac: %+v", c)
	}

	text := vc(t, "doctor", "--controllers-namespace", ns, "--stuck-after", "24h")
	lines := strings.Split(strings.TrimSpace(text.Stdout), "\n")
	if text.Code != 0 || len(lines) != len(rep.Checks)+1 {
		t.Fatalf("doctor (text): %d lines for %d findings\n%s", len(lines), len(rep.Checks), text)
	}
	for i, c := range rep.Checks {
		if !strings.HasPrefix(lines[i], fmt.Sprintf("%-4s  %-11s  %s", c.Status, c.Check, c.Message)) {
			t.Errorf("line %d: %q, want the finding %+v", i, lines[i], c)
		}
		if c.Fix != "" && !strings.HasSuffix(lines[i], "; to fix: "+c.Fix) {
			t.Errorf("line %d does not say what to do: %q", i, lines[i])
		}
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("%d OK, %d WARN, %d FAIL", rep.Summary.OK, rep.Summary.Warn, rep.Summary.Fail) {
		t.Errorf("summary line %q", last)
	}
}

// TestDoctorWhoActsOnCommands: serve and Volcano's controllers both acting
// is a FAIL; a Volcano whose --controllers leave out the queue controller,
// or whose Lease expired, is no conflict; nobody at all is a WARN.
func TestDoctorWhoActsOnCommands(t *testing.T) {
	ctx := context.Background()
	ns := controllersNamespace(t, "doctor-who")
	status := func() (string, string) {
		rep, _ := doctor(t, env.admin, "--controllers-namespace", ns, "--stuck-after", "24h")
		c := rep.findings("controllers")
		if len(c) != 1 {
			t.Fatalf("controllers: %+v", c)
		}
		return c[0].Status, c[0].Message + " | " + c[0].Fix
	}
	if s, m := status(); s != "WARN" || !strings.HasPrefix(m, "nobody acts on Commands") || !strings.Contains(m, "kubectl vc install --serve") {
		t.Errorf("nobody: %s %s", s, m)
	}
	lease(t, ns, "vc-controller-manager", "volcano-controllers-7d9_x", time.Hour+time.Minute) // expired
	lease(t, ns, "kubectl-vc-serve", "serve-1_y", time.Second)
	if s, m := status(); s != "OK" || !strings.HasPrefix(m, "serve (") || !strings.Contains(m, "Lease doctor-who/vc-controller-manager expired") {
		t.Errorf("serve, Volcano's Lease expired: %s %s", s, m)
	}
	if err := kube(t).CoordinationV1().Leases(ns).Delete(ctx, "vc-controller-manager", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lease(t, ns, "vc-controller-manager", "volcano-controllers-7d9_x", time.Second)
	s, m := status()
	// serve shows only by its Lease (no Deployment to scale): the fix
	// names the process to stop.
	if s != "FAIL" || !strings.HasPrefix(m, "both serve (") || !strings.Contains(m, "stop the 'kubectl vc serve' process that holds Lease doctor-who/kubectl-vc-serve (serve-1_y)") {
		t.Errorf("both: %s %s", s, m)
	}
	// Volcano deployed without its queue controller: no conflict.
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "volcano-controllers", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "volcano-controllers"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "volcano-controllers"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "volcano-controllers", Image: "volcanosh/vc-controller-manager:v1.12.0",
					Args: []string{"--logtostderr", "--controllers=+job-controller,+pg-controller,+gc-controller", "-v=4"}}}},
			},
		},
	}
	if _, err := kube(t).AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, m := status(); s != "OK" || !strings.HasPrefix(m, "serve (") || !strings.Contains(m, "leave out the queue controller") {
		t.Errorf("Volcano without its queue controller: %s %s", s, m)
	}
}

// TestDoctorFindsStuckCommandsAndQueues: a Command nobody applies for
// longer than --stuck-after is a FAIL (exit 1) naming it; queues in
// Unknown and Closing queues are reported with what holds them.
func TestDoctorFindsStuckCommandsAndQueues(t *testing.T) {
	ctx := context.Background()
	// The queues, their Commands and the podgroup go after the test.
	queues.ResetAfter(t, env.vc)
	ns := controllersNamespace(t, "doctor-stuck")
	mustVC(t, "queue", "create", "doctor-stuck")
	mustVC(t, "queue", "close", "doctor-stuck")
	cmds := commandsFor(t, "doctor-stuck")
	if len(cmds) != 1 {
		t.Fatalf("commands of doctor-stuck: %v", cmds)
	}
	cmd := cmds[0].Namespace + "/" + cmds[0].Name
	// --stuck-after 1s: wait until the Command is older than that.
	for time.Since(cmds[0].CreationTimestamp.Time) <= 2*time.Second {
		time.Sleep(100 * time.Millisecond)
	}

	mustVC(t, "queue", "create", "doctor-unknown")
	setStatus(t, "doctor-unknown", schedulingv1beta1.QueueStateUnknown, 0)
	mustVC(t, "queue", "create", "doctor-closing")
	setStatus(t, "doctor-closing", schedulingv1beta1.QueueStateClosing, 1)
	mustVC(t, "queue", "create", "doctor-closing-empty")
	setStatus(t, "doctor-closing-empty", schedulingv1beta1.QueueStateClosing, 0)
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "holder", Namespace: ns},
		Spec: schedulingv1beta1.PodGroupSpec{Queue: "doctor-closing", MinMember: 1}, Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning}}
	if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	rep, r := doctor(t, env.admin, "--controllers-namespace", ns, "--stuck-after", "1s")
	if r.Code == 0 {
		t.Fatalf("doctor with a stuck Command succeeded:\n%s", r)
	}
	var stuck bool
	for _, c := range rep.findings("commands") {
		if c.Status == "FAIL" && slices.ContainsFunc(c.Objects, func(o string) bool { return strings.HasPrefix(o, cmd+" (CloseQueue queue/doctor-stuck, ") }) {
			stuck = true
			if !strings.Contains(c.Fix, "start a controller") {
				t.Errorf("stuck Command, nobody acting: fix %q", c.Fix)
			}
		}
	}
	if !stuck {
		t.Errorf("the stuck Command %s is not a FAIL: %+v", cmd, rep.findings("commands"))
	}
	queues := map[string]string{}
	for _, c := range rep.findings("queues") {
		if c.Status != "WARN" {
			t.Errorf("queue finding: %+v", c)
		}
		for _, o := range c.Objects {
			queues[o] += c.Message
		}
	}
	if !strings.Contains(queues["doctor-unknown"], "in state Unknown") {
		t.Errorf("Unknown queue not reported: %v", queues)
	}
	if m := queues[ns+"/holder (Running)"]; !strings.Contains(m, "queue doctor-closing is Closing, held by 1 podgroup(s): "+ns+"/holder (Running)") {
		t.Errorf("Closing queue's holder not reported: %v", queues)
	}
	if m := queues["doctor-closing-empty"]; !strings.Contains(m, "is Closing but holds no podgroup") {
		t.Errorf("Closing queue without podgroups not reported: %v", queues)
	}

	// serve holds its Lease but the Command still waits: the fix is to
	// look at serve.
	lease(t, ns, "kubectl-vc-serve", "serve-0_abc", time.Second)
	rep, _ = doctor(t, env.admin, "--controllers-namespace", ns, "--stuck-after", "1s")
	for _, c := range rep.findings("commands") {
		if slices.ContainsFunc(c.Objects, func(o string) bool { return strings.HasPrefix(o, cmd+" ") }) && !strings.Contains(c.Fix, "serve (serve-0_abc) holds its Lease but has not applied them") {
			t.Errorf("stuck Command with serve's Lease held: %+v", c)
		}
	}
}

// TestDoctorUnprivileged: a user bound to no role gets a report, not an
// error: what could not be read is a WARN saying so, and the RBAC check
// lists what the user may not do.
func TestDoctorUnprivileged(t *testing.T) {
	rep, r := doctor(t, env.alice)
	if r.Code != 0 {
		t.Fatalf("doctor as alice:\n%s", r)
	}
	for _, check := range []string{"crds", "admission", "controllers", "commands", "queues"} {
		f := rep.findings(check)
		if len(f) == 0 || f[0].Status != "WARN" || !strings.HasPrefix(f[0].Message, "cannot check ") || !strings.Contains(f[0].Message, "forbidden") {
			t.Errorf("%s as alice: %+v", check, f)
		}
	}
	var openClose bool
	for _, f := range rep.findings("rbac") {
		if f.Status != "WARN" || !strings.HasPrefix(f.Message, "you (alice) may not ") {
			t.Errorf("rbac as alice: %+v", f)
		}
		if strings.Contains(f.Message, "open and close queues") && slices.Contains(f.Objects, "create commands.bus.volcano.sh in default") {
			openClose = true
		}
	}
	if !openClose {
		t.Errorf("alice's missing right to close queues not reported: %+v", rep.findings("rbac"))
	}
}

// TestDoctorBadInput: bad flags and an unreachable server are one error
// line and no report.
func TestDoctorBadInput(t *testing.T) {
	for _, c := range []struct {
		kubeconfig string
		args       []string
		want       string
	}{
		{env.admin, []string{"-o", "xml"}, `error: unknown output format "xml": use one of json, yaml`},
		{env.admin, []string{"--stuck-after", "0s"}, "error: --stuck-after must be positive, got 0s"},
		{env.admin, []string{"extra"}, `error: unknown command "extra" for "kubectl-vc doctor"`},
		{env.dead, nil, "error: cannot reach the Kubernetes API server at 127.0.0.1:1"},
	} {
		r := runCmd(t, command(c.kubeconfig, append([]string{"doctor"}, c.args...)...))
		if r.Code == 0 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, c.want) {
			t.Errorf("doctor %v: want one line %q\n%s", c.args, c.want, r)
		}
	}
}
