// Package nodeset is the NodeSet controller of 'kubectl vc serve': it runs
// Slinky NodeSets (slinky.slurm.net/v1beta1), i.e. keeps one pod per Slurm
// compute node with stable ordinals, and never deletes a pod whose Slurm
// node still runs jobs: a pod leaving (scale-in, update) is cordoned, its
// node drained in Slurm, and the pod deleted only once Slurm says drained.
package nodeset

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/spf13/pflag"
	"golang.org/x/time/rate"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset/podcontrol"
)

// clientOrNil is the target's client, or nil for no target.
func (t *slurmTarget) clientOrNil() slurm.Client {
	if t == nil {
		return nil
	}
	return t.client
}

// Name is the controller's name for --controllers.
const Name = "nodeset"

// FieldManager owns what this controller applies (Service, PDB, status).
const FieldManager = "nodeset-controller"

// Config is what the controller needs beyond the manager's shared options.
type Config struct {
	// Slurm reaches the Slurm cluster of the NodeSets.
	Slurm slurm.Client
	// DrainPoll is how soon a NodeSet waiting for a Slurm drain is synced
	// again. Default 5s.
	DrainPoll time.Duration
	// Resync refreshes Slurm state counts in status, and is the longest a
	// failing NodeSet waits for its next try. Default 30s.
	Resync time.Duration
	// ExpectationsTimeout unblocks a NodeSet whose pod events were lost. Default 5m.
	ExpectationsTimeout time.Duration
	// RESTTransport carries the requests to slurmrestd (nil: Go's default).
	// Tests outside a node route a Service's cluster IP to a local
	// slurmrestd with it.
	RESTTransport http.RoundTripper
	// TokenLifetime of the JWTs the controller signs (default 15 minutes,
	// renewed in the last fifth); tests shorten it to see renewal.
	TokenLifetime time.Duration
	// KeyTTL is how long a JWT key read from a Secret is used before the
	// Secret is read again. Default 1m; a refused token drops it at once.
	KeyTTL time.Duration
	// CRDPoll is how often the controller asks whether NodeSets are served
	// while they are not. Default 30s.
	CRDPoll time.Duration
	// ClientIdle is how long a slurmrestd client no NodeSet asked for is
	// kept (its nodes charged to the budget) before it is dropped.
	// Default 5m: ten resyncs.
	ClientIdle time.Duration
}

func init() {
	if err := framework.RegisterController(Name, func() framework.Controller { return New(Config{}) }); err != nil {
		panic(err)
	}
}

// Controller is the NodeSet controller.
type Controller struct {
	cfg Config
	// clusterDomain is the cluster's DNS domain, in the pods' DNS search
	// (slurmdpod.go).
	clusterDomain string

	kube kubernetes.Interface
	// podControl makes every pod and claim write (podcontrol).
	podControl podcontrol.Interface
	vc         versioned.Interface

	nodeSets  slinkylisters.NodeSetLister
	pods      corelisters.PodLister
	podIndex  cache.Indexer
	revisions appslisters.ControllerRevisionLister
	nodes     corelisters.NodeLister
	// services and pdbs are serve's own (labelled ownSelector).
	services corelisters.ServiceLister
	pdbs     policylisters.PodDisruptionBudgetLister
	// restapiServices are the Services of the --slurm-namespaces, by
	// namespace: where Slinky's RestApis are followed (owned.go).
	restapiServices map[string]corelisters.ServiceLister
	// configMaps holds, of each ConfigMap, its metadata and the digest of
	// its sshd_config (keepSSHConfig).
	configMaps corelisters.ConfigMapLister
	synced     []cache.InformerSynced

	wq       workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	// Set by the controller's flags (AddFlags). The Slurm settings are
	// used only when Config.Slurm is nil: serve's case.
	workers int
	flags   *slurmFlags
	// propagatedConditions are the Kubernetes node condition types whose
	// reason and message word the drain of a cordoned node's pods
	// (--propagated-node-conditions).
	propagatedConditions []string
	// source finds each NodeSet's Slurm (slurmsource.go).
	source *slurmSource
	// budget bounds what every slurmrestd client keeps together.
	budget *slurm.NodeBudget
	// opt and the CRD state: the NodeSet informers are set up only once
	// the API server serves NodeSets (nodeSetsServed), Slinky's
	// Controller and RestApi informers once it serves those.
	opt *framework.ControllerOption

	exp     *expectations
	metrics *metrics
	// claimOwners: the generation each NodeSet's claims were last put
	// right for (storage.go).
	claimOwners claimOwnersSynced
}

// New returns a controller; Initialize wires it to the manager's informers.
func New(cfg Config) *Controller {
	if cfg.DrainPoll == 0 {
		cfg.DrainPoll = 5 * time.Second
	}
	if cfg.Resync == 0 {
		cfg.Resync = 30 * time.Second
	}
	if cfg.ExpectationsTimeout == 0 {
		cfg.ExpectationsTimeout = 5 * time.Minute
	}
	if cfg.KeyTTL == 0 {
		cfg.KeyTTL = time.Minute
	}
	if cfg.CRDPoll == 0 {
		cfg.CRDPoll = 30 * time.Second
	}
	if cfg.ClientIdle == 0 {
		cfg.ClientIdle = 5 * time.Minute
	}
	// Unregistered until Initialize registers them with the manager's.
	m, _ := newMetrics(nil)
	return &Controller{cfg: cfg, exp: newExpectations(cfg.ExpectationsTimeout), metrics: m, clusterDomain: clusterDomainFrom("/etc/resolv.conf"),
		workers: framework.DefaultWorkers, flags: &slurmFlags{conf: os.Getenv("SLURM_CONF"), nodeBudget: slurm.DefaultNodeBudget}}
}

// AddFlags implements framework.Controller.
func (c *Controller) AddFlags(fs *pflag.FlagSet) {
	framework.WorkersFlag(fs, &c.workers, Name)
	f := c.flags
	fs.StringVar(&f.conf, "slurm-conf", f.conf, "slurm.conf of the Slurm cluster: reach Slurm with scontrol, sinfo and squeue (default: $SLURM_CONF; an empty value turns that off)")
	fs.StringVar(&f.binDir, "slurm-bin-dir", f.binDir, "Directory of scontrol, sinfo and squeue: reach Slurm with them (default: search PATH)")
	fs.StringVar(&f.restURL, "slurm-rest-url", "", "slurmrestd to reach Slurm at for every NodeSet (e.g. http://10.0.0.5:6820), instead of finding it through Slinky's Controller and RestApi")
	fs.StringVar(&f.jwtKeyFile, "slurm-jwt-key-file", "", "With --slurm-rest-url: the cluster's JWT HS256 key (jwt_hs256.key), to sign tokens with")
	fs.StringVar(&f.tokenFile, "slurm-token-file", "", "With --slurm-rest-url: a file holding a token (as 'scontrol token' prints it), read again when it changes")
	fs.StringVar(&f.jwtUser, "slurm-jwt-user", slurm.DefaultTokenUser, "Slurm user the signed tokens speak for (claim sun)")
	fs.StringVar(&f.restVersion, "slurm-rest-api-version", "", fmt.Sprintf("slurmrestd API version to use (one of %s; default: the newest it serves)", strings.Join(slurm.RESTVersions, ", ")))
	fs.IntVar(&f.nodeBudget, "slurm-node-budget", f.nodeBudget, "Slurm nodes and running jobs that every slurmrestd client of serve may keep together; a refresh past it fails until room is made (see docs/security.md)")
	c.addTrustFlags(fs)
	fs.StringSliceVar(&c.propagatedConditions, "propagated-node-conditions", c.propagatedConditions,
		"Kubernetes node condition types (e.g. KernelDeadlock,GPUProblem) whose reason and message, where True, become the Slurm drain reason of the NodeSet pods of a cordoned node, as Slinky's operator's flag of that name; a node's nodeset.slinky.slurm.net/node-cordon-reason annotation comes first")
}

// Validate implements framework.Controller.
func (c *Controller) Validate() error {
	if err := framework.ValidateWorkers(c.workers, Name); err != nil {
		return err
	}
	for _, t := range c.propagatedConditions {
		if t == "" || len(t) > maxConditionTypeLen {
			return fmt.Errorf("--propagated-node-conditions: %q is not a node condition type (1 to %d characters)", t, maxConditionTypeLen)
		}
	}
	return c.flags.validate()
}

// Name implements framework.Controller.
func (c *Controller) Name() string { return Name }

// PendingExpectations says whether the controller still keeps an
// expectations record for the NodeSet namespace/name (for tests and
// debugging: a deleted NodeSet must leave none behind).
func (c *Controller) PendingExpectations(key string) bool { return c.exp.has(key) }

// Preflight implements framework.Preflighter: a way to Slurm the flags
// chose must be usable before serve starts: the Slurm client commands
// (--slurm-conf, --slurm-bin-dir) must be found, and --slurm-rest-url's key
// or token file read. With neither, each NodeSet finds its Slurm at sync
// time (through Slinky's objects) and says in its status when it cannot.
func (c *Controller) Preflight() error {
	t, err := c.fixedTarget()
	if err != nil {
		return fmt.Errorf("the NodeSet controller cannot reach Slurm: %w", err)
	}
	ch, ok := t.clientOrNil().(interface{ Check() error })
	if !ok {
		return nil
	}
	if err := ch.Check(); err != nil {
		return fmt.Errorf("the NodeSet controller needs the Slurm client commands and a munge key (%v): "+
			"run it where Slurm's client and munge are ('kubectl vc serve --controllers=nodeset', --slurm-bin-dir), "+
			"reach slurmrestd instead (--slurm-rest-url), or leave it out with --controllers (e.g. --controllers=queue,podgroup)", err)
	}
	return nil
}

// retryLimiter is client-go's default controller rate limiter with the
// per-NodeSet backoff capped at resync instead of 1000 s. A NodeSet fails
// its syncs while something it needs is missing or down (a Secret, which
// serve does not watch, or slurmrestd); each of its own status writes and
// each watched object created on the way adds a failure, so an uncapped
// backoff can pass minutes after a dozen quick ones. Capped, the NodeSet is
// retried as often as a healthy one is resynced: a fix is seen within that.
func retryLimiter(resync time.Duration) workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, resync),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Initialize implements framework.Controller.
func (c *Controller) Initialize(ctx context.Context, opt *framework.ControllerOption) error {
	c.kube = opt.KubeClient
	c.podControl = podcontrol.New(opt.KubeClient, FieldManager)
	c.vc = opt.VolcanoClient
	c.recorder = boundedRecorder{opt.Recorder}
	c.opt = opt
	c.budget = slurm.NewNodeBudget(c.flags.nodeBudget)
	fixed, err := c.fixedTarget()
	if err != nil {
		return err
	}
	c.source = &slurmSource{cfg: &c.cfg, flags: c.flags, fixed: fixed, budget: c.budget,
		clients: map[string]*keptClient{},
		keys: newKeyCache(c.cfg.KeyTTL, func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			return c.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		})}
	m, err := newMetrics(opt.MetricsRegistry)
	if err != nil {
		return err
	}
	c.metrics = m
	c.wq = workqueue.NewTypedRateLimitingQueueWithConfig(
		retryLimiter(c.cfg.Resync),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: Name, MetricsProvider: opt.WorkqueueMetrics},
	)
	kinds, err := c.servedKinds(ctx)
	if err != nil {
		return err
	}
	if !kinds[resNodeSets] {
		// Run waits for the CRD: informers of a kind the server does not
		// serve would log a failed list every few seconds.
		return nil
	}
	return c.watch(kinds)
}

// Run implements framework.Controller.
func (c *Controller) Run(ctx context.Context) {
	stopCh := ctx.Done()
	defer c.wq.ShutDown()
	if !c.waitForNodeSets(ctx) {
		return
	}
	if !cache.WaitForCacheSync(stopCh, c.synced...) {
		return
	}
	slurmVia := "each NodeSet's slurmrestd, found through Slinky's objects"
	if t := c.source.fixed; t != nil {
		slurmVia = t.via
	}
	logger := klog.FromContext(ctx)
	logger.Info("nodeset controller started", "workers", c.workers, "slurm", slurmVia)
	c.logTrust(logger)
	// The kept JWT keys no Controller names any more are dropped.
	go wait.Until(c.source.pruneKeys, c.cfg.KeyTTL, stopCh)
	// Errors are retried rate-limited without a limit: a NodeSet waits on
	// Slurm, which may be away for a while.
	framework.Loop[string]{
		Queue: c.wq, Workers: c.workers, MaxRequeue: -1,
		Sync: func(ctx context.Context, key string) error {
			requeue, err := c.sync(ctx, key)
			if err == nil && requeue > 0 {
				c.wq.AddAfter(key, requeue)
			}
			return err
		},
		Retrying: func(ctx context.Context, _ string, err error) {
			klog.FromContext(ctx).Error(err, "syncing NodeSet")
		},
	}.Run(ctx)
}

// Interface checks.
var (
	_ framework.Controller  = &Controller{}
	_ framework.Preflighter = &Controller{}
)
