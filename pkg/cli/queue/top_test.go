package queue

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func topQueues() []runtime.Object {
	open := schedulingv1beta1.QueueStateOpen
	return []runtime.Object{
		withResources(treeQueue("root", "", 1, open, 0), "", "", "cpu=20,memory=48Gi"),
		// cpu 25%, memory 100%: largest share 100%.
		withResources(treeQueue("team-a", "", 1, open, 0), "cpu=16,memory=32Gi", "", "cpu=4,memory=32Gi"),
		// cpu 75%, memory 50%.
		withResources(treeQueue("team-b", "", 1, open, 0), "cpu=16,memory=32Gi", "cpu=20", "cpu=12,memory=16Gi"),
		// No deserved share: last whatever the order.
		withResources(treeQueue("team-c", "", 1, open, 0), "", "", "pods=3"),
		withResources(treeQueue("team-a-dev", "team-a", 1, open, 0), "cpu=2", "", "cpu=1"),
		withResources(treeQueue("team-a-prod", "team-a", 1, open, 0), "cpu=2", "", "cpu=2"),
	}
}

func runTop(t *testing.T, o *TopOptions, objs ...runtime.Object) (stdout, stderr string, err error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o.IOStreams = streams
	o.Factory = clitesting.Factory{Volcano: fake.NewSimpleClientset(objs...)}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		return out.String(), errOut.String(), err
	}
	err = o.Run(context.Background())
	return out.String(), errOut.String(), err
}

func firstColumn(out string) []string {
	var names []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		names = append(names, strings.Fields(strings.TrimLeft(l, "│├└─ "))[0])
	}
	return names
}

func TestTopTable(t *testing.T) {
	out, stderr, err := runTop(t, &TopOptions{}, topQueues()...)
	if err != nil || stderr != "" {
		t.Fatalf("err %v, stderr %q", err, stderr)
	}
	want := `QUEUE            CPU           MEMORY          PODS
root             20/-          48Gi/-          -
├── team-a       4/16 (25%)    32Gi/32Gi (100%)  -
│   ├── team-a-prod  2/2 (100%)    -               -
│   └── team-a-dev   1/2 (50%)     -               -
├── team-b       12/16 (75%)   16Gi/32Gi (50%)  -
└── team-c       -             -               3/-
`
	gl, wl := strings.Split(out, "\n"), strings.Split(want, "\n")
	if len(gl) != len(wl) {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	for i := range wl {
		// The tree glyphs and cells, not the padding.
		if g, w := strings.Fields(gl[i]), strings.Fields(wl[i]); strings.Join(g, " ") != strings.Join(w, " ") {
			t.Errorf("line %d = %q, want %q", i, gl[i], wl[i])
		}
	}
}

func TestTopSortBy(t *testing.T) {
	for _, c := range []struct {
		sortBy string
		want   []string
	}{
		{"", []string{"root", "team-a", "team-a-prod", "team-a-dev", "team-b", "team-c"}},
		{"cpu", []string{"root", "team-b", "team-a", "team-a-prod", "team-a-dev", "team-c"}},
		// team-a's children have no memory share: by name.
		{"memory", []string{"root", "team-a", "team-a-dev", "team-a-prod", "team-b", "team-c"}},
		{"name", []string{"root", "team-a", "team-a-dev", "team-a-prod", "team-b", "team-c"}},
		// Only team-c has pods, and no deserved share of them.
		{"pods", []string{"root", "team-a", "team-a-dev", "team-a-prod", "team-b", "team-c"}},
	} {
		out, _, err := runTop(t, &TopOptions{SortBy: c.sortBy, NoHeaders: true}, topQueues()...)
		if err != nil {
			t.Fatalf("--sort-by %q: %v", c.sortBy, err)
		}
		if got := firstColumn(out); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("--sort-by %q: %v, want %v", c.sortBy, got, c.want)
		}
	}
}

func TestTopJSON(t *testing.T) {
	out, _, err := runTop(t, &TopOptions{Output: "json", SortBy: "cpu"}, topQueues()...)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Queues []struct {
			Name      string `json:"name"`
			Parent    string `json:"parent"`
			Resources []struct {
				Name       string `json:"name"`
				Allocated  string `json:"allocated"`
				Deserved   string `json:"deserved"`
				Capability string `json:"capability"`
				Percent    *int64 `json:"percent"`
			} `json:"resources"`
		} `json:"queues"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Queues) != 6 || doc.Queues[1].Name != "team-b" || doc.Queues[1].Parent != "root" || doc.Queues[0].Parent != "" {
		t.Fatalf("rows:\n%s", out)
	}
	b := doc.Queues[1].Resources
	if len(b) != 2 || b[0].Name != "cpu" || b[0].Allocated != "12" || b[0].Deserved != "16" || b[0].Capability != "20" || b[0].Percent == nil || *b[0].Percent != 75 {
		t.Errorf("team-b cpu: %+v", b)
	}
	if b[1].Name != "memory" || b[1].Capability != "" || *b[1].Percent != 50 {
		t.Errorf("team-b memory: %+v", b[1])
	}
	c := doc.Queues[5].Resources
	if doc.Queues[5].Name != "team-c" || len(c) != 1 || c[0].Percent != nil || c[0].Deserved != "" || c[0].Allocated != "3" {
		t.Errorf("team-c: %+v", doc.Queues[5])
	}
	out, _, err = runTop(t, &TopOptions{Output: "yaml"}, topQueues()...)
	if err != nil || !strings.HasPrefix(out, "queues:\n- name: root\n") {
		t.Errorf("-o yaml: %v\n%s", err, out)
	}
}

func TestTopEmpty(t *testing.T) {
	out, stderr, err := runTop(t, &TopOptions{})
	if err != nil || out != "" || stderr != "No queues found.\n" {
		t.Errorf("err %v, stdout %q, stderr %q", err, out, stderr)
	}
	out, _, err = runTop(t, &TopOptions{Output: "json"})
	if err != nil || strings.Join(strings.Fields(out), "") != `{"queues":[]}` {
		t.Errorf("-o json: %v %q", err, out)
	}
}

// Bad input is one line and writes nothing.
func TestTopBadInput(t *testing.T) {
	for _, o := range []*TopOptions{
		{Output: "wide"},
		{Output: "name"},
		{SortBy: "CPU!"},
		{SortBy: "gpu"},
	} {
		out, stderr, err := runTop(t, o, topQueues()...)
		if err == nil || strings.Contains(err.Error(), "\n") || out != "" || stderr != "" {
			t.Errorf("%+v: err %v, stdout %q, stderr %q", o, err, out, stderr)
		}
	}
	_, _, err := runTop(t, &TopOptions{SortBy: "gpu"}, topQueues()...)
	if err == nil || !strings.Contains(err.Error(), "cpu, memory, pods") {
		t.Errorf("unknown resource: %v", err)
	}
}

// TestTopCapabilityOnly: queues that only cap resources have no share to
// show: top says so instead of printing a bare tree, and --sort-by of a
// capped resource is refused (there is no column for it).
func TestTopCapabilityOnly(t *testing.T) {
	open := schedulingv1beta1.QueueStateOpen
	queues := []runtime.Object{
		treeQueue("root", "", 1, open, 0),
		withResources(treeQueue("team-a", "", 1, open, 0), "", "cpu=8", ""),
	}
	out, stderr, err := runTop(t, &TopOptions{}, queues...)
	if err != nil || !strings.HasPrefix(out, "QUEUE\n") || !strings.Contains(stderr, "No queue deserves or has been allocated any resource yet") {
		t.Errorf("err %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	_, _, err = runTop(t, &TopOptions{SortBy: "cpu"}, queues...)
	if err == nil || !strings.Contains(err.Error(), `invalid --sort-by "cpu": no queue allocates or deserves any resource yet`) {
		t.Errorf("--sort-by cpu: %v", err)
	}
	// In the usual table, a resource only capped has no column either.
	_, _, err = runTop(t, &TopOptions{SortBy: "pods"}, append(topQueues(), withResources(treeQueue("team-d", "", 1, open, 0), "", "nvidia.com/gpu=2", ""))...)
	if err != nil {
		t.Fatalf("--sort-by pods: %v", err)
	}
	_, _, err = runTop(t, &TopOptions{SortBy: "nvidia.com/gpu"}, append(topQueues(), withResources(treeQueue("team-d", "", 1, open, 0), "", "nvidia.com/gpu=2", ""))...)
	if err == nil || !strings.Contains(err.Error(), "no queue allocates or deserves it, so there is no column for it") {
		t.Errorf("--sort-by nvidia.com/gpu: %v", err)
	}
}
