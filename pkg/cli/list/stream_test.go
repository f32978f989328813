package list

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// syncBuffer is stdout, read by the stub server while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pagedPodGroups serves podgroups pg-0 … pg-(n-1) in pages of the
// request's limit (all at once for 0), with continue tokens, as the API
// server does. With wait, before answering a page after the first, it
// waits until out (stdout) shows the last row of the page before (a bound
// of a few seconds, after which it answers anyway), and records whether
// it did: that row reached stdout before the next page was answered.
// failAt, when set, fails the request for the page starting there.
type pagedPodGroups struct {
	n      int
	wait   bool
	out    *syncBuffer
	failAt int

	mu          sync.Mutex
	requests    int
	printedLate []string // the rows not on stdout when the next page was asked for
}

func (p *pagedPodGroups) List(_ context.Context, opts metav1.ListOptions) (*schedulingv1beta1.PodGroupList, error) {
	p.mu.Lock()
	p.requests++
	p.mu.Unlock()
	start := 0
	if opts.Continue != "" {
		start, _ = strconv.Atoi(opts.Continue)
		if p.wait && !p.waitFor(fmt.Sprintf("pg-%d\n", start-1)) {
			p.mu.Lock()
			p.printedLate = append(p.printedLate, fmt.Sprintf("pg-%d", start-1))
			p.mu.Unlock()
		}
	}
	if p.failAt > 0 && start == p.failAt {
		return nil, errors.New("page failed")
	}
	end := p.n
	if opts.Limit > 0 && start+int(opts.Limit) < p.n {
		end = start + int(opts.Limit)
	}
	l := &schedulingv1beta1.PodGroupList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	for i := start; i < end; i++ {
		l.Items = append(l.Items, schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg-%d", i), Namespace: "ns"}})
	}
	if end < p.n {
		l.Continue = strconv.Itoa(end)
	}
	return l, nil
}

// Get, Watch, Create and Delete make pagedPodGroups a typed client; a
// streamed list calls none of them.
func (p *pagedPodGroups) Get(context.Context, string, metav1.GetOptions) (*schedulingv1beta1.PodGroup, error) {
	return nil, errors.New("not served")
}

func (p *pagedPodGroups) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("not served")
}

func (p *pagedPodGroups) Create(context.Context, *schedulingv1beta1.PodGroup, metav1.CreateOptions) (*schedulingv1beta1.PodGroup, error) {
	return nil, errors.New("not served")
}

func (p *pagedPodGroups) Delete(context.Context, string, metav1.DeleteOptions) error {
	return errors.New("not served")
}

func (p *pagedPodGroups) waitFor(row string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(p.out.String(), row) {
			return true
		}
	}
	return false
}

// runStreamed lists p's podgroups with -o format and --chunk-size size
// through Run, as a streamed kind, keeping those keep accepts (nil: all).
func runStreamed(t *testing.T, p *pagedPodGroups, format string, size int64, keep func(*schedulingv1beta1.PodGroup) bool) (out, errOut string, err error) {
	t.Helper()
	stdout, stderr := &syncBuffer{}, &bytes.Buffer{}
	p.out = stdout
	o := NewOptions(clitesting.Factory{}, genericiooptions.IOStreams{Out: stdout, ErrOut: stderr})
	o.PrintFlags.OutputFormat = &format
	o.Namespace, o.ChunkSize = "ns", size
	if o.Printer, err = o.PrintFlags.ToPrinter(); err != nil {
		t.Fatal(err)
	}
	k := &kind.Kind[schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroupList]{
		Name: "podgroup",
		Client: func(versioned.Interface, string) kind.Client[*schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroupList] {
			return p
		},
	}
	err = Run(context.Background(), &o, k, Rows[schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroup]{
		Keep: keep, Stream: true,
		Table: func(items []schedulingv1beta1.PodGroup) runtime.Object {
			rows := make([][]any, 0, len(items))
			for _, pg := range items {
				rows = append(rows, []any{pg.Name})
			}
			return vcprinters.Table([]vcprinters.Column{{Name: "NAME"}}, rows)
		},
	})
	return stdout.String(), stderr.String(), err
}

// TestStreamedTablePrintsEachPageAsItArrives: a streamed kind's table
// prints each page's rows before the next page is answered, with one
// header, every row once, in order.
func TestStreamedTablePrintsEachPageAsItArrives(t *testing.T) {
	p := &pagedPodGroups{n: 5, wait: true}
	out, errOut, err := runStreamed(t, p, "", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "NAME\npg-0\npg-1\npg-2\npg-3\npg-4\n"; out != want || errOut != "" {
		t.Errorf("stdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", out, errOut, want)
	}
	if p.requests != 3 || len(p.printedLate) > 0 {
		t.Errorf("%d requests (want 3 pages); rows not yet printed when the next page was asked for: %v", p.requests, p.printedLate)
	}
}

// TestStreamedKeepAcrossPages: filters apply page by page; a page with
// nothing kept prints nothing, and "No … found" is said only when no page
// kept anything.
func TestStreamedKeepAcrossPages(t *testing.T) {
	onlyLast := func(pg *schedulingv1beta1.PodGroup) bool { return pg.Name == "pg-4" }
	out, errOut, err := runStreamed(t, &pagedPodGroups{n: 5}, "", 2, onlyLast)
	if err != nil || out != "NAME\npg-4\n" || errOut != "" {
		t.Errorf("keeping pg-4 of the last page: err %v, stdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	none := func(*schedulingv1beta1.PodGroup) bool { return false }
	out, errOut, err = runStreamed(t, &pagedPodGroups{n: 5}, "", 2, none)
	if want := "No podgroups found in ns namespace.\n"; err != nil || out != "" || errOut != want {
		t.Errorf("keeping none: err %v, stdout:\n%s\nstderr:\n%s\nwant stderr %q", err, out, errOut, want)
	}
}

// TestStreamedOneRequest: --chunk-size=0 reads everything in one request,
// printed as one page.
func TestStreamedOneRequest(t *testing.T) {
	p := &pagedPodGroups{n: 3}
	out, _, err := runStreamed(t, p, "", 0, nil)
	if err != nil || out != "NAME\npg-0\npg-1\npg-2\n" || p.requests != 1 {
		t.Errorf("err %v, %d requests, stdout:\n%s", err, p.requests, out)
	}
}

// TestStreamedPageFails: when a later page fails, the rows printed stay
// printed and the page's error is the command's.
func TestStreamedPageFails(t *testing.T) {
	out, _, err := runStreamed(t, &pagedPodGroups{n: 5, failAt: 4}, "", 2, nil)
	if err == nil || err.Error() != "page failed" {
		t.Errorf("err %v, want the page's error", err)
	}
	if out != "NAME\npg-0\npg-1\npg-2\npg-3\n" {
		t.Errorf("stdout:\n%s\nwant the rows of the pages read", out)
	}
}

// TestJSONIsOneList: -o json needs every item, in one List, whatever the
// chunk size (and so is not streamed).
func TestJSONIsOneList(t *testing.T) {
	out, _, err := runStreamed(t, &pagedPodGroups{n: 5}, "json", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Kind     string
		Metadata struct{ ResourceVersion string }
		Items    []struct{ Metadata struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if l.Kind != "List" || len(l.Items) != 5 || l.Items[4].Metadata.Name != "pg-4" || l.Metadata.ResourceVersion != "42" {
		t.Errorf("want one List of 5 podgroups at resourceVersion 42:\n%s", out)
	}
}
