package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// ensureTopRoot creates root and default unless another test has, as
// Volcano's controller would.
func ensureTopRoot(t *testing.T) {
	t.Helper()
	for _, name := range []string{"root", "default"} {
		if _, err := env.vc.SchedulingV1beta1().Queues().Create(context.Background(),
			&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

func resources(s string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		l[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return l
}

// makeTopQueues creates e2e-top-a (deserved cpu=16, memory=32Gi,
// capability cpu=20) with children e2e-top-a-x and e2e-top-a-y (deserved
// cpu=8 each), and e2e-top-b (deserved cpu=16, memory=32Gi), and plays the
// scheduler writing their allocations:
//
//	e2e-top-a    cpu 12/16 (75%)  memory 8Gi/32Gi (25%)
//	e2e-top-a-x  cpu 2/8 (25%)
//	e2e-top-a-y  cpu 10/8 (125%)
//	e2e-top-b    cpu 4/16 (25%)   memory 30Gi/32Gi (93%, 93.75 rounded down)
//
// Each test makes its own (fresh deletes them when it ends), so that the
// tests run alone, in any order and more than once in a process.
func makeTopQueues(t *testing.T) {
	t.Helper()
	ensureTopRoot(t)
	mustVC(t, "queue", "create", "e2e-top-a", "--deserved", "cpu=16,memory=32Gi", "--capability", "cpu=20")
	mustVC(t, "queue", "create", "e2e-top-a-x", "--parent", "e2e-top-a", "--deserved", "cpu=8")
	mustVC(t, "queue", "create", "e2e-top-a-y", "--parent", "e2e-top-a", "--deserved", "cpu=8")
	mustVC(t, "queue", "create", "e2e-top-b", "--deserved", "cpu=16,memory=32Gi")
	setAllocated(t, "e2e-top-a", resources("cpu=12,memory=8Gi"))
	setAllocated(t, "e2e-top-a-x", resources("cpu=2"))
	setAllocated(t, "e2e-top-a-y", resources("cpu=10"))
	setAllocated(t, "e2e-top-b", resources("cpu=4,memory=30Gi"))
}

// topRows maps each of this test's queues to its table line, and lists
// them in the order printed.
func topRows(t *testing.T, out string) (map[string]string, []string) {
	t.Helper()
	rows := map[string]string{}
	var order []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(strings.TrimLeft(l, "│├└─ "))
		if len(f) > 0 && strings.HasPrefix(f[0], "e2e-top-") && !strings.HasPrefix(f[0], "e2e-top-w") {
			rows[f[0]] = l
			order = append(order, f[0])
		}
	}
	return rows, order
}

func TestQueueTop(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	r := mustVC(t, "queue", "top")
	lines := strings.Split(r.Stdout, "\n")
	header := strings.Fields(lines[0])
	if len(header) < 3 || header[0] != "QUEUE" || !slices.Contains(header, "CPU") || !slices.Contains(header, "MEMORY") {
		t.Fatalf("header %v:\n%s", header, r.Stdout)
	}
	rows, order := topRows(t, r.Stdout)
	// By largest share: b (93% memory) before a (75% cpu); a's children
	// right below it, y (125%) before x (25%), drawn as a's subtree.
	if want := []string{"e2e-top-b", "e2e-top-a", "e2e-top-a-y", "e2e-top-a-x"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v:\n%s", order, want, r.Stdout)
	}
	for name, cells := range map[string][]string{
		"e2e-top-a":   {"12/16 (75%)", "8Gi/32Gi (25%)"},
		"e2e-top-a-x": {"2/8 (25%)"},
		"e2e-top-a-y": {"10/8 (125%)"},
		"e2e-top-b":   {"4/16 (25%)", "30Gi/32Gi (93%)"},
	} {
		for _, c := range cells {
			if !strings.Contains(rows[name], c) {
				t.Errorf("%s: no %q in %q", name, c, rows[name])
			}
		}
	}
	if !strings.Contains(rows["e2e-top-a-y"], "├── e2e-top-a-y") || !strings.Contains(rows["e2e-top-a-x"], "└── e2e-top-a-x") ||
		strings.Index(rows["e2e-top-a-y"], "├") <= strings.Index(rows["e2e-top-a"], "─") {
		t.Errorf("children not drawn under e2e-top-a:\n%s", r.Stdout)
	}

	for _, c := range []struct {
		sortBy string
		want   []string
	}{
		{"cpu", []string{"e2e-top-a", "e2e-top-a-y", "e2e-top-a-x", "e2e-top-b"}},
		{"memory", []string{"e2e-top-b", "e2e-top-a", "e2e-top-a-x", "e2e-top-a-y"}},
		{"name", []string{"e2e-top-a", "e2e-top-a-x", "e2e-top-a-y", "e2e-top-b"}},
	} {
		r := mustVC(t, "queue", "top", "--sort-by", c.sortBy, "--no-headers")
		if strings.HasPrefix(r.Stdout, "QUEUE") {
			t.Errorf("--no-headers printed the header:\n%s", r.Stdout)
		}
		if _, order := topRows(t, r.Stdout); !slices.Equal(order, c.want) {
			t.Errorf("--sort-by %s: %v, want %v:\n%s", c.sortBy, order, c.want, r.Stdout)
		}
	}
}

func TestQueueTopJSON(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	type res struct {
		Name       string `json:"name"`
		Allocated  string `json:"allocated"`
		Deserved   string `json:"deserved"`
		Capability string `json:"capability"`
		Percent    *int64 `json:"percent"`
	}
	var doc struct {
		Queues []struct {
			Name      string `json:"name"`
			Parent    string `json:"parent"`
			Resources []res  `json:"resources"`
		} `json:"queues"`
	}
	r := mustVC(t, "queue", "top", "-o", "json", "--sort-by", "cpu")
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	var order []string
	byName := map[string][]res{}
	parents := map[string]string{}
	for _, q := range doc.Queues {
		if strings.HasPrefix(q.Name, "e2e-top-") && !strings.HasPrefix(q.Name, "e2e-top-w") {
			order = append(order, q.Name)
			byName[q.Name], parents[q.Name] = q.Resources, q.Parent
		}
	}
	if want := []string{"e2e-top-a", "e2e-top-a-y", "e2e-top-a-x", "e2e-top-b"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if parents["e2e-top-a"] != "root" || parents["e2e-top-a-x"] != "e2e-top-a" {
		t.Errorf("parents %v", parents)
	}
	a := byName["e2e-top-a"]
	if len(a) != 2 || a[0].Name != "cpu" || a[0].Allocated != "12" || a[0].Deserved != "16" || a[0].Capability != "20" || a[0].Percent == nil || *a[0].Percent != 75 {
		t.Errorf("e2e-top-a cpu: %+v", a)
	}
	b := byName["e2e-top-b"]
	if len(b) != 2 || b[1].Name != "memory" || b[1].Allocated != "30Gi" || b[1].Capability != "" || b[1].Percent == nil || *b[1].Percent != 93 {
		t.Errorf("e2e-top-b memory: %+v", b)
	}
	r = mustVC(t, "queue", "top", "-o", "yaml")
	if err := yaml.UnmarshalStrict([]byte(r.Stdout), &doc); err != nil || len(doc.Queues) == 0 {
		t.Errorf("-o yaml: %v\n%s", err, r.Stdout)
	}
}

// Bad input: one line on stderr, a non-zero exit, nothing on stdout.
func TestQueueTopBadInput(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	for _, args := range [][]string{
		{"queue", "top", "-o", "wide"},
		{"queue", "top", "--sort-by", "nvidia.com/gpu"},
		{"queue", "top", "--sort-by", "CPU!"},
		{"queue", "top", "e2e-top-a"},
		{"queue", "tree", "-o", "name"},
	} {
		r := runVC(t, args...)
		if r.Code == 0 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "error: ") {
			t.Errorf("%v:\n%s", args, r)
		}
	}
	r := runVC(t, "queue", "top", "--sort-by", "nvidia.com/gpu")
	if !strings.Contains(r.Stderr, "use name or one of cpu, memory") {
		t.Errorf("unknown resource does not say what is known:\n%s", r)
	}
}

func TestQueueTreeOutputs(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	r := mustVC(t, "queue", "tree", "-o", "wide")
	header := strings.Fields(strings.SplitN(r.Stdout, "\n", 2)[0])
	if want := []string{"DESERVED", "CAPABILITY", "ALLOCATED"}; len(header) != 11 || !slices.Equal(header[8:], want) {
		t.Errorf("wide header %v:\n%s", header, r.Stdout)
	}
	rows, _ := topRows(t, r.Stdout)
	if f := strings.Fields(rows["e2e-top-a"]); len(f) < 3 || !slices.Equal(f[len(f)-3:], []string{"cpu=16,memory=32Gi", "cpu=20", "cpu=12,memory=8Gi"}) {
		t.Errorf("wide row of e2e-top-a: %q", rows["e2e-top-a"])
	}
	if f := strings.Fields(rows["e2e-top-a-x"]); len(f) < 3 || !slices.Equal(f[len(f)-3:], []string{"cpu=8", "<none>", "cpu=2"}) {
		t.Errorf("wide row of e2e-top-a-x: %q", rows["e2e-top-a-x"])
	}

	type node struct {
		Name       string              `json:"name"`
		Parent     string              `json:"parent"`
		Problem    string              `json:"problem"`
		State      string              `json:"state"`
		Weight     int32               `json:"weight"`
		PodGroups  map[string]int32    `json:"podGroups"`
		Deserved   corev1.ResourceList `json:"deserved"`
		Capability corev1.ResourceList `json:"capability"`
		Allocated  corev1.ResourceList `json:"allocated"`
		Children   []*node             `json:"children"`
	}
	find := func(nodes []*node, name string) *node {
		for _, n := range nodes {
			if n.Name == name {
				return n
			}
		}
		return nil
	}
	for _, output := range []string{"json", "yaml"} {
		r := mustVC(t, "queue", "tree", "-o", output)
		var doc struct {
			Queues []*node `json:"queues"`
		}
		var err error
		if output == "json" {
			err = json.Unmarshal([]byte(r.Stdout), &doc)
		} else {
			err = yaml.UnmarshalStrict([]byte(r.Stdout), &doc)
		}
		if err != nil {
			t.Fatalf("-o %s: %v\n%s", output, err, r.Stdout)
		}
		root := find(doc.Queues, "root")
		if root == nil || doc.Queues[0] != root || root.Parent != "" {
			t.Fatalf("-o %s: root is not the first top-level queue:\n%s", output, r.Stdout)
		}
		a := find(root.Children, "e2e-top-a")
		if a == nil || a.Parent != "root" || a.State != "Open" || a.Weight != 1 || len(a.Children) != 2 ||
			a.Children[0].Name != "e2e-top-a-x" || a.Children[1].Name != "e2e-top-a-y" || a.Children[0].Parent != "e2e-top-a" {
			t.Fatalf("-o %s: e2e-top-a and its children not nested under root:\n%s", output, r.Stdout)
		}
		if cpu := a.Allocated[corev1.ResourceCPU]; cpu.String() != "12" {
			t.Errorf("-o %s: allocated cpu of e2e-top-a = %s", output, cpu.String())
		}
		if cpu := a.Capability[corev1.ResourceCPU]; cpu.String() != "20" {
			t.Errorf("-o %s: capability cpu of e2e-top-a = %s", output, cpu.String())
		}
		if _, ok := a.PodGroups["running"]; !ok || a.Children[0].Children == nil {
			t.Errorf("-o %s: podGroups or children missing from the shape:\n%s", output, r.Stdout)
		}
	}
}

// waitFor polls the output until cond holds; the deadline only bounds the
// poll.
func waitFor(t *testing.T, what string, out *binary.SyncBuffer, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the output:\n%s", what, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestQueueTreeWatch(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	var stdout, stderr binary.SyncBuffer
	cmd := vcCommand(env.admin, "queue", "tree", "--watch")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitFor(t, "first tree", &stdout, func(s string) bool { return strings.Contains(s, "e2e-top-b") })
	if strings.Contains(stdout.String(), "e2e-top-watch") {
		t.Fatalf("queue shown before it was created:\n%s", stdout.String())
	}
	mustVC(t, "queue", "create", "e2e-top-watch", "--parent", "e2e-top-b")
	// The whole tree is printed again, the new queue under its parent.
	waitFor(t, "reprinted tree with e2e-top-watch under e2e-top-b", &stdout, func(s string) bool {
		trees := strings.Split(s, "\n\n")
		last := trees[len(trees)-1]
		b, w := strings.Index(last, "── e2e-top-b "), strings.Index(last, "└── e2e-top-watch ")
		return len(trees) > 1 && strings.HasPrefix(last, "QUEUE") && b > 0 && b < w
	})
	if stderr.String() != "" {
		t.Errorf("stderr: %s", stderr.String())
	}
	if cmd.ProcessState != nil {
		t.Errorf("watch ended: %v", cmd.ProcessState)
	}
}

// TestQueueTopDocs records the output docs/queue.md shows for 'queue top'
// and 'queue tree -o ...'. It runs only when KUBECTL_VC_DOCS_OUT names a
// directory, alone so that no other test's queues show:
//
//	KUBECTL_VC_DOCS_OUT=/tmp/docs go test ./test/queue -run TestQueueTopDocs
func TestQueueTopDocs(t *testing.T) {
	fresh(t)
	out := os.Getenv("KUBECTL_VC_DOCS_OUT")
	if out == "" {
		t.Skip("set KUBECTL_VC_DOCS_OUT to capture documentation output")
	}
	var b strings.Builder
	show := func(args ...string) {
		r := runVC(t, args...)
		fmt.Fprintf(&b, "$ kubectl vc %s\n%s%s", strings.Join(args, " "), r.Stdout, r.Stderr)
		if r.Code != 0 {
			fmt.Fprintf(&b, "(exit %d)\n", r.Code)
		}
		b.WriteString("\n")
	}
	ensureTopRoot(t)
	mustVC(t, "queue", "create", "team-a", "--deserved", "cpu=16,memory=64Gi", "--capability", "cpu=24,memory=96Gi")
	mustVC(t, "queue", "create", "team-a-batch", "--parent", "team-a", "--deserved", "cpu=12,memory=48Gi")
	mustVC(t, "queue", "create", "team-a-dev", "--parent", "team-a", "--deserved", "cpu=4,memory=16Gi")
	mustVC(t, "queue", "create", "team-b", "--deserved", "cpu=8,memory=32Gi,nvidia.com/gpu=4")
	for _, name := range []string{"root", "default", "team-a", "team-a-batch", "team-a-dev", "team-b"} {
		setStatus(t, name, schedulingv1beta1.QueueStateOpen, 0)
	}
	setAllocated(t, "root", resources("cpu=24,memory=84Gi,nvidia.com/gpu=3,pods=11"))
	setAllocated(t, "team-a", resources("cpu=18,memory=60Gi,pods=9"))
	setAllocated(t, "team-a-batch", resources("cpu=15,memory=50Gi,pods=6"))
	setAllocated(t, "team-a-dev", resources("cpu=3,memory=10Gi,pods=3"))
	setAllocated(t, "team-b", resources("cpu=6,memory=24Gi,nvidia.com/gpu=3,pods=2"))
	show("queue", "top")
	show("queue", "top", "--sort-by", "nvidia.com/gpu")
	show("queue", "top", "--sort-by", "name", "--no-headers")
	show("queue", "top", "-o", "yaml")
	show("queue", "top", "--sort-by", "gpu")
	show("queue", "tree", "-o", "wide")
	show("queue", "tree", "-o", "json")
	show("queue", "tree", "-o", "yaml")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "queue-top.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// --sort-by completes with name and the resources the queues use; -o with
// the formats top and tree know.
func TestQueueTopCompletion(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	r := mustVC(t, "__complete", "queue", "top", "--sort-by", "")
	got := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	for _, want := range []string{"name", "cpu", "memory"} {
		if !slices.Contains(got, want) {
			t.Errorf("--sort-by completions %q lack %s", got, want)
		}
	}
	r = mustVC(t, "__complete", "queue", "top", "--sort-by", "me")
	if got := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(got) < 2 || got[0] != "memory" || !strings.HasPrefix(got[1], ":") {
		t.Errorf("--sort-by me: %q", got)
	}
	r = mustVC(t, "__complete", "queue", "tree", "-o", "")
	if got := strings.Split(strings.TrimSpace(r.Stdout), "\n"); !slices.Equal(got[:len(got)-1], []string{"wide", "json", "yaml"}) {
		t.Errorf("tree -o completions %q", got)
	}
}

// top and tree read queues in pages of --chunk-size (kubectl's default
// 500), in one request with 0.
func TestQueueTopTreeChunkSize(t *testing.T) {
	fresh(t)
	makeTopQueues(t)
	proxy := binary.NewRecordingProxy(t, cp.AdminConfig())
	kc := proxy.Kubeconfig(t)
	const path = "/apis/scheduling.volcano.sh/v1beta1/queues"
	for _, verb := range []string{"top", "tree"} {
		for _, c := range []struct {
			flag  []string
			limit string
			many  bool
		}{
			{[]string{"--chunk-size", "2"}, "2", true},
			{[]string{"--chunk-size=0"}, "", false},
			{nil, "500", false},
		} {
			proxy.Reset()
			args := append([]string{"queue", verb, "-o", "json"}, c.flag...)
			r := runCmd(t, vcCommand(kc, args...))
			if r.Code != 0 || !strings.Contains(r.Stdout, `"e2e-top-a-y"`) || !strings.Contains(r.Stdout, `"e2e-top-b"`) {
				t.Fatalf("%v:\n%s", args, r)
			}
			lists := proxy.Lists(path)
			if len(lists) == 0 || (c.many && len(lists) < 3) || (!c.many && len(lists) != 1) {
				t.Errorf("%v: %d list requests", args, len(lists))
			}
			for _, q := range lists {
				if q.Get("limit") != c.limit {
					t.Errorf("%v: limit %q, want %q", args, q.Get("limit"), c.limit)
				}
			}
		}
	}
	r := runVC(t, "queue", "top", "--chunk-size", "-1")
	if r.Code == 0 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("negative --chunk-size:\n%s", r)
	}
}
