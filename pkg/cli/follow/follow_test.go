package follow

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watches is a WatchFunc that hands out the given fake watches in turn
// and records the options of each call.
type watches struct {
	mu    sync.Mutex
	fakes []*watch.FakeWatcher
	opts  []metav1.ListOptions
}

func (w *watches) watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opts = append(w.opts, opts)
	if len(w.fakes) == 0 {
		// No more watches to give: one that never sends, as a quiet server.
		return watch.NewFake(), nil
	}
	f := w.fakes[0]
	w.fakes = w.fakes[1:]
	return f, nil
}

func (w *watches) calls() []metav1.ListOptions {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]metav1.ListOptions(nil), w.opts...)
}

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}}
}

// A watch the server closes (as it does after its request timeout) is
// started again from the last resourceVersion delivered, with the
// command's selectors, and every change reaches each once, in order.
func TestEachResumesAClosedWatch(t *testing.T) {
	first, second := watch.NewFakeWithChanSize(3, false), watch.NewFakeWithChanSize(2, false)
	first.Add(pod("a", "11"))
	first.Modify(pod("a", "12"))
	first.Stop() // the server ends the watch
	second.Delete(pod("a", "13"))
	w := &watches{fakes: []*watch.FakeWatcher{first, second}}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	done := make(chan error, 1)
	go func() {
		done <- Each(ctx, "10", metav1.ListOptions{LabelSelector: "app=x"}, w.watch, func(t watch.EventType, p *corev1.Pod) error {
			got = append(got, string(t)+" "+p.Name+"@"+p.ResourceVersion)
			if len(got) == 3 {
				cancel()
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Each = %v after an interrupt, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Each did not deliver three changes")
	}
	if want := "ADDED a@11,MODIFIED a@12,DELETED a@13"; strings.Join(got, ",") != want {
		t.Errorf("changes %v, want %s", got, want)
	}
	calls := w.calls()
	if len(calls) < 2 {
		t.Fatalf("%d watch calls, want the first and a resumed one", len(calls))
	}
	if calls[0].ResourceVersion != "10" || calls[1].ResourceVersion != "12" {
		t.Errorf("watched from %q then %q, want 10 (the list) then 12 (the last change)", calls[0].ResourceVersion, calls[1].ResourceVersion)
	}
	for _, c := range calls {
		if c.LabelSelector != "app=x" {
			t.Errorf("watch without the selector: %+v", c)
		}
	}
}

// A watch the server cannot resume (expired resourceVersion) ends Each
// with one line naming the reason; an error from each ends it too.
func TestEachEnds(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		f := watch.NewFakeWithChanSize(1, false)
		f.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (2)"})
		w := &watches{fakes: []*watch.FakeWatcher{f}}
		err := Each(context.Background(), "1", metav1.ListOptions{}, w.watch, func(watch.EventType, *corev1.Pod) error { return nil })
		if err == nil || err.Error() != "watch ended: too old resource version: 1 (2)" {
			t.Errorf("Each = %v", err)
		}
	})
	t.Run("each fails", func(t *testing.T) {
		f := watch.NewFakeWithChanSize(1, false)
		f.Add(pod("a", "2"))
		w := &watches{fakes: []*watch.FakeWatcher{f}}
		err := Each(context.Background(), "1", metav1.ListOptions{}, w.watch, func(watch.EventType, *corev1.Pod) error { return context.Canceled })
		if err != context.Canceled {
			t.Errorf("Each = %v, want each's error", err)
		}
	})
	t.Run("no resourceVersion", func(t *testing.T) {
		w := &watches{}
		err := Each(context.Background(), "", metav1.ListOptions{}, w.watch, func(watch.EventType, *corev1.Pod) error { return nil })
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Each = %v, want one line", err)
		}
		if n := len(w.calls()); n != 0 {
			t.Errorf("%d watch calls", n)
		}
	})
}

func TestOnly(t *testing.T) {
	all := Only(nil)
	if !all("x") || !all("") {
		t.Error("Only(nil) should keep everything")
	}
	ab := Only([]string{"a", "b"})
	if !ab("a") || !ab("b") || ab("c") || ab("") {
		t.Error("Only(a, b) should keep a and b only")
	}
}
