package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// maxNodeSetLines: past this many NodeSets that reach Slurm, they are
// counted in one line instead of one line each.
const maxNodeSetLines = 20

// checkNodeSets reports, per NodeSet, whether its controller reaches Slurm,
// over which transport and API version, as the NodeSet controller last
// wrote it in the SlurmReachable condition.
func (o *Options) checkNodeSets(ctx context.Context) {
	list, err := o.vc.SlinkyV1beta1().NodeSets("").List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return // the crds check says whether NodeSets should be served
	}
	if err != nil {
		o.cannot("nodesets", "NodeSets", err)
		return
	}
	items := list.Items
	if len(items) == 0 {
		o.add("nodesets", OK, "no NodeSets", "")
		return
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	var reachable, messages []string
	for i := range items {
		s := &items[i]
		name := s.Namespace + "/" + s.Name
		c := meta.FindStatusCondition(s.Status.Conditions, conditions.SlurmReachable)
		switch {
		case c == nil:
			o.add("nodesets", Warn, fmt.Sprintf("NodeSet %s: no kubectl-vc NodeSet controller has reported whether it reaches Slurm (Slinky's slurm-operator writes no such condition)", name),
				"if serve should run it, deploy it (kubectl vc install --serve), but never beside a slurm-operator that runs the same NodeSet", name)
		case c.Status != metav1.ConditionTrue:
			fix := conditions.Fix(conditions.SlurmReachable, c.Reason)
			if strings.Contains(fix, "%[") {
				fix = fmt.Sprintf(fix, s.Namespace, s.Name)
			}
			o.add("nodesets", Fail, fmt.Sprintf("NodeSet %s cannot reach Slurm (%s): %s", name, c.Reason, c.Message), fix, name)
		default:
			reachable = append(reachable, name)
			messages = append(messages, c.Message)
		}
	}
	if len(reachable) > maxNodeSetLines {
		o.add("nodesets", OK, fmt.Sprintf("%d NodeSets reach Slurm: %s", len(reachable), some(reachable, 5)), "", reachable...)
		return
	}
	for i, name := range reachable {
		o.add("nodesets", OK, fmt.Sprintf("NodeSet %s: %s", name, messages[i]), "", name)
	}
}
