package hostile

import (
	"context"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

// TestEachRow tries the rows one at a time, each against a serve of its
// own: the one memory peak it sees is that row's.
func TestEachRow(t *testing.T) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if why, skip := r.skipped(); skip {
				t.Skip(why)
			}
			var flags []string
			var slurm *standIn
			switch {
			case r.name == rows[0].name:
				// NodeSet replicas: against a real Slurm (KVC_TEST_SLURM).
				flags = realSlurm(t)
			case r.flags == nil:
				slurm = newStandIn(t, r.nodes, r.jobs)
				flags = slurm.flags(t)
			}
			w := newWorld(t, slurm)
			w.alone = true
			if r.flags != nil {
				flags = r.flags(t, w)
			}
			s := startServe(t, flags...)
			w.serve = s
			q := victim(t)
			r.apply(t, w)
			latency, state := closeQueue(t, q)
			r.handled(t, w)
			s.check(t, r.name, latency, state)
		})
	}
}

// TestAllAtOnce tries every row at once against one serve, whose stand-in
// slurmrestd answers in turn with each hostile answer and a plain one (so
// that the NodeSets also get to act).
func TestAllAtOnce(t *testing.T) {
	var nodes []answer
	var jobs *answer
	var tried []row
	for _, r := range rows {
		if why, skip := r.skipped(); skip {
			t.Log(why)
			continue
		}
		if r.flags != nil {
			t.Logf("%s: tried alone only (TestEachRow): serve reaches Slurm another way for it", r.name)
			continue
		}
		if r.alone != "" {
			t.Logf("%s: tried alone only (TestEachRow): %s", r.name, r.alone)
			continue
		}
		tried = append(tried, r)
		for _, a := range r.nodes {
			nodes = append(nodes, a, answer{})
		}
		if r.jobs != nil {
			jobs = r.jobs
		}
	}
	slurm := newStandIn(t, nodes, jobs)
	for i := range slurm.nodes {
		if slurm.nodes[i].name == "" {
			slurm.nodes[i] = plainNodes(slurm)
		}
	}
	w := newWorld(t, slurm)
	s := startServe(t, slurm.flags(t)...)
	w.serve = s
	q := victim(t)
	var wg sync.WaitGroup
	for _, r := range tried {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A row's apply fails its own subtest; run concurrently, they
			// share the one serve.
			t.Run("apply "+r.name, func(t *testing.T) { r.apply(t, w) })
		}()
	}
	// Meanwhile: the close is issued while the rows are being written.
	latency, state := closeQueue(t, q)
	wg.Wait()
	for _, r := range tried {
		t.Run("handled "+r.name, func(t *testing.T) { r.handled(t, w) })
	}
	s.check(t, "all at once", latency, state)
}

// realSlurm starts the Slurm $KVC_TEST_SLURM names (slurmctld reached with
// Slurm's commands by default, slurmrestd of a Slurm version in a chroot
// with slurm-24.11 or slurm-26.05) and returns serve's flags to reach it.
func realSlurm(t *testing.T) []string {
	t.Helper()
	b := nodesets.StartSlurm(t, []string{"huge-0", "huge-1"})
	t.Logf("NodeSet rows against Slurm %s", b.Name())
	return b.ServeFlags(t)
}

// resourceMax is the largest quantity a pod may request.
func resourceMax() *resource.Quantity { return resource.NewQuantity(math.MaxInt64, resource.DecimalSI) }

var flows struct {
	once sync.Once
	ok   bool
	err  error
}

// flowCRDs installs Volcano's JobFlow and JobTemplate CRDs (from the
// shared folder, see docs/development.md) once; without them the rows
// write Jobs only, and say so.
func flowCRDs(t *testing.T) bool {
	t.Helper()
	flows.once.Do(func() {
		dir, ok, err := cptest.UpstreamDir("volcano-flow-crds")
		if err != nil || !ok {
			flows.err = err
			return
		}
		list, err := crds.LoadDir(dir)
		if err != nil {
			flows.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		flows.err = crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(env.cp.AdminConfig()), "volcano-installer", list...)
		flows.ok = flows.err == nil
	})
	if flows.err != nil {
		t.Fatal(flows.err)
	}
	if !flows.ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("Volcano's JobFlow and JobTemplate CRDs not found in the shared folder (CI=true: required)")
		}
		t.Log("Volcano's JobFlow and JobTemplate CRDs not found in the shared folder: JobFlows and JobTemplates NOT tried")
	}
	return flows.ok
}
