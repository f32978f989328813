// Package install implements 'kubectl vc install' and 'kubectl vc uninstall':
// they apply (or delete) the CRDs and the manifests embedded in the binary.
package install

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// Selection names the parts of an installation.
type Selection struct {
	CRDs     bool
	Policies bool
	// Admission is the mode of the policies (keys.AdmissionModeIndex or
	// keys.AdmissionModePerQueue); empty: index with Serve, else per-queue
	// (install resolves it against the cluster before it plans).
	Admission string
	// RBAC is the Namespace, ServiceAccount and RBAC of 'serve'.
	RBAC bool
	// Serve is everything 'serve' needs in a cluster, its RBAC included.
	Serve bool
	// ServiceMonitor adds the Prometheus Operator's ServiceMonitor for
	// serve's metrics (with Serve only).
	ServiceMonitor bool
	// SlurmNamespaces are where serve may read Slurm JWT key Secrets and
	// act on Slurm (with RBAC or Serve): a Role and RoleBinding in each,
	// and serve's --slurm-namespaces.
	SlurmNamespaces []string
	// ServeNamespace is where serve runs (with RBAC or Serve); empty:
	// DefaultServeNamespace.
	ServeNamespace string
	// WebhookURL is where a serve outside the cluster answers the queue
	// webhook of the index mode (https://host:port/validate-queues); empty:
	// serve's Service in ServeNamespace.
	WebhookURL string
	// WebhookCABundle is the PEM of the CA the API server verifies the
	// webhook's certificate with (the Secret's ca.crt, or
	// --webhook-ca-file); empty: the API server's own trust roots.
	WebhookCABundle []byte
}

// serveNamespace is where the selection puts serve.
func (s Selection) serveNamespace() string {
	if s.ServeNamespace == "" {
		return DefaultServeNamespace
	}
	return s.ServeNamespace
}

// Empty reports whether nothing was selected.
func (s Selection) Empty() bool { return !s.CRDs && !s.Policies && !s.RBAC && !s.Serve }

// rbacKinds are the kinds '--rbac' picks out of the serve set: the identity
// and permissions, without the workload.
var rbacKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
}

// Plan holds the objects of a selection in the order they are applied:
// CRDs (so that everything after them can refer to the kinds), then
// policies, then the serve set with namespaces first.
type Plan struct {
	CRDs    []*unstructured.Unstructured
	Objects []*unstructured.Unstructured
	// Notes are things worth telling the user, e.g. an empty set.
	Notes []string
}

// All returns every object of the plan, CRDs first.
func (p *Plan) All() []*unstructured.Unstructured {
	return append(append([]*unstructured.Unstructured{}, p.CRDs...), p.Objects...)
}

// NewPlan builds the plan of a selection from the embedded manifests; the
// Deployment of 'serve' runs DefaultImage(), the image of this binary's
// version.
func NewPlan(sel Selection) (*Plan, error) { return newPlan(sel, DefaultImage()) }

// newPlan is NewPlan with the image of the serve Deployment.
func newPlan(sel Selection, image string) (*Plan, error) {
	p := &Plan{}
	if sel.CRDs {
		list, err := crds.All()
		if err != nil {
			return nil, err
		}
		for _, crd := range list {
			if !Installed(crd.Name) {
				continue
			}
			c := crd.DeepCopy()
			c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
			if err != nil {
				return nil, err
			}
			u := &unstructured.Unstructured{Object: m}
			// Neither status nor server-set metadata belongs in an apply.
			unstructured.RemoveNestedField(u.Object, "status")
			unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
			p.CRDs = append(p.CRDs, u)
		}
	}
	if sel.Policies {
		mode := sel.Admission
		if mode == "" {
			mode = keys.AdmissionModePerQueue
			if sel.Serve {
				mode = keys.AdmissionModeIndex
			}
		}
		objs, err := manifests.PolicyObjects(mode)
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 {
			p.Notes = append(p.Notes, "this build embeds no admission policies")
		}
		for _, u := range objs {
			if u.GetKind() == "ValidatingWebhookConfiguration" {
				if err := setWebhookClient(u, sel); err != nil {
					return nil, err
				}
			}
		}
		p.Objects = append(p.Objects, objs...)
	}
	if sel.RBAC || sel.Serve {
		objs, err := manifests.Objects(manifests.Serve)
		if err != nil {
			return nil, err
		}
		if err := setServeNamespace(objs, sel.serveNamespace()); err != nil {
			return nil, err
		}
		if sel.Serve {
			if err := setServeImage(objs, image); err != nil {
				return nil, err
			}
			if len(sel.SlurmNamespaces) > 0 {
				if err := addServeArgs(objs, "--slurm-namespaces="+strings.Join(sel.SlurmNamespaces, ",")); err != nil {
					return nil, err
				}
			}
		}
		if len(sel.SlurmNamespaces) > 0 {
			if err := narrowClusterRole(objs); err != nil {
				return nil, err
			}
		}
		var ns, rest []*unstructured.Unstructured
		for _, o := range objs {
			if !sel.Serve && !rbacKinds[o.GetKind()] {
				continue
			}
			if o.GetKind() == "Namespace" {
				ns = append(ns, o)
			} else {
				rest = append(rest, o)
			}
		}
		if len(ns)+len(rest) == 0 {
			p.Notes = append(p.Notes, "this build embeds no manifests for 'serve'")
		}
		p.Objects = append(append(p.Objects, ns...), rest...)
		p.Objects = append(p.Objects, slurmKeyObjects(sel.SlurmNamespaces, sel.serveNamespace())...)
	}
	if sel.ServiceMonitor {
		objs, err := manifests.Objects(manifests.ServiceMonitor)
		if err != nil {
			return nil, err
		}
		if err := setServeNamespace(objs, sel.serveNamespace()); err != nil {
			return nil, err
		}
		p.Objects = append(p.Objects, objs...)
	}
	return p, nil
}

// notInstalled names the embedded CRDs that install leaves to their own
// project. jobs.batch.volcano.sh is Volcano's, and only Volcano's job
// controller runs Jobs (serve has none): applied over a Volcano
// installation ours would take over its schema, uninstall would delete it
// with every Job, and without Volcano a Job would never run. The job
// commands need Volcano; the tests install the embedded CRD themselves.
var notInstalled = map[string]bool{"jobs.batch.volcano.sh": true}

// foreignKept names the embedded CRDs that install applies only where the
// cluster has none: hypernodes.topology.volcano.sh is Volcano's, and
// Volcano's scheduler and HyperNode controller read it; where Volcano put
// its own, ours (the same schema, other descriptions) would take over its
// fields, and uninstall would delete every HyperNode with it. A CRD of
// this set that exists and that kubectl-vc's field manager does not manage
// is left alone by both.
var foreignKept = map[string]bool{"hypernodes.topology.volcano.sh": true}

// foreign tells whether u, as read from the cluster, is a CRD of the
// foreignKept set that someone else installed.
func foreign(u *unstructured.Unstructured) bool {
	if u == nil || u.GetKind() != "CustomResourceDefinition" || !foreignKept[u.GetName()] {
		return false
	}
	for _, m := range u.GetManagedFields() {
		if m.Manager == keys.CLIManager {
			return false
		}
	}
	return true
}

// Installed reports whether install applies (and uninstall deletes) the
// embedded CRD of that name.
func Installed(crdName string) bool { return !notInstalled[crdName] }

// ref names an object the way kubectl prints it: kind.group/name.
func ref(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	kind := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	if ns := u.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s/%s (namespace %s)", kind, u.GetName(), ns)
	}
	return kind + "/" + u.GetName()
}

var (
	vapGV            = schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}
	serviceMonitorGV = schema.GroupVersion{Group: "monitoring.coreos.com", Version: "v1"}
)
