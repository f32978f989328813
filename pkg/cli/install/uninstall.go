package install

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// UninstallOptions holds the flags and inputs of 'uninstall'.
type UninstallOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Yes   bool
	Force bool

	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// NewUninstallCmd returns the 'uninstall' command.
func NewUninstallCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UninstallOptions{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove what 'kubectl vc install' put into the cluster",
		Long: templates.LongDesc(`
			Remove the serve manifests, the admission policies and the CRDs that
			'kubectl vc install' applies, after asking for confirmation.

			Deleting a CRD deletes every object of its kind, so uninstall refuses, before
			deleting anything, when a CRD still holds objects; --force deletes them with the
			CRD. Namespaces are left in place, since they may hold other things.`),
		Example: templates.Examples(`
			# Remove everything, asking first
			kubectl vc uninstall

			# In a script, once the queues and podgroups are gone
			kubectl vc uninstall --yes

			# Also delete the queues, podgroups and Commands still in the cluster
			kubectl vc uninstall --yes --force`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Delete CRDs even when objects of their kinds still exist (deletes those objects too)")
	return cmd
}

type target struct {
	obj *unstructured.Unstructured
	ri  dynamic.ResourceInterface
}

// Complete resolves the clients. There is nothing to validate: the flags
// are booleans.
func (o *UninstallOptions) Complete() error {
	cfg, err := o.Factory.RESTConfig()
	if err != nil {
		return err
	}
	if o.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	o.mapper, err = o.Factory.ToRESTMapper()
	return err
}

// Run deletes the installed objects in the reverse order of install.
func (o *UninstallOptions) Run(ctx context.Context) error {
	plan, err := NewPlan(Selection{CRDs: true, Policies: true, RBAC: true, Serve: true})
	if err != nil {
		return err
	}
	a := &applier{dyn: o.dyn, mapper: o.mapper}

	// Collect what exists, newest layer first: serve, policies, CRDs.
	objs := plan.All()
	var present []target
	for i := len(objs) - 1; i >= 0; i-- {
		u := objs[i]
		if u.GetKind() == "Namespace" {
			continue
		}
		ri, err := a.resource(u)
		if err != nil {
			// A kind the server does not know has nothing to delete.
			continue
		}
		if _, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("%s: %w", ref(u), err)
		}
		present = append(present, target{obj: u, ri: ri})
	}
	if len(present) == 0 {
		fmt.Fprintln(o.Out, "nothing to uninstall")
		return nil
	}

	// Refuse before deleting anything, so a refusal leaves a working install.
	if !o.Force {
		for _, t := range present {
			if t.obj.GetKind() != "CustomResourceDefinition" {
				continue
			}
			example, err := firstObject(ctx, o.dyn, t.obj)
			if err != nil {
				return err
			}
			if example != "" {
				return fmt.Errorf("CRD %s still holds objects (e.g. %s): delete them first, or pass --force to delete them with the CRD", t.obj.GetName(), example)
			}
		}
	}

	if !o.Yes {
		fmt.Fprintln(o.Out, "This deletes:")
		for _, t := range present {
			fmt.Fprintln(o.Out, "  "+ref(t.obj))
		}
		fmt.Fprintf(o.Out, "Delete these %d objects? [y/N]: ", len(present))
		line, _ := bufio.NewReader(o.In).ReadString('\n')
		fmt.Fprintln(o.Out)
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
		default:
			return fmt.Errorf("uninstall aborted: nothing was deleted (pass --yes to skip the question)")
		}
	}

	policy := metav1.DeletePropagationBackground
	for _, t := range present {
		err := t.ri.Delete(ctx, t.obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("delete %s: %w", ref(t.obj), err)
		}
		fmt.Fprintf(o.Out, "%s deleted\n", ref(t.obj))
	}
	return nil
}

// firstObject returns "kind namespace/name" of one object the CRD holds, or
// "" when it holds none.
func firstObject(ctx context.Context, dyn dynamic.Interface, crd *unstructured.Unstructured) (string, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); served {
			version, _ = m["name"].(string)
			break
		}
	}
	if version == "" {
		return "", nil
	}
	list, err := dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural}).
		List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("list %s: %w", crd.GetName(), err)
	}
	if len(list.Items) == 0 {
		return "", nil
	}
	it := list.Items[0]
	name := it.GetName()
	if ns := it.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.ToLower(kind) + " " + name, nil
}
