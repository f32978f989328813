package install

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/kubectl/pkg/util/templates"

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
	// WebhookCAFile is --webhook-ca-file, read into WebhookCABundle by
	// Complete.
	WebhookCAFile string

	dryServer bool
	// imageSet records that --image was given, even empty.
	imageSet bool
	// webhookMode records that the index mode was chosen by --webhook-url.
	webhookMode bool

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
			it and uninstall never deletes it. Volcano's HyperNode CRD is applied only where
			the cluster has none: one that Volcano (or anyone but kubectl-vc) installed is
			left as it is, by install and by uninstall.

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
			The rules that need other queues (a PodGroup only in an Open queue, a Job only
			in a leaf queue, a queue within its parent) come in two modes, --admission:
			"index" reads the small queue index serve's queueindex controller keeps, at the
			same cost whatever the number of queues, and refuses new PodGroups, Jobs and
			queues once the index is a minute old (serve down); "per-queue" needs nothing
			running and goes through every queue for each request. Without the flag install
			keeps the mode installed, else picks index with --serve or where serve's
			Deployment exists, else per-queue.
			In index mode serve also checks queue creates and moves (parents, resource
			bounds) as a validating webhook, vc-queue-hierarchy: install points it
			at serve's Service kubectl-vc-serve-webhook, trusting the CA of the Secret
			kubectl-vc-serve-webhook-tls it makes once and keeps, or at --webhook-url (with
			--webhook-ca-file) for a serve outside the cluster, and waits until the API server
			calls it. While serve does not answer, queue creates that name a parent or set
			resources, and changes of parent or resources, are refused.
			The admission policies need admissionregistration.k8s.io/v1
			ValidatingAdmissionPolicy (Kubernetes 1.30 or newer); install refuses to start
			when the server does not serve it.`),
		Example: templates.Examples(`
			# Install the CRDs and the queue lifecycle policies
			kubectl vc install

			# Also run the controllers in the cluster (admission in index mode)
			kubectl vc install --crds --policies --serve

			# serve runs outside the cluster (kubectl vc serve --webhook-bind-address=:9443
			# --webhook-cert-dir=DIR): have the policies read its queue index and the API
			# server call its queue webhook
			kubectl vc install --webhook-url=https://10.0.0.5:9443/validate-queues --webhook-ca-file=ca.crt

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
	cmd.Flags().StringVar(&o.Admission, "admission", "", `How the policies check rules that need other queues: "index" (one lookup per request whatever the number of queues; serve's queueindex controller must run, or creates are refused), "per-queue" (nothing to run; each request costs in proportion to the number of queues). Default: the mode installed already, else index with --serve or where serve's Deployment exists, else per-queue`)
	cmd.Flags().BoolVar(&o.RBAC, "rbac", false, "Install the ServiceAccount and RBAC of 'serve'")
	cmd.Flags().BoolVar(&o.Serve, "serve", false, "Install 'serve' (its Deployment, metrics Service and RBAC)")
	cmd.Flags().BoolVar(&o.ServiceMonitor, "service-monitor", false, "With --serve: also a Prometheus Operator ServiceMonitor that scrapes serve's metrics over HTTPS with Prometheus's ServiceAccount token (the cluster must serve monitoring.coreos.com/v1 ServiceMonitor)")
	cmd.Flags().StringVar(&o.ServeNamespace, "serve-namespace", "", "With --serve or --rbac: the namespace serve runs in and keeps its Lease in (default: where serve is installed, else "+DefaultServeNamespace+"). Created with the restricted Pod Security level if missing; an existing one is left as it is")
	cmd.Flags().StringSliceVar(&o.SlurmNamespaces, "slurm-namespaces", nil, "With --serve or --rbac: the namespaces (comma-separated, each existing) whose Slurm serve acts on through Slinky's objects; serve may get Secrets, and make a NodeSet's pods, claims, Services, PodDisruptionBudgets, ConfigMaps and revisions, only there (a Role in each; serve acts on no NodeSet elsewhere). Every writer of NodeSets, Controllers, RestApis and Services there is trusted with its Slurm key (docs/security.md). Namespaces named before and not now lose the grant")
	cmd.Flags().StringVar(&o.WebhookURL, "webhook-url", "", "Index mode with serve outside the cluster: the https URL where that serve answers the queue webhook (kubectl vc serve --webhook-bind-address), e.g. https://10.0.0.5:9443/validate-queues. Where serve runs in the cluster the webhook goes through its Service")
	cmd.Flags().StringVar(&o.WebhookCAFile, "webhook-ca-file", "", "With --webhook-url: a PEM file of the CA that signed the certificate of that serve (its --webhook-cert-dir); without it the API server trusts its own roots")
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
	if o.WebhookURL != "" && o.Admission == "" {
		// Only the index mode has a webhook to point somewhere.
		o.Admission = keys.AdmissionModeIndex
		o.webhookMode = true
	}
	if o.WebhookCAFile != "" {
		b, err := os.ReadFile(o.WebhookCAFile)
		if err != nil {
			return util.UsageErrorf("--webhook-ca-file: %v", err)
		}
		o.WebhookCABundle = b
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
	if err := o.validateWebhook(); err != nil {
		return err
	}
	switch o.Admission {
	case "", keys.AdmissionModeIndex, keys.AdmissionModePerQueue:
	default:
		return util.UsageErrorf("invalid --admission %q: use %s or %s", o.Admission, keys.AdmissionModeIndex, keys.AdmissionModePerQueue)
	}
	if o.Admission != "" && !o.Policies {
		return util.UsageErrorf("--admission is the mode of the admission policies: use it with --policies (or without selection flags)")
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

// validateWebhook checks --webhook-url and --webhook-ca-file.
func (o *Options) validateWebhook() error {
	if o.WebhookURL != "" {
		if err := validateWebhookURL(o.WebhookURL); err != nil {
			return util.UsageErrorf("invalid --webhook-url %q: %v", o.WebhookURL, err)
		}
		switch {
		case o.Serve:
			return util.UsageErrorf("--webhook-url is for a serve outside the cluster: with --serve the webhook goes through serve's Service")
		case !o.Policies:
			return util.UsageErrorf("--webhook-url is where the index mode's queue webhook points: use it with --policies (or without selection flags)")
		case o.Admission == keys.AdmissionModePerQueue && !o.webhookMode:
			return util.UsageErrorf("--webhook-url is for --admission=%s: the %s mode has no webhook", keys.AdmissionModeIndex, keys.AdmissionModePerQueue)
		}
	}
	if len(o.WebhookCABundle) > 0 || o.WebhookCAFile != "" {
		if o.WebhookURL == "" {
			return util.UsageErrorf("--webhook-ca-file is the CA of the serve --webhook-url points at: use it with --webhook-url")
		}
		if err := validateCABundle(o.WebhookCABundle); err != nil {
			what := "the webhook CA"
			if o.WebhookCAFile != "" {
				what = o.WebhookCAFile
			}
			return util.UsageErrorf("invalid --webhook-ca-file: %s %v", what, err)
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

// resolveWebhook finds where the index mode's queue webhook points and,
// where serve runs in the cluster (or is being installed: its pods mount
// it), reads or makes the Secret of its certificate, whose CA becomes the
// webhook's caBundle. Index mode with no serve to call is refused here,
// before anything is written.
func (o *Options) resolveWebhook(ctx context.Context) (*webhookSecret, error) {
	webhook := o.Policies && o.Admission == keys.AdmissionModeIndex && o.WebhookURL == ""
	if !webhook && !o.Serve {
		return nil, nil
	}
	if o.ServeNamespace == "" {
		ns, err := installedServeNamespace(ctx, o.dyn)
		if err != nil {
			return nil, err
		}
		o.ServeNamespace = ns
	}
	if webhook && !o.Serve {
		ok, err := serveInCluster(ctx, o.dyn, o.ServeNamespace)
		if err != nil {
			return nil, err
		}
		if !ok {
			// A serve outside the cluster that an earlier install pointed
			// the webhook at stays where it is: a plain 'install' keeps it.
			if url, ca, found, err := installedWebhookURL(ctx, o.dyn); err != nil {
				return nil, err
			} else if found {
				o.WebhookURL, o.WebhookCABundle = url, ca
				return nil, nil
			}
			return nil, fmt.Errorf("admission mode %s needs serve to answer its queue webhook, and serve is not installed (no deployment %s/%s): pass --serve, or --webhook-url (and --webhook-ca-file) of a kubectl vc serve running elsewhere with --webhook-bind-address, or --admission=%s",
				keys.AdmissionModeIndex, o.ServeNamespace, manifests.ServeDeployment, keys.AdmissionModePerQueue)
		}
	}
	secret, err := readWebhookSecret(ctx, o.dyn, o.ServeNamespace, time.Now())
	if err != nil {
		return nil, err
	}
	if webhook {
		o.WebhookCABundle = secret.cert.CA
	}
	return secret, nil
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
	if o.webhookMode && !o.Print {
		fmt.Fprintf(o.ErrOut, "note: admission mode %s: --webhook-url points its queue webhook at a serve outside the cluster\n", keys.AdmissionModeIndex)
	}
	if o.Policies && !o.Print && o.Admission == "" {
		mode, why, err := o.admissionMode(ctx)
		if err != nil {
			return err
		}
		o.Admission = mode
		fmt.Fprintf(o.ErrOut, "note: admission mode %s: %s\n", mode, why)
	}
	var secret *webhookSecret
	if !o.Print {
		var err error
		if secret, err = o.resolveWebhook(ctx); err != nil {
			return err
		}
	}
	plan, err := newPlan(o.Selection, o.image())
	if err != nil {
		return err
	}
	webhook := o.Policies && o.Admission == keys.AdmissionModeIndex
	if o.Print && (o.Serve || webhook && o.WebhookURL == "") {
		plan.Notes = append(plan.Notes, fmt.Sprintf("the Secret %s (serve's webhook certificate) is not printed, and the webhook configuration %s has no caBundle: create the Secret (type kubernetes.io/tls with tls.crt, tls.key and ca.crt for %s) and set the caBundle to its ca.crt, or let kubectl vc install make them (docs/install.md)",
			keys.QueueWebhookSecretName, keys.QueueWebhookConfigName, strings.Join(webhookDNSNames(o.serveNamespace()), " and ")))
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
	objects := plan.Objects
	// In index mode the indexes are written from the queues there are
	// before any policy reads them (they are applied first, 05-*), so that
	// the policies never see an empty or stale index.
	var indexes []string
	for _, u := range objects {
		if u.GetKind() == "QueueIndex" {
			indexes = append(indexes, u.GetName())
		}
	}
	// serve's pods mount the webhook's Secret: it is written as soon as
	// its namespace exists, before the Deployment.
	writeSecret := func() error {
		if secret == nil {
			return nil
		}
		s := secret
		secret = nil
		return s.write(ctx, o.dyn, o.dryServer, o.Out)
	}
	if secret != nil {
		if _, err := o.dyn.Resource(namespaceGVR).Get(ctx, secret.ns, metav1.GetOptions{}); err == nil {
			if err := writeSecret(); err != nil {
				return err
			}
		}
	}
	policies, indexed, hooked := false, false, false
	for _, u := range objects {
		if !indexed && o.Admission == keys.AdmissionModeIndex && !o.dryServer && u.GroupVersionKind().Group == vapGV.Group {
			if err := indexQueues(ctx, o.dyn, o.mapper, indexes, o.Timeout, o.Out); err != nil {
				return err
			}
			indexed = true
		}
		if err := a.apply(ctx, u, o.Out); err != nil {
			return err
		}
		policies = policies || u.GroupVersionKind() == vapGV.WithKind("ValidatingAdmissionPolicy")
		hooked = hooked || u.GetKind() == "ValidatingWebhookConfiguration"
		if u.GetKind() == "Namespace" && secret != nil && u.GetName() == secret.ns {
			if err := writeSecret(); err != nil {
				return err
			}
		}
	}
	if err := writeSecret(); err != nil {
		return err
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
	if o.Policies {
		if err := prunePolicies(ctx, o.dyn, objects, o.Admission, o.dryServer, o.Out); err != nil {
			return err
		}
		// Nothing reads an index in per-queue mode: without one, serve's
		// queueindex controller writes nothing either. In index mode the
		// indexes of earlier releases that serve's webhook replaced go.
		if err := pruneIndexes(ctx, o.dyn, indexes, o.Admission, o.dryServer, o.Out); err != nil {
			return err
		}
	}
	if policies && !o.dryServer {
		// Applied is not enforced: the API server loads policies and their
		// params a moment later, refusing requests meanwhile, and calls a
		// webhook only once it answers (probe.go).
		where := ""
		if hooked {
			where = webhookWhere(o.Selection)
		}
		return waitPolicies(ctx, o.dyn, o.mapper, o.Timeout, where, o.ErrOut)
	}
	return nil
}
