package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxNodeSetLines: past this many NodeSets that reach Slurm, they are
// counted in one line instead of one line each.
const maxNodeSetLines = 20

// reachableFix says what to do for each reason the NodeSet controller
// gives in SlurmReachable=False (plugins/nodeset, pkg/slurm/slinky).
var reachableFix = map[string]string{
	"NoControllerRef":    "set spec.controllerRef to the Slinky Controller of its Slurm cluster",
	"ControllerNotFound": "create the Controller spec.controllerRef names, or point spec.controllerRef at an existing one",
	"RestApiNotFound":    "create a Slinky RestApi whose spec.controllerRef names the NodeSet's Controller (slurmrestd is how serve reaches Slurm)",
	"ServiceNotFound":    "the RestApi's Service <restapi>-restapi is missing or has no cluster IP: check Slinky's operator, or create it",
	"NoJWTKey":           "set the Controller's spec.jwtKeyRef to a Secret key holding the cluster's JWT HS256 key",
	"SecretNotFound":     "create the Secret the Controller's spec.jwtKeyRef names",
	"SecretForbidden":    "let serve's ServiceAccount get that Secret: kubectl vc install --serve with %[1]s in --slurm-namespaces",
	"SlurmNotTrusted":    "if every writer of NodeSets, Controllers, RestApis and Services in %[1]s may use its Slurm key, add it to serve's --slurm-namespaces: kubectl vc install --serve --slurm-namespaces=<the namespaces named now>,%[1]s (docs/security.md)",
	"KeyNotTrusted":      "label the JWT key Secret the Controller's spec.jwtKeyRef names: kubectl label secret -n %[1]s NAME kubectl-vc.io/slurm-jwt-key=true",
	"Unauthorized":       "slurmrestd refused the token: the key in the Secret (or --slurm-jwt-key-file) must be the one slurm.conf's AuthAltParameters jwt_key names",
	"NoSlurm":            "give serve --slurm-rest-url with --slurm-jwt-key-file, or run it where Slinky's Controller and RestApi kinds are served",
	"RefreshFailed":      "check that slurmrestd (or slurmctld) runs and answers: 'kubectl vc nodeset describe %[2]s -n %[1]s' shows the error",
}

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
		c := meta.FindStatusCondition(s.Status.Conditions, "SlurmReachable")
		switch {
		case c == nil:
			o.add("nodesets", Warn, fmt.Sprintf("NodeSet %s: no kubectl-vc NodeSet controller has reported whether it reaches Slurm (Slinky's slurm-operator writes no such condition)", name),
				"if serve should run it, deploy it (kubectl vc install --serve), but never beside a slurm-operator that runs the same NodeSet", name)
		case c.Status != metav1.ConditionTrue:
			fix := reachableFix[c.Reason]
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
