package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	dryRun bool
	// dryNamespaces are the namespaces a server dry run reported as
	// created: they do not exist, so the server cannot check what goes in
	// them.
	dryNamespaces map[string]bool
}

func (a *applier) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, &objectError{msg: fmt.Sprintf("%s: the server does not serve %s (%s)", ref(u), gvk, util.Message(err))}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

// apply server-side applies one object and reports what happened to it,
// judged by its resourceVersion (or, in a dry run, where the server keeps
// the old resourceVersion, by its content).
func (a *applier) apply(ctx context.Context, u *unstructured.Unstructured, out io.Writer) error {
	ri, err := a.resource(u)
	if err != nil {
		return err
	}
	before, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		before, err = nil, nil
	}
	if err != nil {
		return objErr("read", u, err)
	}
	if u.GetKind() == "Namespace" && before != nil {
		// A namespace that exists is someone's: Volcano's own
		// volcano-system, say, whose administrator chose its labels. Its
		// Pod Security labels in particular are not ours to set: the
		// restricted level would keep Volcano's pods from starting again.
		// Only a namespace install creates gets the manifest's labels.
		_, err = fmt.Fprintf(out, "%s unchanged (it exists: install changes no namespace it did not create)\n", ref(u))
		return err
	}
	if foreign(before) {
		_, err = fmt.Fprintf(out, "%s unchanged (installed by someone else, Volcano's own: install does not replace it)\n", ref(u))
		return err
	}
	if labelsOnly(u, before) {
		// A QueueIndex: its manifest sets only labels, and serve writes
		// the rest without managedFields (plugins/queueindex), so an apply
		// would add its field manager's entry back on every install.
		_, err = fmt.Fprintf(out, "%s unchanged\n", ref(u))
		return err
	}
	body, err := u.MarshalJSON()
	if err != nil {
		return objErr("encode", u, err)
	}
	// The embedded manifests are the source of truth for the fields they
	// set, so conflicts with other managers are resolved in their favour.
	force := true
	opts := metav1.PatchOptions{FieldManager: keys.CLIManager, Force: &force}
	if a.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	after, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, opts)
	if err != nil && a.dryRun && a.dryNamespaces[u.GetNamespace()] && namespaceNotFound(err, u.GetNamespace()) {
		// A dry run persists nothing, the namespace included, and the
		// server refuses to even check an object in a namespace that does
		// not exist. Say so rather than fail: the real run creates the
		// namespace first.
		_, err = fmt.Fprintf(out, "%s created (server dry run; not checked: its namespace is created by this install, and a server dry run cannot check objects in a namespace that does not exist yet)\n", ref(u))
		return err
	}
	if err != nil {
		return objErr("apply", u, err)
	}
	if after, err = a.replaceAdditions(ctx, ri, u, after); err != nil {
		return objErr("apply", u, err)
	}
	result := "configured"
	switch {
	case before == nil:
		result = "created"
	case !a.dryRun && before.GetResourceVersion() == after.GetResourceVersion():
		result = "unchanged"
	case a.dryRun && reflect.DeepEqual(comparable(before), comparable(after)):
		result = "unchanged"
	}
	if a.dryRun {
		result += " (server dry run)"
		if u.GetKind() == "Namespace" && before == nil {
			a.dryNamespaces[u.GetName()] = true
		}
	}
	_, err = fmt.Fprintf(out, "%s %s\n", ref(u), result)
	return err
}

// labelsOnly tells whether the manifest u sets nothing but its name and
// labels, and the object before already carries those labels: there is
// nothing to apply.
func labelsOnly(u, before *unstructured.Unstructured) bool {
	if before == nil {
		return false
	}
	for k := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			return false
		}
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	for k := range meta {
		if k != "name" && k != "labels" {
			return false
		}
	}
	have := before.GetLabels()
	for k, v := range u.GetLabels() {
		if have[k] != v {
			return false
		}
	}
	return true
}

// namespaceNotFound tells whether err is the server's "namespace ns not
// found".
func namespaceNotFound(err error, ns string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == ns
}

// replaceAdditions makes the spec of an applied admission policy or
// binding exactly the manifest's. Server-side apply keeps what other
// managers added to a list that is a set or a map (a binding's
// validationActions, a policy's matchConditions), and fields the manifest
// does not set; an added Audit action or a matchCondition that exempts some
// requests changes what a rule enforces. 'doctor' reports such a spec, and
// install must undo it. The write carries the resourceVersion just read, so
// a concurrent change fails rather than being lost; the server fills in its
// defaults again. Other kinds keep additions (a sidecar someone added to
// serve's Deployment is theirs).
//
// The queue webhook's configuration is held to the same: its webhooks
// list is a map keyed by name, and each webhook's matchConditions too, so
// an added webhook or a match condition that exempts some queue writes
// would survive an apply.
func (a *applier) replaceAdditions(ctx context.Context, ri dynamic.ResourceInterface, u, after *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	field := "spec"
	switch {
	case u.GetKind() == "ValidatingWebhookConfiguration":
		field = "webhooks"
		if manifests.FirstDifference(u.Object[field], after.Object[field], field) == "" {
			return after, nil
		}
	case !manifests.Exact(u.GetKind()) || manifests.FirstDifference(manifests.Spec(u), after.Object["spec"], "spec") == "":
		return after, nil
	}
	fixed := after.DeepCopy()
	fixed.Object[field] = runtime.DeepCopyJSONValue(u.Object[field])
	opts := metav1.UpdateOptions{FieldManager: keys.CLIManager}
	if a.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return ri.Update(ctx, fixed, opts)
}

// comparable strips what the server changes on every write.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range []string{"resourceVersion", "managedFields", "generation", "creationTimestamp", "uid"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(c.Object, "status")
	return c.Object
}

// PrintYAML writes objects as one multi-document YAML stream.
func PrintYAML(out io.Writer, objs []*unstructured.Unstructured) error {
	for i, u := range objs {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := fmt.Fprintln(out, "---"); err != nil {
				return err
			}
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}
