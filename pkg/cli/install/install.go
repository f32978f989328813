package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/kubectl/pkg/util/templates"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// Options holds the flags and inputs of 'install'.
type Options struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Selection
	Print   bool
	DryRun  string
	Timeout time.Duration
	// Image is the image of the serve Deployment; empty means
	// DefaultImage(), the image of this binary's version.
	Image string

	dryServer bool
	// imageSet records that --image was given, even empty.
	imageSet bool

	// The clients, resolved by Complete unless --print (which never
	// contacts the cluster).
	disc   discovery.DiscoveryInterface
	dyn    dynamic.Interface
	ext    apiextensionsclient.Interface
	mapper meta.RESTMapper
}

// NewCmd returns the 'install' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Factory: f, DryRun: "none", Timeout: time.Minute}
	cmd := &cobra.Command{
		Use:   "install [--crds] [--policies] [--rbac] [--serve]",
		Short: "Install the CRDs, admission policies and serve manifests into the cluster",
		Long: templates.LongDesc(`
			Install what kubectl-vc needs in a cluster, from manifests embedded in this binary.

			Without selection flags it installs the CRDs and the admission policies, which is
			what the queue and podgroup commands need. --rbac adds the ServiceAccount and RBAC
			of 'serve' and the ClusterRole kubectl-vc-metrics-reader; --serve adds its
			Deployment and the Service of its HTTPS metrics port too (and implies --rbac);
			--service-monitor a Prometheus Operator ServiceMonitor for them. Volcano's Job CRD
			is left to Volcano, whose job controller alone runs Jobs: install never applies
			it and uninstall never deletes it.

			The Deployment runs the image of this binary's own version,
			ghcr.io/kubectl-vc/kubectl-vc:<version> ('kubectl vc version' shows it), never
			:latest; --image names another. A dev build's version is no published image: build
			one with 'make image', load it into the nodes (ctr -n k8s.io images import
			dist/kubectl-vc-image.tar) or push it, and pass it with --image. The Deployment
			runs the queue, podgroup and NodeSet controllers; the NodeSet controller reaches
			each NodeSet's Slurm through its slurmrestd, found as Slinky's operator finds it
			(Controller, RestApi, the JWT key Secret), only in the namespaces
			--slurm-namespaces names, and waits quietly while the cluster serves no NodeSets.

			Objects are server-side applied with the field manager 'kubectl-vc', so running
			install again is safe: each object is reported as created, configured or
			unchanged. CRDs are applied first and install waits until they are Established;
			after applying the admission policies it waits until the API server enforces
			them (dry-run requests only), so a queue created right after install is checked
			and not refused while the server is still loading them.
			The admission policies need admissionregistration.k8s.io/v1
			ValidatingAdmissionPolicy (Kubernetes 1.30 or newer); install refuses to start
			when the server does not serve it.`),
		Example: templates.Examples(`
			# Install the CRDs and the queue lifecycle policies
			kubectl vc install

			# Also run the controllers in the cluster
			kubectl vc install --crds --policies --serve

			# A dev build: deploy the image 'make image' built and loaded into the nodes
			kubectl vc install --serve --image ghcr.io/kubectl-vc/kubectl-vc:$(git describe --tags --always --dirty)

			# See what would change, without changing anything
			kubectl vc install --dry-run=server

			# Beside Slinky: let serve act on the Slurm of the NodeSets in namespace slurm
			kubectl vc install --serve --slurm-namespaces=slurm

			# With a ServiceMonitor for the Prometheus Operator
			kubectl vc install --serve --service-monitor

			# Write the manifests for a GitOps repository instead of applying them
			kubectl vc install --crds --policies --serve --print > kubectl-vc.yaml`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.imageSet = cmd.Flags().Changed("image")
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.CRDs, "crds", false, "Install the CustomResourceDefinitions")
	cmd.Flags().BoolVar(&o.Policies, "policies", false, "Install the queue lifecycle ValidatingAdmissionPolicies and their bindings")
	cmd.Flags().BoolVar(&o.RBAC, "rbac", false, "Install the ServiceAccount and RBAC of 'serve'")
	cmd.Flags().BoolVar(&o.Serve, "serve", false, "Install 'serve' (its Deployment, metrics Service and RBAC)")
	cmd.Flags().BoolVar(&o.ServiceMonitor, "service-monitor", false, "With --serve: also a Prometheus Operator ServiceMonitor that scrapes serve's metrics over HTTPS with Prometheus's ServiceAccount token (the cluster must serve monitoring.coreos.com/v1 ServiceMonitor)")
	cmd.Flags().StringVar(&o.ServeNamespace, "serve-namespace", "", "With --serve or --rbac: the namespace serve runs in and keeps its Lease in (default: where serve is installed, else "+DefaultServeNamespace+"). Created with the restricted Pod Security level if missing; an existing one is left as it is")
	cmd.Flags().StringSliceVar(&o.SlurmNamespaces, "slurm-namespaces", nil, "With --serve or --rbac: the namespaces (comma-separated, each existing) whose Slurm serve acts on through Slinky's objects; serve may get Secrets only there (a Role in each). Every writer of NodeSets, Controllers, RestApis and Services there is trusted with its Slurm key (docs/security.md). Namespaces named before and not now lose the grant")
	cmd.Flags().StringVar(&o.Image, "image", "", "Image of the serve Deployment (default: ghcr.io/kubectl-vc/kubectl-vc:<version of this binary>); a dev build passes the image it built with 'make image'")
	cmd.Flags().BoolVar(&o.Print, "print", false, "Print the selected manifests as YAML instead of applying them")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", o.DryRun, `Must be "none" or "server". With "server", the server checks every object but persists nothing`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "server"
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the CRDs to be Established, and then for the admission policies to be in force")
	return cmd
}

// Complete fills in the default selection and, unless --print, resolves
// the clients.
func (o *Options) Complete() error {
	if o.Selection.Empty() {
		o.CRDs, o.Policies = true, true
	}
	if o.Serve {
		o.RBAC = true
	}
	if o.Print {
		return nil
	}
	cfg, err := o.Factory.RESTConfig()
	if err != nil {
		return err
	}
	if o.disc, err = o.Factory.ToDiscoveryClient(); err != nil {
		return err
	}
	if o.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if o.ext, err = apiextensionsclient.NewForConfig(cfg); err != nil {
		return err
	}
	o.mapper, err = o.Factory.ToRESTMapper()
	return err
}

// Validate checks the flags.
func (o *Options) Validate() error {
	switch o.DryRun {
	case "none", "":
	case "server":
		o.dryServer = true
	case "client":
		return util.UsageErrorf("--dry-run=client is not supported: use --print to see the manifests, or --dry-run=server")
	default:
		return util.UsageErrorf("invalid --dry-run %q: use none or server", o.DryRun)
	}
	if o.Print && o.dryServer {
		return util.UsageErrorf("--print and --dry-run=server cannot be combined: --print never contacts the cluster")
	}
	if o.Timeout <= 0 {
		return util.UsageErrorf("--timeout must be positive")
	}
	if o.ServeNamespace != "" {
		if !o.RBAC {
			return util.UsageErrorf("--serve-namespace is where serve runs: use it with --serve or --rbac")
		}
		if errs := validation.IsDNS1123Label(o.ServeNamespace); len(errs) > 0 {
			return util.UsageErrorf("invalid --serve-namespace %q: %s", o.ServeNamespace, strings.Join(errs, "; "))
		}
	}
	if len(o.SlurmNamespaces) > 0 && !o.RBAC {
		return util.UsageErrorf("--slurm-namespaces grants serve the Secrets of those namespaces: use it with --serve or --rbac")
	}
	for _, ns := range o.SlurmNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return util.UsageErrorf("invalid --slurm-namespaces %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if o.ServiceMonitor && !o.Serve {
		return util.UsageErrorf("--service-monitor scrapes serve's metrics: use it with --serve")
	}
	if o.Image != "" || o.imageSet {
		if !o.Serve {
			return util.UsageErrorf("--image is the image of the serve Deployment: use it with --serve")
		}
		if err := ValidateImage(o.Image); err != nil {
			return util.UsageErrorf("invalid --image: %v", err)
		}
	} else if o.Serve {
		if err := ValidateImage(DefaultImage()); err != nil {
			return util.UsageErrorf("the version of this build makes no image name (%v): pass --image", err)
		}
	}
	return nil
}

// image is the image the serve Deployment runs.
func (o *Options) image() string {
	if o.Image != "" {
		return o.Image
	}
	return DefaultImage()
}

// installed tells whether serve's ClusterRoleBinding exists (a previous
// install --rbac or --serve).
func (o *Options) installed(ctx context.Context) bool {
	_, err := o.dyn.Resource(clusterRoleBindingGVR).Get(ctx, manifests.ServeDeployment, metav1.GetOptions{})
	return err == nil
}

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Run prints or applies the selection.
func (o *Options) Run(ctx context.Context) error {
	if o.RBAC && !o.Print {
		// serve stays where it is: a second namespace would leave the first
		// install's pods running without their binding.
		have, err := installedServeNamespace(ctx, o.dyn)
		if err != nil {
			return err
		}
		switch {
		case o.ServeNamespace == "":
			o.ServeNamespace = have
		case o.ServeNamespace != have && o.installed(ctx):
			return fmt.Errorf("serve is installed in namespace %s: pass --serve-namespace=%s, or uninstall it first to move it to %s", have, have, o.ServeNamespace)
		}
	}
	plan, err := newPlan(o.Selection, o.image())
	if err != nil {
		return err
	}
	if o.Serve && o.Image == "" {
		if n := imageNote(o.image()); n != "" {
			plan.Notes = append(plan.Notes, n)
		}
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(o.ErrOut, "note: "+n)
	}
	if o.Print {
		return PrintYAML(o.Out, plan.All())
	}
	if o.Policies {
		if err := CheckPolicyAPI(o.disc); err != nil {
			return err
		}
	}
	if o.ServiceMonitor {
		if err := CheckServiceMonitorAPI(o.disc); err != nil {
			return err
		}
	}
	// A Role cannot go into a namespace that does not exist: say so
	// before anything is applied.
	for _, ns := range o.SlurmNamespaces {
		_, err := o.dyn.Resource(namespaceGVR).Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("--slurm-namespaces: namespace %q not found: name the namespace Slinky's Controller, RestApi and NodeSets are in", ns)
		}
		if err != nil {
			return namedErr("read", "namespace "+ns, err)
		}
	}
	a := &applier{dyn: o.dyn, mapper: o.mapper, dryRun: o.dryServer, dryNamespaces: map[string]bool{}}
	for _, u := range plan.CRDs {
		if err := a.apply(ctx, u, o.Out); err != nil {
			return err
		}
	}
	if len(plan.CRDs) > 0 && !o.dryServer {
		for _, u := range plan.CRDs {
			if err := crds.WaitEstablished(ctx, o.ext, u.GetName(), o.Timeout); err != nil {
				return namedErr("wait for", ref(u)+" to be Established", err)
			}
		}
		// The kinds just defined must be found by what follows.
		meta.MaybeResetRESTMapper(o.mapper)
	}
	policies := false
	for _, u := range plan.Objects {
		if err := a.apply(ctx, u, o.Out); err != nil {
			return err
		}
		policies = policies || u.GroupVersionKind() == vapGV.WithKind("ValidatingAdmissionPolicy")
	}
	if o.RBAC {
		keep := map[string]bool{}
		for _, ns := range o.SlurmNamespaces {
			keep[ns] = true
		}
		if err := pruneSlurmKeys(ctx, o.dyn, keep, o.dryServer, o.Out); err != nil {
			return err
		}
	}
	if policies && !o.dryServer {
		// Applied is not enforced: the API server loads policies and their
		// params a moment later, refusing requests meanwhile (probe.go).
		return waitPolicies(ctx, o.dyn, o.mapper, o.Timeout)
	}
	return nil
}

// CheckPolicyAPI refuses clusters whose API server cannot enforce the
// policies, rather than failing halfway through the apply.
func CheckPolicyAPI(disc discovery.DiscoveryInterface) error {
	list, err := disc.ServerResourcesForGroupVersion(vapGV.String())
	if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, memory.ErrCacheNotFound) {
		return fmt.Errorf("discover %s: %s", vapGV, util.Message(err))
	}
	found := map[string]bool{}
	if list != nil {
		for _, r := range list.APIResources {
			found[r.Kind] = true
		}
	}
	if !found["ValidatingAdmissionPolicy"] || !found["ValidatingAdmissionPolicyBinding"] {
		return fmt.Errorf("the API server does not serve %s ValidatingAdmissionPolicy (needs Kubernetes 1.30 or newer): upgrade the cluster, or install without --policies", vapGV)
	}
	return nil
}

// CheckServiceMonitorAPI refuses --service-monitor, before anything is
// applied, where the Prometheus Operator's ServiceMonitor kind is not
// served.
func CheckServiceMonitorAPI(disc discovery.DiscoveryInterface) error {
	list, err := disc.ServerResourcesForGroupVersion(serviceMonitorGV.String())
	// A cached discovery client says a group it does not have with an
	// error of its own.
	if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, memory.ErrCacheNotFound) {
		return fmt.Errorf("discover %s: %s", serviceMonitorGV, util.Message(err))
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Kind == "ServiceMonitor" {
				return nil
			}
		}
	}
	return fmt.Errorf("the API server does not serve %s ServiceMonitor (the Prometheus Operator's CRD): install the Prometheus Operator first, or leave out --service-monitor and point your scraper at the Service %s (docs/security.md)", serviceMonitorGV, manifests.ServeMetricsService)
}

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
func (a *applier) replaceAdditions(ctx context.Context, ri dynamic.ResourceInterface, u, after *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !manifests.Exact(u.GetKind()) || manifests.FirstDifference(manifests.Spec(u), after.Object["spec"], "spec") == "" {
		return after, nil
	}
	fixed := after.DeepCopy()
	fixed.Object["spec"] = runtime.DeepCopyJSONValue(u.Object["spec"])
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
