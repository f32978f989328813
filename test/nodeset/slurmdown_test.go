package nodeset

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// flakySinfo returns a Slurm client whose commands are the real ones but
// for sinfo, which fails as it does when slurmctld does not answer in time
// while the file it returns exists.
func flakySinfo(t *testing.T, e *env) (slurm.Client, string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"scontrol", "squeue"} {
		bin, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sinfo, err := exec.LookPath("sinfo")
	if err != nil {
		t.Fatal(err)
	}
	flag := filepath.Join(dir, "down")
	script := fmt.Sprintf("#!/bin/sh\nif [ -e %q ]; then echo 'slurm_load_node: Socket timed out on send/recv operation' >&2; exit 1; fi\nexec %q \"$@\"\n", flag, sinfo)
	if err := os.WriteFile(filepath.Join(dir, "sinfo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return slurm.NewCommands(slurm.CommandsConfig{Conf: e.slurm.Conf, BinDir: dir}), flag
}

// TestSlurmUnreadableStopsSync: while Slurm's node states cannot be read,
// the controller acts on nothing (a stale view could take a busy node for
// an idle one): a scale-in cordons and drains no pod; status says why
// (condition SlurmReachable False) and keeps the last Slurm counts. Once
// Slurm answers again, the scale-in goes on.
func TestSlurmUnreadableStopsSync(t *testing.T) {
	e := startWithoutController(t, "sdown", 2)
	client, down := flakySinfo(t, e)
	e.runControllerWith(controllerOptions{slurm: client})
	e.newNodeSet("sdown", 2)
	e.eventually("two ready pods, counted idle", func() (bool, string) {
		e.markAllReady()
		st := e.get("sdown").Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})

	if err := os.WriteFile(down, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.patchNodeSet("sdown", `{"spec":{"replicas":1}}`)
	gen := e.get("sdown").Generation
	e.eventually("the scale-in seen", func() (bool, string) {
		st := e.get("sdown").Status
		return st.ObservedGeneration == gen, fmt.Sprintf("%+v", st)
	})
	for name, p := range e.pods() {
		if _, ok := p.Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
			t.Fatalf("%s cordoned while Slurm could not be read", name)
		}
		if got := e.slurmState(name); got != "IDLE" {
			t.Fatalf("%s drained while Slurm could not be read: %s", name, got)
		}
	}
	if n := len(e.pods()); n != 2 {
		t.Fatalf("%d pods left, want 2", n)
	}
	st := e.get("sdown").Status
	c := meta.FindStatusCondition(st.Conditions, "SlurmReachable")
	if c == nil || c.Status != "False" || c.Reason != "RefreshFailed" || st.SlurmIdle != 2 {
		t.Fatalf("status: condition %+v, idle %d", c, st.SlurmIdle)
	}

	if err := os.Remove(down); err != nil {
		t.Fatal(err)
	}
	e.eventually("scaled in once Slurm answers", func() (bool, string) {
		st := e.get("sdown").Status
		c := meta.FindStatusCondition(st.Conditions, "SlurmReachable")
		return len(e.pods()) == 1 && c != nil && c.Status == "True", names(e.pods())
	})
}
