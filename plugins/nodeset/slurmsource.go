package nodeset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

// How the controller reaches the Slurm of a NodeSet, in this order:
//  1. the client the controller was given (Config.Slurm, for tests);
//  2. serve --slurm-rest-url with --slurm-jwt-key-file or --slurm-token-file:
//     that slurmrestd for every NodeSet;
//  3. serve --slurm-conf or --slurm-bin-dir (or $SLURM_CONF): the Slurm
//     client commands for every NodeSet;
//  4. where the cluster serves Slinky's Controller and RestApi kinds, as
//     Slinky's operator finds it: NodeSet.spec.controllerRef names a
//     Controller in the NodeSet's namespace; the oldest RestApi whose
//     spec.controllerRef names that Controller is served by the Service
//     <restapi>-restapi; the JWT key is in the Secret the Controller's
//     jwtKeyRef (older: jwtHs256KeyRef) selects;
//  5. else the Slurm client commands, when they are on PATH.
// A NodeSet whose Slurm cannot be found gets SlurmReachable=False with a
// reason naming what is missing, and nothing is done to its pods.

// Transports, as status, events and doctor name them.
const (
	TransportREST     = "REST"
	TransportCommands = "commands"
)

// slurmTarget is a NodeSet's Slurm: the client and, for people, how it is
// reached.
type slurmTarget struct {
	client    slurm.Client
	transport string
	// where: the slurmrestd URL, or the slurm.conf the commands read.
	where string
	// via: what named it (a RestApi, a flag).
	via string
}

// describe is the condition message of a reachable Slurm.
func (t *slurmTarget) describe(ctx context.Context) string {
	if r, ok := t.client.(*slurm.REST); ok {
		v, _ := r.Version(ctx)
		return fmt.Sprintf("Slurm node states read over REST %s from %s (%s)", v, t.where, t.via)
	}
	if t.transport == TransportCommands {
		return fmt.Sprintf("Slurm node states read with scontrol, sinfo and squeue (%s)", t.via)
	}
	return "Slurm node states read"
}

func missing(reason, format string, args ...any) error {
	return &slinky.Missing{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// unreachableReason is the condition reason for err.
func unreachableReason(err error) string {
	var m *slinky.Missing
	switch {
	case errors.As(err, &m):
		return m.Reason
	case errors.Is(err, slurm.ErrUnauthorized):
		return "Unauthorized"
	case errors.Is(err, slurm.ErrBudgetSpent):
		return "NodeBudgetSpent"
	default:
		return "RefreshFailed"
	}
}

// slurmFlags are serve's flags that say how to reach Slurm.
type slurmFlags struct {
	conf, binDir string
	restURL      string
	jwtKeyFile   string
	tokenFile    string
	jwtUser      string
	restVersion  string
	// nodeBudget is what every REST client together may keep (pkg/slurm's
	// NodeBudget).
	nodeBudget int
	// namespaces are where serve may act on Slurm (trust.go).
	namespaces []string
}

// commandsChosen: a slurm.conf ($SLURM_CONF or --slurm-conf) or
// --slurm-bin-dir says to use Slurm's commands.
func (f *slurmFlags) commandsChosen() bool { return f.conf != "" || f.binDir != "" }

func (f *slurmFlags) validate() error {
	if err := f.validateNamespaces(); err != nil {
		return err
	}
	if f.nodeBudget < 1 {
		return fmt.Errorf("--slurm-node-budget must be at least 1, not %d", f.nodeBudget)
	}
	if f.restURL == "" {
		if f.jwtKeyFile != "" || f.tokenFile != "" {
			return errors.New("--slurm-jwt-key-file and --slurm-token-file need --slurm-rest-url")
		}
		return nil
	}
	if (f.jwtKeyFile == "") == (f.tokenFile == "") {
		return errors.New("--slurm-rest-url needs exactly one of --slurm-jwt-key-file and --slurm-token-file")
	}
	// $SLURM_CONF in the environment does not count: --slurm-rest-url wins.
	if f.commandsChosen() && (f.conf != os.Getenv("SLURM_CONF") || f.binDir != "") {
		return errors.New("--slurm-rest-url and --slurm-conf/--slurm-bin-dir choose two ways to reach Slurm: give one")
	}
	_, err := slurm.NewREST(slurm.RESTConfig{URL: f.restURL, Token: staticToken{}, Version: f.restVersion})
	return err
}

type staticToken struct{}

func (staticToken) Token(context.Context) (string, error) { return "", nil }

// slurmSource finds and keeps the Slurm clients of NodeSets. Clients are
// kept per slurmrestd URL and key, so every NodeSet of one Slurm cluster
// shares one node cache and one token. Every REST client charges what it
// keeps to one budget: a tenant who names many slurmrestd servers, each
// answering with the most nodes an answer may list, costs serve no more
// than the budget; a client no NodeSet asked for within Config.ClientIdle
// is dropped and gives its share back.
type slurmSource struct {
	cfg   *Config
	flags *slurmFlags
	// fixed is the client of every NodeSet (cases 1 to 3), or nil.
	fixed *slurmTarget
	// slinky reads Slinky's kinds (case 4); nil while they are not served.
	slinky atomic.Pointer[slinkyReader]
	// slinkyChecked is when discovery was last asked for them (under mu).
	slinkyChecked time.Time
	// commands is case 5's client, made once (under mu).
	commands *slurmTarget
	// keys are the JWT keys read from Secrets (keys.go).
	keys *keyCache

	budget *slurm.NodeBudget

	mu      sync.Mutex
	clients map[string]*keptClient
}

// keptClient is a REST client and when a NodeSet last asked for it.
type keptClient struct {
	rest *slurm.REST
	used time.Time
}

// slinkyReader is what case 4 reads, through the shared informers.
type slinkyReader struct {
	controllers slinkylisters.ControllerLister
	restapis    slinkylisters.RestApiLister
}

// commandsTarget is the Slurm client commands as the flags say.
func (c *Controller) commandsTarget() *slurmTarget {
	via := "slurm.conf " + c.flags.conf
	if c.flags.conf == "" {
		via = "the default slurm.conf"
	}
	return &slurmTarget{client: slurm.NewCommands(slurm.CommandsConfig{Conf: c.flags.conf, BinDir: c.flags.binDir}),
		transport: TransportCommands, where: c.flags.conf, via: via}
}

// fixedTarget is the client every NodeSet uses when one is given or chosen
// by flags (cases 1 to 3), or nil.
func (c *Controller) fixedTarget() (*slurmTarget, error) {
	f := c.flags
	switch {
	case c.cfg.Slurm != nil:
		t := &slurmTarget{client: c.cfg.Slurm, via: "given"}
		switch cl := c.cfg.Slurm.(type) {
		case *slurm.REST:
			t.transport, t.where = TransportREST, cl.URL()
		case *slurm.Commands:
			t.transport = TransportCommands
		}
		return t, nil
	case f.restURL != "":
		var tok slurm.TokenSource
		via := "--slurm-rest-url, token from " + f.tokenFile
		if f.jwtKeyFile != "" {
			kt, err := slurm.NewKeyFileToken(f.jwtKeyFile, f.jwtUser)
			if err != nil {
				return nil, fmt.Errorf("--slurm-jwt-key-file: %w", err)
			}
			if c.cfg.TokenLifetime > 0 {
				kt.SetLifetime(c.cfg.TokenLifetime)
			}
			tok, via = kt, "--slurm-rest-url, JWT signed with "+f.jwtKeyFile
		} else {
			tok = slurm.NewFileToken(f.tokenFile)
		}
		cl, err := slurm.NewREST(slurm.RESTConfig{URL: f.restURL, Token: tok, Version: f.restVersion, Transport: c.cfg.RESTTransport,
			Budget: c.budget})
		if err != nil {
			return nil, err
		}
		return &slurmTarget{client: cl, transport: TransportREST, where: cl.URL(), via: via}, nil
	case f.commandsChosen():
		return c.commandsTarget(), nil
	}
	return nil, nil
}

func (c *Controller) applyTokenLifetime(st *slurm.SignedToken) {
	if c.cfg.TokenLifetime > 0 {
		st.SetLifetime(c.cfg.TokenLifetime, c.cfg.TokenLifetime/5)
	}
}

// slurmFor returns the Slurm of a NodeSet (see the order above).
func (c *Controller) slurmFor(ctx context.Context, set *slinkyv1beta1.NodeSet) (*slurmTarget, error) {
	src := c.source
	if src.fixed != nil {
		if err := c.trusted(set.Namespace, false); err != nil {
			return nil, err
		}
		return src.fixed, nil
	}
	if src.slinky.Load() == nil {
		c.laterSlinky(ctx)
	}
	if src.slinky.Load() != nil {
		// Checked before Find: outside the trusted namespaces no Secret
		// is read, no client made.
		if err := c.trusted(set.Namespace, true); err != nil {
			return nil, err
		}
		return c.slinkyTarget(ctx, set)
	}
	if err := c.trusted(set.Namespace, false); err != nil {
		return nil, err
	}
	src.mu.Lock()
	if src.commands == nil {
		src.commands = c.commandsTarget()
	}
	cmds := src.commands
	src.mu.Unlock()
	if err := cmds.client.(*slurm.Commands).Check(); err != nil {
		return nil, missing("NoSlurm", "found no way to reach Slurm: the cluster serves no Slinky Controller and RestApi kinds, "+
			"serve was given no --slurm-rest-url, and the Slurm client commands are missing (%v)", err)
	}
	return cmds, nil
}

// slinkyTarget follows NodeSet → Controller → RestApi → Service, and the
// Controller's key Secret, as Slinky's operator does (pkg/slurm/slinky).
func (c *Controller) slinkyTarget(ctx context.Context, set *slinkyv1beta1.NodeSet) (*slurmTarget, error) {
	ep, err := slinky.Find(ctx, cachedLookup{c}, set)
	if err != nil {
		return nil, err
	}
	if err := keyTrusted(ep); err != nil {
		return nil, err
	}
	url, err := ep.ClusterURL()
	if err != nil {
		return nil, err
	}
	cl, err := c.source.client(url, ep.Key, c)
	if err != nil {
		return nil, err
	}
	return &slurmTarget{client: cl, transport: TransportREST, where: url, via: ep.Describe()}, nil
}

// cachedLookup reads Slinky's objects and the Service from the informers'
// caches and the key Secret with a GET, of which the one key is kept for
// Config.KeyTTL (keys.go; a rotated key is picked up within it, a refused
// token drops it at once): serve never watches Secrets (it would cache
// every Secret of the cluster).
type cachedLookup struct{ c *Controller }

func (l cachedLookup) Controller(_ context.Context, ns, name string) (*slinkyv1beta1.Controller, error) {
	return l.c.source.slinky.Load().controllers.Controllers(ns).Get(name)
}

func (l cachedLookup) RestApis(_ context.Context, ns string) ([]*slinkyv1beta1.RestApi, error) {
	return l.c.source.slinky.Load().restapis.RestApis(ns).List(labels.Everything())
}

func (l cachedLookup) Service(_ context.Context, ns, name string) (*corev1.Service, error) {
	return l.c.restapiService(ns, name)
}

func (l cachedLookup) SecretKey(ctx context.Context, ns, name, key string) (slinky.SecretKey, error) {
	return l.c.source.keys.read(ctx, keyID{namespace: ns, secret: name, key: key})
}

// pruneKeys drops the kept keys no Controller names now (keys.go).
func (s *slurmSource) pruneKeys() {
	var ctrls slinkylisters.ControllerLister
	if r := s.slinky.Load(); r != nil {
		ctrls = r.controllers
	}
	s.keys.prune(ctrls)
}

// client returns the kept REST client for url and key, making it once.
// Clients of an old key or address, and clients no NodeSet asked for
// within Config.ClientIdle, are dropped and closed: only current ones
// keep nodes.
func (s *slurmSource) client(url string, key []byte, c *Controller) (*slurm.REST, error) {
	id := url + "|" + slurm.KeyID(key)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, kc := range s.clients {
		if k != id && (strings.HasPrefix(k, url+"|") || now.Sub(kc.used) > s.cfg.ClientIdle) {
			kc.rest.Close()
			delete(s.clients, k)
		}
	}
	if kc, ok := s.clients[id]; ok {
		kc.used = now
		return kc.rest, nil
	}
	st, err := slurm.NewSignedToken(key, s.flags.jwtUser)
	if err != nil {
		return nil, err
	}
	c.applyTokenLifetime(st)
	cl, err := slurm.NewREST(slurm.RESTConfig{URL: url, Token: st, Version: s.flags.restVersion, Transport: s.cfg.RESTTransport,
		Budget: s.budget})
	if err != nil {
		return nil, err
	}
	s.clients[id] = &keptClient{rest: cl, used: now}
	return cl, nil
}
