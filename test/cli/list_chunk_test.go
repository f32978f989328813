package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/volcanoflow"
)

// chunkFixture makes five objects of every listed kind: queues labelled
// for this test, and podgroups, jobs, pods (each in a podgroup known only
// by its annotation, so 'pod list' lists podgroups too), Commands and
// NodeSets in namespace ns. It returns the names of each kind.
func chunkFixture(t *testing.T, ns string) (queues, names []string) {
	t.Helper()
	ctx := context.Background()
	// Volcano's JobFlow and JobTemplate, which install leaves to Volcano:
	// our CRDs of them, as Volcano's own are only in the shared folder.
	flowCRDs, err := volcanoflow.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(env.cp.AdminConfig()), "test", flowCRDs...); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		q, n := fmt.Sprintf("chunk-q-%d", i), fmt.Sprintf("chunk-%d", i)
		queues, names = append(queues, q), append(names, n)
		deleteQueuesAfter(t, q)
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(env.vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: q, Labels: map[string]string{"list-chunk-test": "yes"}},
			Spec:       schedulingv1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{}))
		must(env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: q},
		}, metav1.CreateOptions{}))
		must(env.vc.BatchV1alpha1().Jobs(ns).Create(ctx, &batchv1alpha1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: batchv1alpha1.JobSpec{MinAvailable: 1, Queue: q, Tasks: []batchv1alpha1.TaskSpec{{
				Name: "worker", Replicas: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}},
			}}},
		}, metav1.CreateOptions{}))
		must(kube(t).CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: map[string]string{keys.KubeGroupName: n}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
		}, metav1.CreateOptions{}))
		must(env.vc.BusV1alpha1().Commands(ns).Create(ctx, &busv1alpha1.Command{
			ObjectMeta:   metav1.ObjectMeta{Name: n},
			Action:       "CloseQueue",
			TargetObject: &metav1.OwnerReference{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Queue", Name: q, UID: "00000000-0000-0000-0000-000000000000"},
		}, metav1.CreateOptions{}))
		must(env.vc.SlinkyV1beta1().NodeSets(ns).Create(ctx, nodesets.NodeSet(n), metav1.CreateOptions{}))
		must(env.vc.FlowV1alpha1().JobFlows(ns).Create(ctx, &flowv1alpha1.JobFlow{
			ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec:       flowv1alpha1.JobFlowSpec{Flows: []flowv1alpha1.Flow{{Name: n}}},
		}, metav1.CreateOptions{}))
		must(env.vc.FlowV1alpha1().JobTemplates(ns).Create(ctx, &flowv1alpha1.JobTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: batchv1alpha1.JobSpec{Tasks: []batchv1alpha1.TaskSpec{{Name: "worker", Replicas: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}}}},
		}, metav1.CreateOptions{}))
	}
	return queues, names
}

// TestListChunkSize: every list command reads its list --chunk-size
// objects per request (client-go's pager), 0 in one request, 500 by
// default, and prints the whole list whatever the chunk size; a negative
// size is refused before any request.
func TestListChunkSize(t *testing.T) {
	ns := namespace(t, "list-chunk")
	queues, names := chunkFixture(t, ns)
	proxy := binary.NewRecordingProxy(t, env.cp.AdminConfig())
	kc := proxy.Kubeconfig(t)
	vcAPI, nsAPI := "/apis/scheduling.volcano.sh/v1beta1/", "/namespaces/"+ns+"/"
	commands := []struct {
		name string
		args []string
		want []string
		// paths are the lists the command makes, each paged.
		paths []string
	}{
		{"queue list", []string{"queue", "list", "-l", "list-chunk-test=yes"}, queues, []string{vcAPI + "queues"}},
		{"podgroup list", []string{"podgroup", "list", "-n", ns}, names, []string{vcAPI + nsAPI[1:] + "podgroups"}},
		{"job list", []string{"job", "list", "-n", ns}, names, []string{"/apis/batch.volcano.sh/v1alpha1" + nsAPI + "jobs"}},
		{"pod list", []string{"pod", "list", "-n", ns}, names, []string{"/api/v1" + nsAPI + "pods", vcAPI + nsAPI[1:] + "podgroups"}},
		{"command list", []string{"command", "list", "-n", ns}, names, []string{"/apis/bus.volcano.sh/v1alpha1" + nsAPI + "commands"}},
		{"nodeset list", []string{"nodeset", "list", "-n", ns}, names, []string{"/apis/slinky.slurm.net/v1beta1" + nsAPI + "nodesets"}},
		{"jobflow list", []string{"jobflow", "list", "-n", ns}, names, []string{"/apis/flow.volcano.sh/v1alpha1" + nsAPI + "jobflows"}},
		{"jobtemplate list", []string{"jobtemplate", "list", "-n", ns}, names, []string{"/apis/flow.volcano.sh/v1alpha1" + nsAPI + "jobtemplates"}},
	}
	sizes := []struct {
		flag []string
		// limit is the limit parameter of every request ("" for none);
		// requests is how many there are for five objects.
		limit    string
		requests int
	}{
		{[]string{"--chunk-size", "2"}, "2", 3},
		{[]string{"--chunk-size=0"}, "", 1},
		{nil, "500", 1},
	}
	for _, c := range commands {
		for _, s := range sizes {
			args := append(append(slices.Clone(c.args), "-o", "name"), s.flag...)
			t.Run(strings.Join(append([]string{c.name}, s.flag...), " "), func(t *testing.T) {
				proxy.Reset()
				r := runCmd(t, command(kc, args...))
				if r.Code != 0 {
					t.Fatalf("kubectl-vc %s:\n%s", strings.Join(args, " "), r)
				}
				var got []string
				for _, l := range strings.Fields(r.Stdout) {
					_, name, _ := strings.Cut(l, "/")
					got = append(got, name)
				}
				slices.Sort(got)
				if !slices.Equal(got, c.want) {
					t.Errorf("listed %v, want %v\n%s", got, c.want, r)
				}
				for _, path := range c.paths {
					lists := proxy.Lists(path)
					if len(lists) != s.requests {
						t.Errorf("%d list requests to %s, want %d: %v", len(lists), path, s.requests, lists)
					}
					for i, q := range lists {
						if q.Get("limit") != s.limit {
							t.Errorf("request %d to %s: limit %q, want %q", i, path, q.Get("limit"), s.limit)
						}
						if (i == 0) != (q.Get("continue") == "") {
							t.Errorf("request %d to %s: continue %q", i, path, q.Get("continue"))
						}
					}
				}
			})
		}
	}
	// Queues without a status (no controller here) are counted from one
	// list of every podgroup: that list is paged too.
	t.Run("queue list counts podgroups in chunks", func(t *testing.T) {
		proxy.Reset()
		r := runCmd(t, command(kc, "queue", "list", "-l", "list-chunk-test=yes", "--chunk-size", "2"))
		if r.Code != 0 {
			t.Fatalf("queue list:\n%s", r)
		}
		lists := proxy.Lists(vcAPI + "podgroups")
		// At least the fixture's five podgroups: three pages or more.
		if len(lists) < 3 {
			t.Fatalf("%d podgroup list requests, want at least 3 pages of 2: %v", len(lists), lists)
		}
		for i, q := range lists {
			if q.Get("limit") != "2" || (i == 0) != (q.Get("continue") == "") {
				t.Errorf("podgroup list request %d: limit %q continue %q", i, q.Get("limit"), q.Get("continue"))
			}
		}
	})
	for _, c := range commands {
		t.Run(c.name+" --chunk-size -1", func(t *testing.T) {
			proxy.Reset()
			r := runCmd(t, command(kc, append(slices.Clone(c.args), "--chunk-size", "-1")...))
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if r.Code == 0 || r.Stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "--chunk-size") {
				t.Errorf("want one line on stderr about --chunk-size, nothing on stdout, non-zero exit:\n%s", r)
			}
			if n := proxy.Count(); n != 0 {
				t.Errorf("%d requests made for a refused --chunk-size", n)
			}
		})
	}
}

// TestListFlagsComplete: the shell completes the new flags of the list
// commands, as cobra completes every flag.
func TestListFlagsComplete(t *testing.T) {
	for _, group := range []string{"command", "nodeset", "queue", "podgroup", "job", "pod", "jobflow", "jobtemplate"} {
		r := mustVC(t, "__complete", group, "list", "--")
		for _, flag := range []string{"--chunk-size", "--watch"} {
			if flag == "--watch" && group == "pod" {
				continue // pod list has no --watch
			}
			if !slices.Contains(strings.Fields(r.Stdout), flag) {
				t.Errorf("%s list: %s not completed:\n%s", group, flag, r.Stdout)
			}
		}
	}
}
