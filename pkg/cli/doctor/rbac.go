package doctor

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// access is one request the CLI makes: verb on group/resource, in
// namespace ("" for all namespaces or a cluster-scoped resource).
type access struct {
	verb, group, resource, namespace string
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	where := ""
	if a.namespace != "" {
		where = " in " + a.namespace
	}
	return a.verb + " " + r + where
}

// capability is what a user does with the CLI and the access it needs.
type capability struct {
	what  string
	needs []access
}

// capabilities lists what the CLI does, by command, with the requests each
// makes (as the RBAC test of serve lists serve's).
func (o *Options) capabilities() []capability {
	const sched, bus, batch, slinky = "scheduling.volcano.sh", "bus.volcano.sh", "batch.volcano.sh", "slinky.slurm.net"
	return []capability{
		{"read queues (queue list, tree, describe, --watch, completion)", []access{
			{"get", sched, "queues", ""}, {"list", sched, "queues", ""}, {"watch", sched, "queues", ""}}},
		{"change queues (queue create, update, delete)", []access{
			{"create", sched, "queues", ""}, {"patch", sched, "queues", ""}, {"delete", sched, "queues", ""}}},
		{"open and close queues (queue open, close)", []access{
			{"create", bus, "commands", o.CommandNamespace}}},
		{"list Commands (command list -A)", []access{
			{"list", bus, "commands", ""}, {"watch", bus, "commands", ""}}},
		{"read podgroups (podgroup list, describe; queue counts)", []access{
			{"get", sched, "podgroups", ""}, {"list", sched, "podgroups", ""}, {"list", "", "pods", ""}}},
		{"read events (describe)", []access{
			{"list", "", "events", ""}}},
		{"use Volcano Jobs (job list, describe, suspend, resume, ...)", []access{
			{"list", batch, "jobs", ""}, {"get", batch, "jobs", ""}}},
		{"use NodeSets (nodeset list, scale, cordon)", []access{
			{"list", slinky, "nodesets", ""}, {"patch", slinky, "nodesets", ""}}},
		{"install and uninstall (CRDs, admission policies, serve's RBAC)", []access{
			{"create", "apiextensions.k8s.io", "customresourcedefinitions", ""},
			{"patch", "apiextensions.k8s.io", "customresourcedefinitions", ""},
			{"create", "admissionregistration.k8s.io", "validatingadmissionpolicies", ""},
			{"create", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", ""},
			// install updates a policy or binding that others added to.
			{"update", "admissionregistration.k8s.io", "validatingadmissionpolicies", ""},
			{"update", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", ""},
			{"create", "rbac.authorization.k8s.io", "clusterroles", ""},
			{"create", "rbac.authorization.k8s.io", "clusterrolebindings", ""}}},
	}
}

// checkRBAC asks the API server, with SelfSubjectAccessReviews, whether
// the current user may make each request the CLI makes, and reports each
// capability with a denied request.
func (o *Options) checkRBAC(ctx context.Context) {
	who := "you"
	if r, err := o.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err == nil && r.Status.UserInfo.Username != "" {
		who = "you (" + r.Status.UserInfo.Username + ")"
	}
	denied := 0
	for _, c := range o.capabilities() {
		var no []string
		for _, a := range c.needs {
			r, err := o.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: a.verb, Group: a.group, Resource: a.resource, Namespace: a.namespace,
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				o.cannot("rbac", "what "+who+" may do", err)
				return
			}
			if !r.Status.Allowed {
				no = append(no, a.String())
			}
		}
		if len(no) > 0 {
			denied++
			o.add("rbac", Warn, fmt.Sprintf("%s may not %s: denied %s", who, c.what, strings.Join(no, ", ")),
				"ask a cluster admin for a Role or ClusterRole granting it, or use another --context", no...)
		}
	}
	if denied == 0 {
		o.add("rbac", OK, who+" may do everything kubectl vc does, install included", "")
	}
}
