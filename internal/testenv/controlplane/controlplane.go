package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Users known to the control plane's token file.
const (
	// AdminUser is in system:masters and may do anything.
	AdminUser = "admin"
	// UnprivilegedUser is authenticated but bound to no role.
	UnprivilegedUser = "alice"
)

// Level says how much of a cluster Start runs. Each level includes the ones
// before it.
type Level int

const (
	// APIServer runs etcd and kube-apiserver on loopback: the fast default.
	// Nothing acts on what is written: no ServiceAccounts, no pods for
	// workloads, no garbage collection.
	APIServer Level = iota
	// Controllers adds kube-controller-manager and kube-scheduler: namespaces
	// get their default ServiceAccount, Deployments, StatefulSets, Jobs and
	// DaemonSets make pods, the garbage collector and namespace deletion
	// work. Pods are scheduled only once a node exists.
	Controllers
	// Node adds one node that runs pods: containerd, runc, CNI, kubelet and
	// kube-proxy, with the API server on the node's address so that pods
	// reach it through the kubernetes Service. Needs root, and runs one at a
	// time on a machine (a second Start waits for the first to stop).
	Node
)

// String names the level as the tests and 'make cluster-up' spell it.
func (l Level) String() string {
	switch l {
	case APIServer:
		return "apiserver"
	case Controllers:
		return "controllers"
	case Node:
		return "node"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel is the inverse of Level.String.
func ParseLevel(s string) (Level, error) {
	for _, l := range []Level{APIServer, Controllers, Node} {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown cluster level %q: use apiserver, controllers or node", s)
}

// Options says where the binaries are and how the processes live.
type Options struct {
	// Level is how much of a cluster to run; the zero value is APIServer.
	Level Level
	// BinDir holds etcd and kube-apiserver. Empty means FindBinDir().
	BinDir string
	// Dir is the working directory for data, certificates and logs.
	// Empty means a new temporary directory, removed by Stop.
	Dir string
	// Output receives the processes' output. Nil means log files in Dir.
	Output io.Writer
	// Detach lets the processes outlive this one (for 'make cluster-up').
	// Otherwise they are killed by the kernel when this process dies, so a
	// test that panics or times out leaves nothing behind.
	Detach bool
	// BeforeControllers, when set, runs once the API server answers and
	// before kube-controller-manager starts: CRDs installed there are in
	// the discovery its controllers read at start-up. Installed later, a
	// controller that resolves custom resources (the disruption
	// controller finding a NodeSet's scale subresource) only sees them on
	// its 30 s discovery refresh.
	BeforeControllers func(ctx context.Context, cp *ControlPlane) error
}

// ControlPlane is a running etcd and kube-apiserver, and what else its
// Level asks for.
type ControlPlane struct {
	Dir      string
	URL      string
	EtcdURL  string
	caPEM    []byte
	tokens   map[string]string
	opts     Options
	ownDir   bool
	etcd     *process
	apiSrv   *process
	apiArgs  []string
	etcdArgs []string
	// Level Controllers and up.
	kubeconfig string
	kcm, sched *process
	// Level Node.
	node *node
}

// FindBinDir returns $KUBECTL_VC_BIN_DIR, or the bin/ directory of the
// repository that contains the working directory.
func FindBinDir() (string, error) {
	if d := os.Getenv("KUBECTL_VC_BIN_DIR"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// RepoRoot walks up from the working directory to the kubectl-vc module root.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/kubectl-vc/kubectl-vc\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the kubectl-vc repository; set KUBECTL_VC_BIN_DIR")
		}
		dir = parent
	}
}

// Start launches etcd and kube-apiserver and waits until the API server is ready.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.BinDir == "" {
		d, err := FindBinDir()
		if err != nil {
			return nil, err
		}
		opts.BinDir = d
	}
	bins := []string{"etcd", "kube-apiserver"}
	if opts.Level >= Controllers {
		bins = append(bins, "kube-controller-manager", "kube-scheduler")
	}
	if opts.Level >= Node {
		bins = append(bins, nodeBinaries...)
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run 'make controlplane' first", b, opts.BinDir)
		}
	}
	if opts.Level >= Node {
		if err := NodeSupported(); err != nil {
			return nil, err
		}
	}
	cp := &ControlPlane{opts: opts, Dir: opts.Dir, tokens: map[string]string{}}
	if cp.Dir == "" {
		d, err := os.MkdirTemp("", "kubectl-vc-controlplane-")
		if err != nil {
			return nil, err
		}
		cp.Dir, cp.ownDir = d, true
	}
	if err := os.MkdirAll(cp.Dir, 0o700); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = cp.Stop()
		}
	}()

	// Pods reach the API server through the kubernetes Service, whose
	// endpoint is the advertised address: with a node, that is the node's
	// own address on its pod bridge, not loopback.
	host := "127.0.0.1"
	if opts.Level >= Node {
		n, err := prepareNode(ctx, cp.Dir, opts)
		if err != nil {
			return nil, err
		}
		cp.node = n
		host = NodeIP
	}
	caPEM, err := writeCerts(cp.Dir, net.ParseIP(NodeIP), net.ParseIP(ServiceIP))
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	cp.caPEM = caPEM
	var tokenFile strings.Builder
	for _, u := range []struct{ name, groups string }{{AdminUser, "system:masters"}, {UnprivilegedUser, ""}} {
		tok := randomToken()
		cp.tokens[u.name] = tok
		fmt.Fprintf(&tokenFile, "%s,%s,%s,%q\n", tok, u.name, u.name, u.groups)
	}
	if err := os.WriteFile(filepath.Join(cp.Dir, "tokens.csv"), []byte(tokenFile.String()), 0o600); err != nil {
		return nil, err
	}

	ports, err := freeport.Ports("127.0.0.1", 3)
	if err != nil {
		return nil, err
	}
	cp.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	cp.URL = "https://" + host + ":" + strconv.Itoa(ports[2])
	cp.etcdArgs = []string{
		"--name=default",
		"--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls=" + cp.EtcdURL,
		"--advertise-client-urls=" + cp.EtcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// Tests and benchmarks do not need durability across power loss.
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	}
	cp.apiArgs = []string{
		"--etcd-servers=" + cp.EtcdURL,
		"--bind-address=" + host,
		"--advertise-address=" + host,
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--tls-cert-file=" + filepath.Join(cp.Dir, "server.crt"),
		"--tls-private-key-file=" + filepath.Join(cp.Dir, "server.key"),
		"--token-auth-file=" + filepath.Join(cp.Dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(cp.Dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(cp.Dir, "sa.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--allow-privileged=true",
		// There is no kube-proxy here, so a Service's ClusterIP leads
		// nowhere from the API server: this makes it call a webhook
		// Service (serve's queue webhook) through the Service's endpoints,
		// the pods' IPs.
		"--enable-aggregator-routing=true",
		"--v=0",
	}
	if opts.Level < Controllers {
		// No kube-controller-manager runs, so nothing creates the "default"
		// ServiceAccount that this admission plugin would demand of pods.
		cp.apiArgs = append(cp.apiArgs, "--disable-admission-plugins=ServiceAccount")
	}
	if opts.Level < Node {
		// The kubernetes Service endpoint may not be a loopback address, and
		// without a node nothing needs it.
		cp.apiArgs = append(cp.apiArgs, "--endpoint-reconciler-type=none")
	} else {
		// kubectl logs/exec: the API server calls the kubelet at the node's
		// InternalIP with a client certificate the kubelet trusts.
		cp.apiArgs = append(cp.apiArgs,
			"--kubelet-preferred-address-types=InternalIP",
			"--kubelet-client-certificate="+filepath.Join(cp.Dir, "kubelet-client.crt"),
			"--kubelet-client-key="+filepath.Join(cp.Dir, "kubelet-client.key"),
		)
	}
	if err := cp.StartEtcd(); err != nil {
		return nil, err
	}
	if err := cp.StartAPIServer(ctx); err != nil {
		return nil, err
	}
	if opts.BeforeControllers != nil {
		if err := opts.BeforeControllers(ctx, cp); err != nil {
			return nil, err
		}
	}
	if opts.Level >= Controllers {
		if err := cp.startControllers(ctx); err != nil {
			return nil, err
		}
	}
	if opts.Level >= Node {
		if err := cp.node.start(ctx, cp); err != nil {
			return nil, err
		}
	}
	ok = true
	return cp, nil
}

// Level is how much of a cluster runs.
func (cp *ControlPlane) Level() Level { return cp.opts.Level }

// StartEtcd (re)starts etcd with the same data directory and port.
func (cp *ControlPlane) StartEtcd() error {
	cmd, err := cp.spawn("etcd", cp.etcdArgs)
	if err != nil {
		return err
	}
	cp.etcd = cmd
	return nil
}

// StartAPIServer (re)starts kube-apiserver and waits for /readyz.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cmd, err := cp.spawn("kube-apiserver", cp.apiArgs)
	if err != nil {
		return err
	}
	cp.apiSrv = cmd
	return cp.waitReady(ctx)
}

// StopEtcd kills etcd (to test what happens when storage goes away).
func (cp *ControlPlane) StopEtcd() error { return stopProcess(cp.etcd) }

// StopAPIServer kills kube-apiserver (to test what happens when it goes away).
func (cp *ControlPlane) StopAPIServer() error { return stopProcess(cp.apiSrv) }

// Stop ends every process it started and removes a temporary working
// directory. A node goes first (its pods, kubelet, kube-proxy, containers,
// containerd, then its mounts, network and iptables rules), while the API
// server can still be asked to delete its pods.
func (cp *ControlPlane) Stop() error {
	release, err := cp.StopHoldingNodeLock()
	release()
	return err
}

// StopHoldingNodeLock is Stop, except that a node's hold on the machine's
// node lock lasts until release is called (release does nothing when no
// node ran, and nothing the second time). Until then no other process's
// node can start, so a test can look at the whole machine for what the
// stop should have removed (processes, mounts, the bridge, iptables
// chains) and not mistake another test binary's new node for leftovers.
func (cp *ControlPlane) StopHoldingNodeLock() (release func(), err error) {
	var errs []error
	release = func() {}
	if n := cp.node; n != nil {
		errs = append(errs, n.stopHoldingLock(cp))
		release = n.release
		cp.node = nil
	}
	errs = append(errs, stopProcess(cp.sched), stopProcess(cp.kcm), stopProcess(cp.apiSrv), stopProcess(cp.etcd))
	cp.sched, cp.kcm, cp.apiSrv, cp.etcd = nil, nil, nil, nil
	if cp.ownDir {
		errs = append(errs, os.RemoveAll(cp.Dir))
	}
	return release, errors.Join(errs...)
}

// Pids returns the process ids of etcd and kube-apiserver (0 when not running).
func (cp *ControlPlane) Pids() (etcd, apiserver int) {
	if cp.etcd != nil {
		etcd = cp.etcd.cmd.Process.Pid
	}
	if cp.apiSrv != nil {
		apiserver = cp.apiSrv.cmd.Process.Pid
	}
	return etcd, apiserver
}

// Config returns a client config for one of the token file's users.
func (cp *ControlPlane) Config(user string) *rest.Config {
	return &rest.Config{
		Host:            cp.URL,
		BearerToken:     cp.tokens[user],
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.caPEM},
		QPS:             -1, // rely on the server's priority and fairness
	}
}

// AdminConfig returns a client config for the admin user.
func (cp *ControlPlane) AdminConfig() *rest.Config { return cp.Config(AdminUser) }

// Kubeconfig returns a kubeconfig with one context per user; the admin's is current.
func (cp *ControlPlane) Kubeconfig() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.URL, CertificateAuthorityData: cp.caPEM}
	for _, u := range []string{AdminUser, UnprivilegedUser} {
		cfg.AuthInfos[u] = &clientcmdapi.AuthInfo{Token: cp.tokens[u]}
		cfg.Contexts[u] = &clientcmdapi.Context{Cluster: "local", AuthInfo: u, Namespace: "default"}
	}
	cfg.CurrentContext = AdminUser
	return cfg
}

// WriteKubeconfig writes Kubeconfig() to path with the given user's context current.
func (cp *ControlPlane) WriteKubeconfig(path, user string) error {
	cfg := cp.Kubeconfig()
	cfg.CurrentContext = user
	return clientcmd.WriteToFile(*cfg, path)
}

// process is a started child and a channel closed when it has exited.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// spawn starts bin/name with args; env, when given, is the child's whole
// environment.
func (cp *ControlPlane) spawn(name string, args []string, env ...string) (*process, error) {
	cmd := exec.Command(filepath.Join(cp.opts.BinDir, name), args...)
	if len(env) > 0 {
		cmd.Env = env
	}
	out := cp.opts.Output
	if out == nil {
		f, err := os.OpenFile(filepath.Join(cp.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child keeps its own descriptor
		out = f
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !cp.opts.Detach {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if cp.opts.Detach {
		_ = os.WriteFile(filepath.Join(cp.Dir, name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	// Reap the process so that it does not linger as a zombie, and let
	// waiters see an early exit.
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (cp *ControlPlane) waitReady(ctx context.Context) error {
	cfg := cp.AdminConfig()
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.URL+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-cp.apiSrv.done:
			return fmt.Errorf("kube-apiserver exited (see %s)", filepath.Join(cp.Dir, "kube-apiserver.log"))
		case <-cp.etcd.done:
			return fmt.Errorf("etcd exited (see %s)", filepath.Join(cp.Dir, "etcd.log"))
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready (see %s): %s", filepath.Join(cp.Dir, "kube-apiserver.log"), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func stopProcess(p *process) error {
	if p == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
