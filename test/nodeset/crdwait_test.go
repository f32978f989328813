package nodeset

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// nodeSetRequests counts the requests for NodeSets (lists and watches) in
// n, and the discovery requests for Slinky's group, by which the
// controller asks whether NodeSets are served, in polls.
type nodeSetRequests struct {
	next     http.RoundTripper
	n, polls *atomic.Int64
}

func (r nodeSetRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case strings.Contains(req.URL.Path, "/nodesets"):
		r.n.Add(1)
	case req.URL.Path == "/apis/"+slinkyv1beta1.SchemeGroupVersion.String():
		r.polls.Add(1)
	}
	return r.next.RoundTrip(req)
}

// TestWaitsForTheNodeSetCRD: serve's NodeSet controller where the API
// server serves no NodeSets (a cluster without Slinky, where the in-cluster
// serve runs it too) waits quietly: the manager starts and no request for
// NodeSets is made (a failing informer would list again and again). Once
// the CRD is installed, the controller starts by itself and runs a NodeSet.
func TestWaitsForTheNodeSetCRD(t *testing.T) {
	plane, err := controlplane.Start(context.Background(), controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plane.Stop() })
	e := startOn(t, plane, "late", 1)

	ns := nodeset.New(nodeset.Config{Slurm: e.Slurm.Client(), DrainPoll: 200 * time.Millisecond,
		Resync: time.Second, CRDPoll: time.Second})
	cfg := rest.CopyConfig(plane.AdminConfig())
	var requests, polls atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return nodeSetRequests{next: rt, n: &requests, polls: &polls}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var runErr error
	go func() {
		defer wg.Done()
		// WaitForStop: the cleanup returns only once the controller has,
		// before its Slurm and control plane are stopped.
		runErr = controller.Run(ctx, controller.Config{Kubeconfig: cfg, Controllers: []framework.Controller{ns},
			MetricsAddr: "0", HealthAddr: "0", WaitForStop: true})
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if runErr != nil {
			t.Errorf("manager: %v", runErr)
		}
	})
	// Several polls go by, each told that NodeSets are not served (counted,
	// not timed: on a loaded machine the polls come late, and a sleep
	// would then prove less).
	e.Eventually("three polls for the NodeSet CRD", func() (bool, string) {
		n := polls.Load()
		return n >= 3, fmt.Sprint(n)
	})
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests for NodeSets while the API server serves none", n)
	}
	if err := cptest.InstallCRDs(context.Background(), plane); err != nil {
		t.Fatal(err)
	}
	e.NewNodeSet("late", 1)
	e.Eventually("the NodeSet's pod, once NodeSets are served", func() (bool, string) {
		n := len(e.Pods())
		return n == 1, fmt.Sprint(n)
	})
	if requests.Load() == 0 {
		t.Fatal("no request for NodeSets after the CRD was installed: the count proves nothing")
	}
}
