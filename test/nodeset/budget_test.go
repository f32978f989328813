package nodeset

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// nodesStandIn stands where a tenant's Service points: a slurmrestd that
// answers its node list with nodes made-up nodes (real Slurm will not list
// a thousand nodes it does not have), and no jobs.
func nodesStandIn(t *testing.T, nodes int) (addr string, lists *atomic.Int64) {
	t.Helper()
	var answer strings.Builder
	answer.WriteString(`{"nodes":[`)
	for i := range nodes {
		if i > 0 {
			answer.WriteByte(',')
		}
		fmt.Fprintf(&answer, `{"name":"made-up-%d","state":["IDLE"]}`, i)
	}
	answer.WriteString(`]}`)
	lists = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/ping/"):
			_, _ = w.Write([]byte(`{"pings":[{"hostname":"slurmctld","pinged":"UP"}]}`))
		case strings.HasSuffix(p, "/nodes/"):
			lists.Add(1)
			_, _ = w.Write([]byte(answer.String()))
		case strings.HasSuffix(p, "/jobs/"):
			_, _ = w.Write([]byte(`{"jobs":[]}`))
		default:
			_, _ = w.Write([]byte(`{"nodes":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), lists
}

// TestNodeBudgetAcrossSlurms (issue 42): serve keeps one client per
// slurmrestd a namespace's Slinky objects name, and each may keep the most
// nodes an answer may list. A tenant who names many slurmrestd servers,
// each answering with many nodes, found serve's memory growing by a cache
// per server. Now every client charges its nodes to one budget
// (--slurm-node-budget): the third server's answer does not fit and its
// NodeSet says NodeBudgetSpent, naming the largest holders; a small Slurm
// beside them keeps refreshing; and when the tenant's NodeSets go, their
// clients are dropped (after Config.ClientIdle) and the room is back.
func TestNodeBudgetAcrossSlurms(t *testing.T) {
	e := startWithoutController(t, "budget", 1)
	routes := &clusterIPRoutes{routes: map[string]string{}}
	key := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "jwt", Labels: map[string]string{slinky.KeyLabel: "true"}},
		Data:       map[string][]byte{"jwt.key": []byte("a JWT HS256 key of this test, 32 bytes or more")},
	}
	if _, err := e.Kube.CoreV1().Secrets(e.NS).Create(e.Ctx, key, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// slurmWith makes a Controller, RestApi, Service and NodeSet named
	// name, its Service routed to a stand-in listing nodes nodes.
	slurmWith := func(name string, nodes int) *atomic.Int64 {
		t.Helper()
		addr, lists := nodesStandIn(t, nodes)
		if _, err := e.VC.SlinkyV1beta1().Controllers(e.NS).Create(e.Ctx, &slinkyv1beta1.Controller{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: slinkyv1beta1.ControllerSpec{
				JwtKeyRef:   &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "jwt"}, Key: "jwt.key"},
				SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-key"}, Key: "slurm.key"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.VC.SlinkyV1beta1().RestApis(e.NS).Create(e.Ctx, &slinkyv1beta1.RestApi{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       slinkyv1beta1.RestApiSpec{ControllerRef: corev1.LocalObjectReference{Name: name}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc, err := e.Kube.CoreV1().Services(e.NS).Create(e.Ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name + slinkyv1beta1.RestApiServiceSuffix},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "slurmrestd", Port: slinkyv1beta1.SlurmrestdPort}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		routes.set(fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, slinkyv1beta1.SlurmrestdPort), addr)
		if _, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Create(e.Ctx, &slinkyv1beta1.NodeSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: slinkyv1beta1.NodeSetSpec{
				ControllerRef: corev1.LocalObjectReference{Name: name},
				Replicas:      ptr.To[int32](0),
				Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return lists
	}
	// One worker: one refresh in flight at a time, so which answer finds
	// the budget spent is the one the test names. 3 100 entries: a small
	// Slurm (10 nodes) and two tenant Slurms of 1 000 fit with one more
	// answer of 1 000 in flight (3 010); a third tenant Slurm does not.
	e.runControllerWith(controllerOptions{
		flags: []string{"--slurm-namespaces=" + e.NS, "--slurm-node-budget=3100", "--workers-" + nodeset.Name + "=1"},
		config: func(c *nodeset.Config) {
			c.RESTTransport = routes.transport()
			c.ClientIdle = 2 * time.Second
		}})

	small := slurmWith("small", 10)
	e.waitReachable("small", "True", "Refreshed", "over REST")
	slurmWith("tenant-1", 1000)
	e.waitReachable("tenant-1", "True", "Refreshed", "over REST")
	slurmWith("tenant-2", 1000)
	e.waitReachable("tenant-2", "True", "Refreshed", "over REST")
	third := slurmWith("tenant-3", 1000)
	e.waitReachable("tenant-3", "False", "NodeBudgetSpent", "of 3100 nodes and jobs")
	c := e.reachable("tenant-3")
	t.Logf("tenant-3: %s", c.Message)
	if !strings.Contains(c.Message, " 1000") {
		t.Errorf("the refusal does not name the largest holders: %q", c.Message)
	}
	if third.Load() == 0 {
		t.Fatal("tenant-3's slurmrestd was never asked: the refusal is not the budget's")
	}

	// The small Slurm still fits beside the spent budget: it refreshes on.
	before := small.Load()
	e.Eventually("the small Slurm read twice more", func() (bool, string) {
		return small.Load() >= before+2, fmt.Sprintf("%d lists", small.Load()-before)
	})
	if c := e.reachable("small"); c == nil || c.Status != "True" {
		t.Fatalf("the small Slurm beside a spent budget: %+v", c)
	}

	// The tenant's first two NodeSets go: their clients are no longer
	// asked for, are dropped after ClientIdle, and the third fits.
	for _, name := range []string{"tenant-1", "tenant-2"} {
		if err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitReachable("tenant-3", "True", "Refreshed", "over REST")
}
