package bench

import (
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
)

// queueWatch follows the queues of want through an informer, so that a
// cold start's end is seen without loading the API server under
// measurement. The harness used to list every queue each 250 ms: at 10 000
// queues, over a cold start, that was more objects than the 200 000
// podgroups the controller itself lists, on the
// same two cores; and it grew with size × duration, which showed up as the
// controllers' time growing faster than their work. A watch costs one
// event per status write, which the API server sends its other watchers
// anyway.
type queueWatch struct {
	want map[string]v1beta1.QueueStatus

	mu      sync.Mutex
	right   map[string]bool // state and counts as want
	open    map[string]bool // state Open
	changed chan struct{}   // a token after each change

	stop func()
}

// watchQueues starts a queueWatch and returns once it has listed the
// queues; call it before launching the process under measurement.
func watchQueues(b *testing.B, vc versioned.Interface, want map[string]v1beta1.QueueStatus) *queueWatch {
	w := &queueWatch{want: want, right: map[string]bool{}, open: map[string]bool{}, changed: make(chan struct{}, 1)}
	inf := vcinformers.NewSharedInformerFactory(vc, 0)
	qi := inf.Scheduling().V1beta1().Queues().Informer()
	_, err := qi.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.observe,
		UpdateFunc: func(_, obj any) { w.observe(obj) },
	})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	inf.Start(stop)
	if !cache.WaitForCacheSync(stop, qi.HasSynced) {
		b.Fatal("queue watch did not sync")
	}
	w.stop = func() { close(stop); inf.Shutdown() }
	return w
}

func (w *queueWatch) observe(obj any) {
	q, ok := obj.(*v1beta1.Queue)
	if !ok {
		return
	}
	want, mine := w.want[q.Name]
	if !mine {
		return
	}
	s := q.Status
	w.mu.Lock()
	setIf(w.right, q.Name, s.State == want.State && s.Pending == want.Pending && s.Running == want.Running &&
		s.Inqueue == want.Inqueue && s.Completed == want.Completed && s.Unknown == want.Unknown)
	setIf(w.open, q.Name, s.State == v1beta1.QueueStateOpen)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func setIf(m map[string]bool, k string, v bool) {
	if v {
		m[k] = true
	} else {
		delete(m, k)
	}
}

// allRight tells whether every queue of want has want's state and counts.
func (w *queueWatch) allRight() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.right) == len(w.want)
}

// allOpen tells whether every queue of want is Open.
func (w *queueWatch) allOpen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.open) == len(w.want)
}

// wait returns after the next change, or after d.
func (w *queueWatch) wait(d time.Duration) {
	select {
	case <-w.changed:
	case <-time.After(d):
	}
}
