package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// recordingProxy forwards plain HTTP to the API server with the admin's
// credentials and records every request, so that a test sees exactly
// which list requests the binary made.
type recordingProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newRecordingProxy(t *testing.T, cfg *rest.Config) *recordingProxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.reqs = append(p.reqs, r.Clone(context.Background()))
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// kubeconfig points at the proxy.
func (p *recordingProxy) kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: anyone, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, namespace: default, user: anyone}}]
current-context: proxy
`, p.srv.URL)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lists returns the query of every list (a GET of path that is not a
// watch) made since the last reset.
func (p *recordingProxy) lists(path string) []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []url.Values
	for _, r := range p.reqs {
		q := r.URL.Query()
		if r.Method == http.MethodGet && r.URL.Path == path && q.Get("watch") != "true" {
			out = append(out, q)
		}
	}
	return out
}

func (p *recordingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = nil
}

func (p *recordingProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}

// chunkFixture makes five objects of every listed kind: queues labelled
// for this test, and podgroups, jobs, pods (each in a podgroup known only
// by its annotation, so 'pod list' lists podgroups too), Commands and
// NodeSets in namespace ns. It returns the names of each kind.
func chunkFixture(t *testing.T, ns string) (queues, names []string) {
	t.Helper()
	ctx := context.Background()
	if _, err := kube(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		q, n := fmt.Sprintf("chunk-q-%d", i), fmt.Sprintf("chunk-%d", i)
		queues, names = append(queues, q), append(names, n)
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
		must(env.vc.SlinkyV1beta1().NodeSets(ns).Create(ctx, nodeSet(n), metav1.CreateOptions{}))
	}
	return queues, names
}

func nodeSet(name string) *slinkyv1beta1.NodeSet {
	return &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To[int32](1),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
		},
	}
}

// TestListChunkSize: every list command reads its list --chunk-size
// objects per request (client-go's pager), 0 in one request, 500 by
// default, and prints the whole list whatever the chunk size; a negative
// size is refused before any request.
func TestListChunkSize(t *testing.T) {
	const ns = "list-chunk"
	queues, names := chunkFixture(t, ns)
	proxy := newRecordingProxy(t, env.cp.AdminConfig())
	kc := proxy.kubeconfig(t)
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
				proxy.reset()
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
					lists := proxy.lists(path)
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
		proxy.reset()
		r := runCmd(t, command(kc, "queue", "list", "-l", "list-chunk-test=yes", "--chunk-size", "2"))
		if r.Code != 0 {
			t.Fatalf("queue list:\n%s", r)
		}
		lists := proxy.lists(vcAPI + "podgroups")
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
			proxy.reset()
			r := runCmd(t, command(kc, append(slices.Clone(c.args), "--chunk-size", "-1")...))
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if r.Code == 0 || r.Stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "--chunk-size") {
				t.Errorf("want one line on stderr about --chunk-size, nothing on stdout, non-zero exit:\n%s", r)
			}
			if n := proxy.count(); n != 0 {
				t.Errorf("%d requests made for a refused --chunk-size", n)
			}
		})
	}
}

// lineReader hands out the complete lines a running command prints.
type lineReader struct {
	lines chan string
	mu    sync.Mutex
	seen  []string
}

func readLines(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		close(lr.lines)
	}()
	return lr
}

// waitFor returns the fields of the first line whose first field is
// name, failing the test if none comes within a minute (a bound on the
// poll, not a timed assertion).
func (lr *lineReader) waitFor(t *testing.T, name string) []string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lr.lines:
			if !ok {
				t.Fatalf("output ended without a row for %s; it was:\n%s", name, strings.Join(lr.seen, "\n"))
			}
			lr.seen = append(lr.seen, l)
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return f
			}
		case <-deadline:
			t.Fatalf("no row for %s; output so far:\n%s", name, strings.Join(lr.seen, "\n"))
		}
	}
}

// startWatch starts the binary and reads its output; the process is
// killed when the test ends.
func startWatch(t *testing.T, args ...string) *lineReader {
	t.Helper()
	cmd := command(env.admin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stderr of %v:\n%s", args, stderr.String())
		}
	})
	return readLines(stdout)
}

// TestCommandListWatch: 'command list --watch' prints the Commands there
// are, then a row for a Command created after the list.
func TestCommandListWatch(t *testing.T) {
	const ns = "list-watch-commands"
	ctx := context.Background()
	if _, err := kube(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create := func(name string) {
		t.Helper()
		if _, err := env.vc.BusV1alpha1().Commands(ns).Create(ctx, &busv1alpha1.Command{
			ObjectMeta:   metav1.ObjectMeta{Name: name},
			Action:       "OpenQueue",
			TargetObject: &metav1.OwnerReference{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Queue", Name: "q-" + name, UID: "00000000-0000-0000-0000-000000000000"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	out := startWatch(t, "command", "list", "-n", ns, "--watch", "--no-headers", "--chunk-size", "1")
	if f := out.waitFor(t, "before"); len(f) < 3 || f[1] != "OpenQueue" || f[2] != "Queue/q-before" {
		t.Fatalf("listed row: %v", f)
	}
	create("after")
	if f := out.waitFor(t, "after"); len(f) < 3 || f[1] != "OpenQueue" || f[2] != "Queue/q-after" {
		t.Fatalf("watched row: %v", f)
	}
}

// TestNodeSetListWatch: 'nodeset list --watch' prints a row for a NodeSet
// created after the list, and with -o json each NodeSet as it changes.
func TestNodeSetListWatch(t *testing.T) {
	const ns = "list-watch-nodesets"
	ctx := context.Background()
	if _, err := kube(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodeSets := env.vc.SlinkyV1beta1().NodeSets(ns)
	if _, err := nodeSets.Create(ctx, nodeSet("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("table", func(t *testing.T) {
		out := startWatch(t, "nodeset", "list", "-n", ns, "-w", "--no-headers")
		if f := out.waitFor(t, "before"); len(f) < 2 || f[1] != "1" {
			t.Fatalf("listed row: %v", f)
		}
		after := nodeSet("after")
		after.Spec.Replicas = ptr.To[int32](3)
		if _, err := nodeSets.Create(ctx, after, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if f := out.waitFor(t, "after"); len(f) < 2 || f[1] != "3" {
			t.Fatalf("watched row: %v", f)
		}
	})
	t.Run("json", func(t *testing.T) {
		cmd := command(env.admin, "nodeset", "list", "before", "-n", ns, "-w", "-o", "json")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		type object struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Replicas int32 `json:"replicas"`
			} `json:"spec"`
			Items []json.RawMessage `json:"items"`
		}
		objects := make(chan object)
		go func() {
			defer close(objects)
			dec := json.NewDecoder(stdout)
			for {
				var o object
				if dec.Decode(&o) != nil {
					return
				}
				objects <- o
			}
		}()
		next := func() object {
			t.Helper()
			select {
			case o, ok := <-objects:
				if !ok {
					t.Fatal("output ended")
				}
				return o
			case <-time.After(time.Minute):
				t.Fatal("no object printed")
			}
			return object{}
		}
		if o := next(); o.Kind != "List" || len(o.Items) != 1 {
			t.Fatalf("first object: %+v", o)
		}
		// The watch starts from the list: a change to another NodeSet is
		// not printed, a change to this one is.
		if _, err := nodeSets.Patch(ctx, "after", "application/merge-patch+json", []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := nodeSets.Patch(ctx, "before", "application/merge-patch+json", []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if o := next(); o.Kind != "NodeSet" || o.Metadata.Name != "before" || o.Spec.Replicas != 2 {
			t.Fatalf("watched object: %+v", o)
		}
	})
}

// TestListFlagsComplete: the shell completes the new flags of the list
// commands, as cobra completes every flag.
func TestListFlagsComplete(t *testing.T) {
	for _, group := range []string{"command", "nodeset", "queue", "podgroup", "job", "pod"} {
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
