package job

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func jobCount(t *testing.T, ns string) int {
	t.Helper()
	l, err := env.vc.BatchV1alpha1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// TestCreateFromFlags: the job 'job create' writes, field for field.
func TestCreateFromFlags(t *testing.T) {
	ns := namespace(t, "job-create")
	queue(t, "research", schedulingv1beta1.QueueStateOpen)
	r := mustVC(t, "job", "create", "train", "-n", ns, "--image", "busybox:1.36", "--replicas", "4", "--min", "2",
		"--queue", "research", "--requests", "cpu=1,memory=1Gi", "--limits", "cpu=2,memory=1Gi", "--command", "--", "sleep", "3600")
	if r.Stdout != "job.batch.volcano.sh/train created\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	j, err := env.vc.BatchV1alpha1().Jobs(ns).Get(context.Background(), "train", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	min := int32(2)
	want := batchv1alpha1.JobSpec{
		SchedulerName: "volcano", MinAvailable: 2, Queue: "research", MaxRetry: 3, // maxRetry: the CRD's default
		Tasks: []batchv1alpha1.TaskSpec{{
			Name: "default0", Replicas: 4, MinAvailable: &min,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "train", Image: "busybox:1.36", Command: []string{"sleep", "3600"}, ImagePullPolicy: corev1.PullIfNotPresent,
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					},
				}},
			}},
		}},
	}
	gotJSON, _ := yaml.Marshal(j.Spec)
	wantJSON, _ := yaml.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("created spec:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
	// Without --command the words after '--' are the container's args.
	mustVC(t, "job", "create", "args", "-n", ns, "--image", "busybox:1.36", "--queue", "research", "--", "sleep", "3600")
	if j, err = env.vc.BatchV1alpha1().Jobs(ns).Get(context.Background(), "args", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := j.Spec.Tasks[0].Template.Spec.Containers[0]; c.Command != nil || !reflect.DeepEqual(c.Args, []string{"sleep", "3600"}) {
		t.Errorf("args: command %q args %q", c.Command, c.Args)
	}
	mustFail(t, `job "train" already exists in namespace "`+ns+`"`, "job", "create", "train", "-n", ns, "--image", "busybox", "--queue", "research")
}

// TestCreateDryRunAndOutput: --dry-run=client prints and sends nothing,
// --dry-run=server validates and persists nothing, -o yaml prints the job.
func TestCreateDryRunAndOutput(t *testing.T) {
	ns := namespace(t, "job-create-dry")
	queue(t, "research", schedulingv1beta1.QueueStateOpen)
	r := mustVC(t, "job", "create", "dry", "-n", ns, "--image", "busybox", "--queue", "research", "--dry-run=client", "-o", "yaml")
	var j batchv1alpha1.Job
	if err := yaml.UnmarshalStrict([]byte(r.Stdout), &j); err != nil || j.Kind != "Job" || j.APIVersion != "batch.volcano.sh/v1alpha1" ||
		j.Name != "dry" || j.Namespace != ns || j.Spec.Tasks[0].Template.Spec.Containers[0].Image != "busybox" || j.Spec.MinAvailable != 1 {
		t.Errorf("client dry run -o yaml (%v):\n%s", err, r.Stdout)
	}
	r = mustVC(t, "job", "create", "dry", "-n", ns, "--image", "busybox", "--queue", "research", "--dry-run=client")
	if r.Stdout != "job.batch.volcano.sh/dry created (dry run)\n" {
		t.Errorf("client dry run: %q", r.Stdout)
	}
	r = mustVC(t, "job", "create", "dry", "-n", ns, "--image", "busybox", "--queue", "research", "--dry-run=server")
	if r.Stdout != "job.batch.volcano.sh/dry created (server dry run)\n" {
		t.Errorf("server dry run: %q", r.Stdout)
	}
	r = mustVC(t, "job", "create", "dry", "-n", ns, "--image", "busybox", "--queue", "research", "--dry-run=server", "-o", "yaml")
	if !strings.Contains(r.Stdout, "maxRetry: 3") || !strings.Contains(r.Stdout, "uid: ") {
		t.Errorf("server dry run -o yaml is not what the server returned (defaults, uid):\n%s", r.Stdout)
	}
	if n := jobCount(t, ns); n != 0 {
		t.Errorf("a dry run created %d jobs", n)
	}
	r = mustVC(t, "job", "create", "real", "-n", ns, "--image", "busybox", "--queue", "research", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(r.Stdout), &j); err != nil || j.Name != "real" || j.UID == "" {
		t.Errorf("-o yaml (%v):\n%s", err, r.Stdout)
	}
}

// TestCreateFromFile: -f FILE and -f - create the job the file holds.
func TestCreateFromFile(t *testing.T) {
	ns := namespace(t, "job-create-file")
	queue(t, "research", schedulingv1beta1.QueueStateOpen)
	spec := jobSpec("", "from-file", "research", map[string]int32{"ps": 1, "worker": 2})
	spec.Kind, spec.APIVersion = "Job", "batch.volcano.sh/v1alpha1"
	spec.Spec.Plugins = map[string][]string{"svc": {}}
	b, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(file, append([]byte("# a job\n---\n"), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustVC(t, "job", "create", "-f", file, "-n", ns)
	if r.Stdout != "job.batch.volcano.sh/from-file created\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	j, err := env.vc.BatchV1alpha1().Jobs(ns).Get(context.Background(), "from-file", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j.Spec.Tasks, spec.Spec.Tasks) || j.Spec.MinAvailable != 3 || j.Spec.Plugins["svc"] == nil {
		t.Errorf("created from file: %+v", j.Spec)
	}
	// Standard input, with the namespace in the file.
	spec.Name, spec.Namespace = "from-stdin", ns
	b, _ = yaml.Marshal(spec)
	cmd := command(env.admin, "job", "create", "-f", "-")
	cmd.Stdin = strings.NewReader(string(b))
	if r := run(t, cmd); r.Code != 0 || r.Stdout != "job.batch.volcano.sh/from-stdin created\n" {
		t.Errorf("-f -:\n%s", r)
	}
}

// TestCreateBadInput: one line on stderr, exit 1, no job.
func TestCreateBadInput(t *testing.T) {
	ns := namespace(t, "job-create-bad")
	queue(t, "research", schedulingv1beta1.QueueStateOpen)
	queue(t, "closed-q", schedulingv1beta1.QueueStateClosed)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: f\nspec:\n  queue: research\n  tasks:\n  - name: t\n    replicas: 1\n    template:\n      spec:\n        containers:\n        - name: c\n          image: busybox\n"
	base := []string{"job", "create", "x", "-n", ns, "--image", "busybox", "--queue", "research"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"bad --requests", `invalid --requests: cpu=lots is not a quantity`, with("--requests", "cpu=lots")},
		{"--requests without =", `invalid --requests "cpu"`, with("--requests", "cpu")},
		{"negative --limits", `invalid --limits: memory=-1Gi must not be negative`, with("--limits", "memory=-1Gi")},
		{"request above limit", `--requests cpu=2 exceeds --limits cpu=1`, with("--requests", "cpu=2", "--limits", "cpu=1")},
		{"bad name", `invalid job name "Train"`, []string{"job", "create", "Train", "-n", ns, "--image", "busybox"}},
		{"name too long", `invalid job name`, []string{"job", "create", strings.Repeat("a", 64), "-n", ns, "--image", "busybox"}},
		{"no image", "--image is required", []string{"job", "create", "x", "-n", ns}},
		{"no name", "name the job to create", []string{"job", "create", "-n", ns, "--image", "busybox"}},
		{"two names", "give one job name, got 2", []string{"job", "create", "x", "y", "-n", ns, "--image", "busybox"}},
		{"--command without a command", "--command needs the command after '--'", with("--command")},
		{"file and args", "arguments after '--' cannot be combined with -f", []string{"job", "create", "-f", write("i.yaml", good), "-n", ns, "--", "sleep", "1"}},
		{"zero replicas", "invalid --replicas 0", with("--replicas", "0")},
		{"min above replicas", "invalid --min 3: must be between 0 (all pods) and --replicas 2", with("--replicas", "2", "--min", "3")},
		{"missing queue", `queue "nope" not found`, with("--queue", "nope")},
		{"closed queue", `queue "closed-q" is Closed: a job can only be created in an Open queue`, with("--queue", "closed-q")},
		{"root queue", "a job cannot be submitted to the root queue", with("--queue", "root")},
		{"bad queue", `invalid --queue "Q"`, with("--queue", "Q")},
		{"bad dry run", `invalid --dry-run "yes"`, with("--dry-run=yes")},
		{"bad output", `unknown output format "wide"`, with("-o", "wide")},
		{"file and name", "give a job NAME or -f FILE, not both", []string{"job", "create", "x", "-f", write("a.yaml", good), "-n", ns}},
		{"file and --image", "--image cannot be combined with -f", []string{"job", "create", "-f", write("b.yaml", good), "--image", "busybox", "-n", ns}},
		{"missing file", "cannot read -f " + filepath.Join(dir, "none.yaml"), []string{"job", "create", "-f", filepath.Join(dir, "none.yaml"), "-n", ns}},
		{"unknown field", `unknown field "spec.tasks[0].replica"`, []string{"job", "create", "-f", write("c.yaml", strings.Replace(good, "replicas", "replica", 1)), "-n", ns}},
		{"not a job", `holds kind "Queue" of apiVersion "scheduling.volcano.sh/v1beta1", not a batch.volcano.sh/v1alpha1 Job`, []string{"job", "create", "-f", write("d.yaml", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: q\n"), "-n", ns}},
		{"two objects", "holds 2 objects: give one Job per file", []string{"job", "create", "-f", write("e.yaml", good+"---\n"+good), "-n", ns}},
		{"other namespace", `is in namespace "elsewhere", not "` + ns + `" (-n)`, []string{"job", "create", "-f", write("f.yaml", strings.Replace(good, "name: f\n", "name: f\n  namespace: elsewhere\n", 1)), "-n", ns}},
		{"no tasks", `job "f" has no tasks`, []string{"job", "create", "-f", write("g.yaml", good[:strings.Index(good, "  tasks:")]), "-n", ns}},
		{"task min above replicas", `task "t": minAvailable 2 must be between 0 and its replicas 1`, []string{"job", "create", "-f", write("h.yaml", strings.Replace(good, "replicas: 1\n", "replicas: 1\n    minAvailable: 2\n", 1)), "-n", ns}},
	} {
		t.Run(tc.name, func(t *testing.T) { mustFail(t, tc.want, tc.args...) })
	}
	if n := jobCount(t, ns); n != 0 {
		t.Errorf("bad input created %d jobs", n)
	}
}

// TestDelete: every job is looked up first; --wait waits until they are
// gone; a dry run deletes nothing.
func TestDelete(t *testing.T) {
	ns := namespace(t, "job-delete")
	makeJob(t, ns, "a", "research", 1, batchv1alpha1.JobRunning)
	makeJob(t, ns, "b", "research", 1, batchv1alpha1.JobAborted)
	mustFail(t, `job "nope" not found in namespace "`+ns+`"`, "job", "delete", "a", "nope", "-n", ns)
	mustFail(t, "--wait cannot be combined with --dry-run", "job", "delete", "a", "-n", ns, "--wait", "--dry-run=server")
	mustFail(t, "name the job(s) to delete", "job", "delete", "-n", ns)
	r := mustVC(t, "job", "delete", "a", "b", "-n", ns, "--dry-run=server")
	if r.Stdout != "job.batch.volcano.sh/a deleted (server dry run)\njob.batch.volcano.sh/b deleted (server dry run)\n" {
		t.Errorf("server dry run: %q", r.Stdout)
	}
	if n := jobCount(t, ns); n != 2 {
		t.Fatalf("bad input or a dry run deleted jobs: %d left", n)
	}
	r = mustVC(t, "job", "delete", "a", "b", "-n", ns, "--wait")
	if r.Stdout != "job.batch.volcano.sh/a deleted\njob.batch.volcano.sh/b deleted\n" {
		t.Errorf("delete: %q", r.Stdout)
	}
	if n := jobCount(t, ns); n != 0 {
		t.Errorf("after delete --wait %d jobs are left", n)
	}
}

// TestCompletion completes job names of the namespace of -n, for
// positional arguments and for --job.
func TestCompletion(t *testing.T) {
	ns := namespace(t, "job-complete")
	makeJob(t, ns, "train-a", "research", 1, "")
	makeJob(t, ns, "train-b", "research", 1, "")
	makeJob(t, ns, "eval", "research", 1, "")
	r := mustVC(t, "__complete", "job", "suspend", "-n", ns, "train-a", "tr")
	if !strings.HasPrefix(r.Stdout, "train-b\n:4\n") {
		t.Errorf("positional completion:\n%s", r.Stdout)
	}
	r = mustVC(t, "__complete", "job", "describe", "-n", ns, "")
	if !strings.HasPrefix(r.Stdout, "eval\ntrain-a\ntrain-b\n:4\n") {
		t.Errorf("describe completion:\n%s", r.Stdout)
	}
	r = mustVC(t, "__complete", "job", "describe", "-n", ns, "eval", "")
	if !strings.HasPrefix(r.Stdout, ":4\n") {
		t.Errorf("describe takes one name, completed a second:\n%s", r.Stdout)
	}
	r = mustVC(t, "__complete", "pod", "list", "-n", ns, "--job", "e")
	if !strings.HasPrefix(r.Stdout, "eval\n:4\n") {
		t.Errorf("--job completion:\n%s", r.Stdout)
	}
	r = mustVC(t, "__complete", "job", "list", "--phase", "Ab")
	if !strings.HasPrefix(r.Stdout, "Aborting\nAborted\n:4\n") {
		t.Errorf("--phase completion:\n%s", r.Stdout)
	}
}
