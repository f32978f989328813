package podgroup

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// With the queue controller beside it, as serve runs by default, the
// podgroup controller reads no podgroup whole from a list or a watch: both
// controllers share one reading of Table rows (issue 46: the read of every
// podgroup as an object was half of serve's cold start). What the podgroup
// controller must know, whether a pod's group exists, still holds: a pod
// whose group was made before the manager started (a crash between the
// create and the pod's annotation) is annotated without a second create,
// and the queue controller counts the groups.
func TestPodGroupsReadOnceAsRows(t *testing.T) {
	cp := ownCluster(t, controlplane.Controllers)
	ns := namespace(t)
	early := createPod(t, ns, "early", podSpec("volcano", nil, nil))
	pg := &v1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: groupName(early.UID)},
		Spec: v1beta1.PodGroupSpec{MinMember: 1, Queue: keys.DefaultQueue},
		// A phase, as a scheduler writes it, for the queue controller to
		// count (a group without one is not counted).
		Status: v1beta1.PodGroupStatus{Phase: v1beta1.PodGroupInqueue}}
	if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	rec := &podGroupTraffic{}
	startManager(t, cp, managerConfig{queue: true, wrap: rec.wrap}, "--scheduler-name=volcano")
	late := createPod(t, ns, "late", podSpec("volcano", nil, nil))
	groupOf(t, early, groupName(early.UID))
	groupOf(t, late, groupName(late.UID))
	eventually(t, "the default queue counting the Inqueue group", func(ctx context.Context) (bool, error) {
		q, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, keys.DefaultQueue, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return q.Status.Inqueue == 1, nil
	})

	reads, created := rec.seen()
	if len(reads) == 0 {
		t.Fatal("no list or watch of podgroups recorded: the checks below see nothing")
	}
	watches := 0
	for _, r := range reads {
		if !strings.Contains(r.accept, "as=Table") {
			t.Errorf("a %s of podgroups asked for %q, not a Table: a podgroup was read whole", r.kind, r.accept)
		}
		if r.kind == "watch" {
			watches++
		}
	}
	if watches != 1 {
		t.Errorf("%d watches of podgroups, want 1 shared by both controllers: %+v", watches, reads)
	}
	// The early pod's group existed: it is never asked for. (The late
	// pod's may be asked for twice: a second sync of the pod, brought by
	// a queue's update before the group's row arrives, is answered
	// AlreadyExists, which the controller takes as done.)
	if n := created[groupName(early.UID)]; n != 0 {
		t.Errorf("pod %s's group, which existed, created %d more time(s); creates: %v", early.Name, n, created)
	}
	if created[groupName(late.UID)] == 0 {
		t.Errorf("pod %s's group was never created through the recorded client: %v", late.Name, created)
	}
}

// podGroupTraffic records a manager's lists and watches of podgroups (the
// Accept header of each) and how many times it asks to create each
// podgroup, by name.
type podGroupTraffic struct {
	mu      sync.Mutex
	reads   []podGroupRead
	creates map[string]int
}

type podGroupRead struct{ kind, accept string }

func (p *podGroupTraffic) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// A collection's path ends in /podgroups; a single object's path
		// goes on with its name.
		if strings.HasSuffix(req.URL.Path, "/podgroups") {
			p.mu.Lock()
			switch {
			case req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true":
				p.reads = append(p.reads, podGroupRead{"watch", req.Header.Get("Accept")})
			case req.Method == http.MethodGet:
				p.reads = append(p.reads, podGroupRead{"list", req.Header.Get("Accept")})
			case req.Method == http.MethodPost:
				if p.creates == nil {
					p.creates = map[string]int{}
				}
				p.creates[createdName(req)]++
			}
			p.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (p *podGroupTraffic) seen() ([]podGroupRead, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]podGroupRead(nil), p.reads...), maps.Clone(p.creates)
}

// createdName is the name of the object a create request carries (JSON,
// as client-go sends custom resources); "?" when it cannot be read. The
// body is read from a copy (GetBody), the request left as it was.
func createdName(req *http.Request) string {
	if req.GetBody == nil {
		return "?"
	}
	body, err := req.GetBody()
	if err != nil {
		return "?"
	}
	defer body.Close()
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(body).Decode(&obj); err != nil || obj.Metadata.Name == "" {
		return "?"
	}
	return obj.Metadata.Name
}
