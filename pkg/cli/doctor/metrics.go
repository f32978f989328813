package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// The names 'kubectl vc install --serve' gives (pkg/manifests/serve);
// its Deployment and ServiceAccount are both manifests.ServeDeployment.
const (
	metricsReaderRole = "kubectl-vc-metrics-reader"
	metricsPath       = "/metrics"
)

// checkMetrics: can a scraper read serve's metrics? serve's HTTPS endpoint
// lets in a caller whose token the API server accepts and who may GET
// /metrics; serve asks with a TokenReview and a SubjectAccessReview. So a
// reader needs: serve's own right to ask, the reader ClusterRole, someone
// bound to it (and allowed by the API server), and an endpoint that
// answers. Checked only where serve's Deployment is in
// --controllers-namespace.
func (o *Options) checkMetrics(ctx context.Context) {
	const check = "metrics"
	ns := o.ControllersNamespace
	d, err := o.kube.AppsV1().Deployments(ns).Get(ctx, manifests.ServeDeployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return // no serve here: nothing serves metrics
	}
	if err != nil {
		o.cannot(check, "serve's Deployment", err)
		return
	}
	var args []string
	for _, c := range d.Spec.Template.Spec.Containers {
		args = append(args, c.Args...)
	}
	if v, ok := flagValues(args, "--metrics-secure"); ok && len(v) > 0 && v[len(v)-1] == "false" {
		o.add(check, Warn, "serve's metrics (and pprof with --profiling) are plain HTTP, readable by anyone who can reach its pods",
			fmt.Sprintf("remove --metrics-secure=false from deployment %s/%s ('kubectl vc install --serve' restores it)", ns, manifests.ServeDeployment))
		return
	}

	// serve's right to ask the API server about each scrape.
	sa := "system:serviceaccount:" + ns + ":" + manifests.ServeDeployment
	for _, r := range []struct{ group, resource string }{
		{"authentication.k8s.io", "tokenreviews"}, {"authorization.k8s.io", "subjectaccessreviews"},
	} {
		ok, err := o.allowed(ctx, authorizationv1.SubjectAccessReviewSpec{User: sa,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Group: r.group, Resource: r.resource}})
		if err != nil {
			o.cannot(check, "serve's right to review scrapers", err)
			return
		}
		if !ok {
			o.add(check, Fail, fmt.Sprintf("serve (%s) may not create %s.%s, so every scrape of its metrics fails", sa, r.resource, r.group),
				"kubectl vc install --rbac")
			return
		}
	}

	// The reader role, and who holds it.
	role, err := o.kube.RbacV1().ClusterRoles().Get(ctx, metricsReaderRole, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		o.add(check, Fail, "the ClusterRole "+metricsReaderRole+" is missing: no scraper can be given the right to read serve's metrics", "kubectl vc install --rbac")
		return
	}
	if err != nil {
		o.cannot(check, "the ClusterRole "+metricsReaderRole, err)
		return
	}
	if !grantsGet(role.Rules, metricsPath) {
		o.add(check, Fail, "the ClusterRole "+metricsReaderRole+" does not grant get on "+metricsPath, "kubectl vc install --rbac")
		return
	}
	bindings, err := o.kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		o.cannot(check, "who is bound to "+metricsReaderRole, err)
		return
	}
	var readers, refused []string
	for _, b := range bindings.Items {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != metricsReaderRole {
			continue
		}
		for _, s := range b.Subjects {
			spec, name := subjectSpec(s)
			ok, err := o.allowed(ctx, spec)
			if err != nil {
				o.cannot(check, "whether "+name+" may read the metrics", err)
				return
			}
			if ok {
				readers = append(readers, name)
			} else {
				refused = append(refused, name)
			}
		}
	}
	if len(refused) > 0 {
		o.add(check, Warn, fmt.Sprintf("bound to %s but refused get %s by the API server: %s", metricsReaderRole, metricsPath, some(refused, 3)), "", refused...)
	}
	if len(readers) == 0 {
		o.add(check, Warn, "no one is bound to "+metricsReaderRole+", so no scraper may read serve's metrics",
			fmt.Sprintf("kubectl create clusterrolebinding kubectl-vc-metrics-reader-prometheus --clusterrole=%s --serviceaccount=<namespace>:<prometheus service account>", metricsReaderRole))
		return
	}

	// The endpoint: through the API server's proxy no token reaches
	// serve, so a secured endpoint answers 401 there, an open one 200.
	if msg, status := o.probeMetrics(ctx, ns, d.Spec.Template.Labels); status != OK {
		o.add(check, status, msg, "")
		return
	}
	o.add(check, OK, fmt.Sprintf("serve's metrics are served over HTTPS and readable by %s (ClusterRole %s)", some(readers, 3), metricsReaderRole), "", readers...)
}

// allowed asks the API server whether spec's subject may do spec's request.
func (o *Options) allowed(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	r, err := o.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed && !r.Status.Denied, nil
}

// subjectSpec is the review of "may s get /metrics", and s's name.
func subjectSpec(s rbacv1.Subject) (authorizationv1.SubjectAccessReviewSpec, string) {
	spec := authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: metricsPath, Verb: "get"}}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		spec.User = "system:serviceaccount:" + s.Namespace + ":" + s.Name
		spec.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + s.Namespace, "system:authenticated"}
		return spec, "serviceaccount " + s.Namespace + "/" + s.Name
	case rbacv1.GroupKind:
		spec.Groups = []string{s.Name}
		return spec, "group " + s.Name
	default:
		spec.User = s.Name
		return spec, "user " + s.Name
	}
}

// grantsGet tells whether rules grant get on the non-resource URL path.
func grantsGet(rules []rbacv1.PolicyRule, path string) bool {
	for _, r := range rules {
		verb := false
		for _, v := range r.Verbs {
			verb = verb || v == "get" || v == "*"
		}
		for _, u := range r.NonResourceURLs {
			if verb && (u == path || u == "*" || strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*"))) {
				return true
			}
		}
	}
	return false
}

// probeMetrics GETs /metrics of one running serve pod through the API
// server's proxy (as the user running doctor): 401 is a secured endpoint
// (OK), 200 an open one (WARN), anything else unreachable (WARN). Without
// the right to proxy to pods it does not judge.
func (o *Options) probeMetrics(ctx context.Context, ns string, labels map[string]string) (string, Status) {
	var sel []string
	for k, v := range labels {
		sel = append(sel, k+"="+v)
	}
	pods, err := o.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: strings.Join(sel, ",")})
	if err != nil {
		return "", OK // listing pods is not the point here; the rest was checked
	}
	for _, p := range pods.Items {
		if p.Status.Phase != "Running" || p.DeletionTimestamp != nil {
			continue
		}
		port := "8443"
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == "https" {
					port = fmt.Sprint(cp.ContainerPort)
				}
			}
		}
		_, err := o.kube.CoreV1().Pods(ns).ProxyGet("https", p.Name, port, metricsPath, nil).DoRaw(ctx)
		var status apierrors.APIStatus
		switch {
		case err == nil:
			return fmt.Sprintf("pod %s/%s serves %s to a request without a token: it is not protected", ns, p.Name, metricsPath), Warn
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "pods/proxy"):
			return "", OK // doctor's user may not proxy; nothing to say
		case errors.As(err, &status) && status.Status().Code == http.StatusUnauthorized:
			return "", OK
		default:
			return fmt.Sprintf("cannot reach %s of pod %s/%s on port %s: %s", metricsPath, ns, p.Name, port, util.Message(err)), Warn
		}
	}
	return "no running serve pod answers " + metricsPath, Warn
}
