// Package verdict reads what decides whether a Volcano job, podgroup, pod
// or queue runs (Reader: the object and what it waits on, into an
// analysis.Snapshot), and says the verdict of 'kubectl vc why' in one line
// (Summary), as the describe pages of those kinds end with it (Describe).
// It is apart from package why, the command, so that the kinds' packages
// can use it and why can complete names with their Kinds.
package verdict

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DefaultSchedulerName is the name of Volcano's scheduler when
// --scheduler-name is not given.
const DefaultSchedulerName = keys.VolcanoScheduler

// Describe ends a describe page (job, podgroup, queue) with the verdict of
// 'why' on the object, in one line that names the command explaining it.
func Describe(ctx context.Context, d *vcprinters.Describer, vc versioned.Interface, kube kubernetes.Interface, kind analysis.Kind, ns, name string) {
	d.Line(0, "Why", Summary(ctx, vc, kube, kind, ns, name))
}

// Summary is that verdict: "blocked by QueueClosed, ...; see 'kubectl vc
// why ...'" or "nothing blocks it (...)". It reads as 'why' does, with its
// defaults (scheduler volcano, Leases in volcano-system).
func Summary(ctx context.Context, vc versioned.Interface, kube kubernetes.Interface, kind analysis.Kind, ns, name string) string {
	cmd := fmt.Sprintf("kubectl vc why %s %s", kind, name)
	if kind != analysis.Queue {
		cmd += " -n " + ns
	}
	r := &Reader{VC: vc, Kube: kube, ChunkSize: chunk.DefaultSize, SchedulerNames: []string{DefaultSchedulerName}, ControllersNamespace: keys.VolcanoNamespace}
	snap, err := r.Read(ctx, kind, ns, name)
	if err != nil {
		return fmt.Sprintf("<cannot tell: %s>", util.Message(err))
	}
	rep := analysis.Analyze(snap)
	codes := rep.Blocking()
	if len(codes) == 0 {
		return fmt.Sprintf("nothing blocks it (%s)", cmd)
	}
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return fmt.Sprintf("blocked by %s; see '%s'", strings.Join(s, ", "), cmd)
}
