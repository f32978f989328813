package podgroup

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
)

// The controller caches only the pods of its schedulers: every pod list and
// watch it makes selects one of its --scheduler-name values, and no pod of
// another scheduler (kube-scheduler's, most pods of a real cluster) reaches
// the process, whether it existed before the start (list) or came after
// (watch). The pods of both its schedulers still get their groups.
func TestPodsOfOtherSchedulersNeverReachTheController(t *testing.T) {
	cp := ownCluster(t, controlplane.Controllers)
	ns := namespace(t)
	for i := range 3 {
		createPod(t, ns, fmt.Sprintf("other-before-%d", i), podSpec("default-scheduler", nil, nil))
	}
	rec := &podTraffic{}
	startManager(t, cp, managerConfig{wrap: rec.wrap}, "--scheduler-name=volcano", "--scheduler-name=volcano-two")
	for i := range 3 {
		createPod(t, ns, fmt.Sprintf("other-after-%d", i), podSpec("default-scheduler", nil, nil))
	}
	one := createPod(t, ns, "one", podSpec("volcano", nil, nil))
	two := createPod(t, ns, "two", podSpec("volcano-two", nil, nil))
	groupOf(t, one, groupName(one.UID))
	groupOf(t, two, groupName(two.UID))

	selectors, body := rec.seen()
	want := map[string]bool{"spec.schedulerName=volcano": true, "spec.schedulerName=volcano-two": true}
	for s := range want {
		if selectors[s] == 0 {
			t.Errorf("no pod list or watch with fieldSelector %q; seen %v", s, selectors)
		}
	}
	for s := range selectors {
		if !want[s] {
			t.Errorf("pod list or watch with fieldSelector %q: pods of other schedulers reach the cache", s)
		}
	}
	for _, s := range []string{"other-before-", "other-after-", "default-scheduler"} {
		if bytes.Contains(body, []byte(s)) {
			t.Errorf("the API server sent the controller %q: a pod of another scheduler", s)
		}
	}
	for _, p := range []string{string(one.UID), string(two.UID)} {
		if !bytes.Contains(body, []byte(p)) {
			t.Errorf("the recorded pod traffic lacks pod %s of the controller's schedulers: the checks above see nothing", p)
		}
	}
}

// podTraffic records the pod lists and watches of a manager: the field
// selector of each and every byte the API server answered.
type podTraffic struct {
	mu        sync.Mutex
	selectors map[string]int
	body      bytes.Buffer
}

func (p *podTraffic) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/pods") {
			return resp, err
		}
		p.mu.Lock()
		if p.selectors == nil {
			p.selectors = map[string]int{}
		}
		p.selectors[req.URL.Query().Get("fieldSelector")]++
		p.mu.Unlock()
		resp.Body = &recordedBody{ReadCloser: resp.Body, p: p}
		return resp, nil
	})
}

func (p *podTraffic) seen() (map[string]int, []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sel := map[string]int{}
	for k, v := range p.selectors {
		sel[k] = v
	}
	return sel, bytes.Clone(p.body.Bytes())
}

type recordedBody struct {
	io.ReadCloser
	p *podTraffic
}

func (b *recordedBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.p.mu.Lock()
	b.p.body.Write(buf[:n])
	b.p.mu.Unlock()
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
