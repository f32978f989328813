package install

import (
	"bufio"
	"context"
	"fmt"
	"sort"
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

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// UninstallOptions holds the flags and inputs of 'uninstall'.
type UninstallOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Yes   bool
	Force bool
	// DryRun is "none" or "server": with "server" every delete is sent as
	// a server dry run, which checks it (RBAC, admission) and removes
	// nothing, and nothing is asked.
	DryRun string

	dryServer bool
	dyn       dynamic.Interface
	mapper    meta.RESTMapper
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
			CRD. The queues root and default, which serve creates and which cannot be
			deleted on their own, do not count: they go with the Queue CRD. Namespaces are
			left in place, since they may hold other things.

			--dry-run=server sends every delete as a server dry run: the server checks it and
			removes nothing.`),
		Example: templates.Examples(`
			# Remove everything, asking first
			kubectl vc uninstall

			# In a script, once the queues and podgroups are gone
			kubectl vc uninstall --yes

			# What would go, checked by the server, nothing removed
			kubectl vc uninstall --dry-run=server

			# Also delete the queues, podgroups and Commands still in the cluster
			kubectl vc uninstall --yes --force`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "Do not ask for confirmation")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Delete CRDs even when objects of their kinds still exist (deletes those objects too)")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", "none", `Must be "none" or "server". With "server", the server checks every delete but removes nothing`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "server"
	return cmd
}

type target struct {
	obj *unstructured.Unstructured
	ri  dynamic.ResourceInterface
}

// Validate checks --dry-run (before Complete: a bad flag needs no cluster).
func (o *UninstallOptions) Validate() error {
	switch o.DryRun {
	case "none", "":
		o.dryServer = false
	case "server":
		o.dryServer = true
	case "client":
		return util.UsageErrorf("--dry-run=client is not supported: --dry-run=server lists what would be deleted, checked by the server, and deletes nothing")
	default:
		return util.UsageErrorf("invalid --dry-run %q: use none or server", o.DryRun)
	}
	return nil
}

// Complete resolves the clients.
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
	// serve's objects are in the namespace install put it in.
	serveNS, err := installedServeNamespace(ctx, o.dyn)
	if err != nil {
		return err
	}
	plan, err := NewPlan(Selection{CRDs: true, Policies: true, RBAC: true, Serve: true, ServiceMonitor: true, ServeNamespace: serveNS})
	if err != nil {
		return err
	}
	a := &applier{dyn: o.dyn, mapper: o.mapper}

	// Collect what exists, newest layer first: serve, policies, CRDs.
	objs, err := withBothModes(plan.All())
	if err != nil {
		return err
	}
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
		cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return objErr("read", u, err)
		}
		if foreign(cur) {
			continue // Volcano's own HyperNode CRD: not ours to delete
		}
		present = append(present, target{obj: u, ri: ri})
	}
	// The webhook's Secret is install's own, not a manifest's.
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	secret.SetName(keys.QueueWebhookSecretName)
	secret.SetNamespace(serveNS)
	if ri, err := a.resource(secret); err == nil {
		if _, err := ri.Get(ctx, secret.GetName(), metav1.GetOptions{}); err == nil {
			present = append(present, target{obj: secret, ri: ri})
		} else if !apierrors.IsNotFound(err) {
			return objErr("read", secret, err)
		}
	}
	// The queue webhook goes first: with serve gone and the webhook left,
	// every queue write would be refused (failurePolicy Fail).
	sort.SliceStable(present, func(i, j int) bool {
		return present[i].obj.GetKind() == "ValidatingWebhookConfiguration" && present[j].obj.GetKind() != "ValidatingWebhookConfiguration"
	})
	// The Roles of install --slurm-namespaces, wherever they are, go
	// first: they name serve's ServiceAccount.
	roles, err := slurmKeyTargets(ctx, o.dyn, nil)
	if err != nil {
		return err
	}
	present = append(roles, present...)
	if len(present) == 0 {
		fmt.Fprintln(o.Out, "nothing to uninstall")
		return nil
	}

	// Refuse before deleting anything, so a refusal leaves a working install.
	// The built-in queues never block: they cannot be deleted one by one
	// (the admission policies refuse it, and serve would create them
	// again), so without this no uninstall could succeed without --force.
	withCRD := map[string]string{} // CRD name -> the built-in objects that go with it
	for _, t := range present {
		if t.obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		example, builtIn, err := firstObject(ctx, o.dyn, t.obj)
		if err != nil {
			return err
		}
		if example != "" && !o.Force {
			return fmt.Errorf("CRD %s still holds objects (e.g. %s): delete them first, or pass --force to delete them with the CRD", t.obj.GetName(), example)
		}
		if len(builtIn) > 0 {
			withCRD[t.obj.GetName()] = strings.Join(builtIn, ", ")
		}
	}
	show := func(t target) string {
		s := ref(t.obj)
		if b := withCRD[t.obj.GetName()]; b != "" && t.obj.GetKind() == "CustomResourceDefinition" {
			s += " (with the built-in " + b + ")"
		}
		return s
	}

	if !o.Yes && !o.dryServer {
		fmt.Fprintln(o.Out, "This deletes:")
		for _, t := range present {
			fmt.Fprintln(o.Out, "  "+show(t))
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
	opts := metav1.DeleteOptions{PropagationPolicy: &policy}
	suffix := ""
	if o.dryServer {
		opts.DryRun = []string{metav1.DryRunAll}
		suffix = " (server dry run)"
	}
	for _, t := range present {
		err := t.ri.Delete(ctx, t.obj.GetName(), opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return objErr("delete", t.obj, err)
		}
		fmt.Fprintf(o.Out, "%s deleted%s\n", show(t), suffix)
	}
	return nil
}

// withBothModes adds to objs, after its last policy, the policies and
// bindings of the per-queue mode that the plan (index mode) does not name
// alike: the two modes differ since the queue webhook took over the index
// mode's queue rules, and uninstall removes either.
func withBothModes(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	perQueue, err := manifests.PolicyObjects(keys.AdmissionModePerQueue)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	last := -1
	for i, u := range objs {
		have[u.GetKind()+"/"+u.GetName()] = true
		if u.GroupVersionKind().Group == vapGV.Group {
			last = i
		}
	}
	var add []*unstructured.Unstructured
	for _, u := range perQueue {
		if !have[u.GetKind()+"/"+u.GetName()] {
			add = append(add, u)
		}
	}
	out := append(append([]*unstructured.Unstructured{}, objs[:last+1]...), add...)
	return append(out, objs[last+1:]...), nil
}

// builtIn names, per CRD, the objects that exist in every installation
// and cannot be deleted on their own: serve creates the queues root and
// default, and the admission policies refuse to delete them.
var builtIn = map[string]map[string]bool{
	"queues.scheduling.volcano.sh": {keys.RootQueue: true, keys.DefaultQueue: true},
	// The admission queue indexes, install's and serve's.
	"queueindexes.admission.kubectl-vc.io": queueIndexNames(),
}

// queueIndexNames are the QueueIndexes of this release and of earlier ones.
func queueIndexNames() map[string]bool {
	out := map[string]bool{}
	for _, n := range everyQueueIndex() {
		out[n] = true
	}
	return out
}

// firstObject returns "kind namespace/name" of one object the CRD holds
// that is not built in, or "" when it holds none; and the built-in ones it
// holds ("queue root").
func firstObject(ctx context.Context, dyn dynamic.Interface, crd *unstructured.Unstructured) (string, []string, error) {
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
		return "", nil, nil
	}
	// One more than the built-in objects is enough to find one that is not.
	skip := builtIn[crd.GetName()]
	list, err := dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural}).
		List(ctx, metav1.ListOptions{Limit: int64(len(skip) + 1)})
	if apierrors.IsNotFound(err) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, namedErr("list the objects of", ref(crd), err)
	}
	var found []string
	for _, it := range list.Items {
		name := it.GetName()
		if ns := it.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		if it.GetNamespace() == "" && skip[it.GetName()] {
			found = append(found, strings.ToLower(kind)+" "+name)
			continue
		}
		return strings.ToLower(kind) + " " + name, found, nil
	}
	return "", found, nil
}
