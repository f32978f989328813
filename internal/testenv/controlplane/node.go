package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The node's fixed addresses and names. One node runs on a machine at a time
// (kube-proxy's iptables rules and the bridge are machine-wide), so fixed
// values cost nothing and let a later start find and remove what a killed
// one left behind.
const (
	// NodeName is the node's name in the API.
	NodeName = "kubectl-vc-node"
	// NodeIP is the node's InternalIP: the address of its pod bridge, on
	// which the API server also listens.
	NodeIP = "10.244.0.1"
	// PodCIDR is the pod network of the node's bridge.
	PodCIDR = "10.244.0.0/24"
	// ServiceCIDR is the range of ClusterIPs.
	ServiceCIDR = "10.96.0.0/24"
	// ServiceIP is the ClusterIP of the kubernetes Service.
	ServiceIP = "10.96.0.1"
	// PauseImage is the sandbox image, imported from bin/pause.tar at start
	// (nothing can be pulled here).
	PauseImage = "docker.io/kubectl-vc/pause:local"

	bridgeName = "kvc0"
	// nodeMarker is part of every path the node uses: processes and mounts
	// left by a killed node are recognised by it.
	nodeMarker = "kubectl-vc-node"
	nodeRoot   = "/var/lib/" + nodeMarker
	nodeRun    = "/run/" + nodeMarker
	nodeLock   = "/run/" + nodeMarker + ".lock"
	runcBinary = "/usr/sbin/runc"
	cniBinDir  = "/usr/lib/cni"
)

// nodeBinaries are the files in the bin directory that a node needs.
var nodeBinaries = []string{"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "ctr", "pause.tar"}

// NodeSupported says why this machine cannot run the node, or nil: it needs
// root and Debian's runc, CNI plugins, iptables and iproute2.
func NodeSupported() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, f := range []string{runcBinary, cniBinDir + "/bridge", cniBinDir + "/host-local", cniBinDir + "/loopback"} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	for _, c := range []string{"iptables", "ip"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the local node needs %s: run it as root after 'make node-deps' (Debian's runc, containernetworking-plugins, iptables)", strings.Join(missing, ", "))
	}
	return nil
}

// node is the running node's processes and its hold on the machine-wide lock.
type node struct {
	lock               *os.File
	containerd         *process
	kubelet, kubeProxy *process
	proxyHealth        string
}

func (n *node) socket() string { return filepath.Join(nodeRun, "containerd", "containerd.sock") }

// prepareNode takes the machine's node lock (waiting while another node
// runs), removes whatever a killed node left behind, and creates the pod
// bridge with the node's address, so that the API server can listen there.
func prepareNode(ctx context.Context, dir string, opts Options) (*node, error) {
	if err := os.MkdirAll(filepath.Dir(nodeLock), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(nodeLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", nodeLock, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("another local node is running (lock %s): %w", nodeLock, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	n := &node{lock: f}
	// A node started by 'make cluster-up' outlives the process that holds
	// the lock; its owner file says so.
	if b, err := os.ReadFile(filepath.Join(nodeRun, "owner")); err == nil {
		owner := strings.TrimSpace(string(b))
		if pid, err := strconv.Atoi(owner); err == nil && processAlive(pid) {
			n.release()
			return nil, fmt.Errorf("a local node started by 'make cluster-up' is running (kubelet pid %d): run 'make cluster-down' first", pid)
		}
	}
	if err := CleanNode(opts.BinDir); err != nil {
		n.release()
		return nil, fmt.Errorf("remove a previous node's leftovers: %w", err)
	}
	for _, d := range []string{nodeRoot, nodeRun} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			n.release()
			return nil, err
		}
	}
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", NodeIP + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			n.release()
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return n, nil
}

// NodeLocked reports whether a process (this one included) holds the
// machine's node lock, i.e. whether a node may be running or starting.
func NodeLocked() (bool, error) {
	f, err := os.Open(nodeLock)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	// A second open file description conflicts with the first even in the
	// same process, so this sees this process's own hold too.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", nodeLock, err)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, nil
}

func (n *node) release() {
	if n.lock != nil {
		_ = syscall.Flock(int(n.lock.Fd()), syscall.LOCK_UN)
		n.lock.Close()
		n.lock = nil
	}
}

// start runs containerd, kubelet and kube-proxy and waits until the node is
// Ready, untainted, and kube-proxy has written the Service rules.
func (n *node) start(ctx context.Context, cp *ControlPlane) error {
	bin := cp.opts.BinDir
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH")+":/usr/sbin:/sbin")
	files := map[string]string{
		filepath.Join(nodeRoot, "cni", "net.d", "10-kubectl-vc.conflist"): cniConfig(),
		filepath.Join(nodeRoot, "containerd.toml"):                        containerdConfig(n.socket()),
	}
	ports, err := freeport.Ports("127.0.0.1", 4)
	if err != nil {
		return err
	}
	kubeletPort, kubeletHealth, proxyHealth, proxyMetrics := ports[0], ports[1], ports[2], ports[3]
	files[filepath.Join(nodeRoot, "kubelet.yaml")] = kubeletConfig(cp.Dir, n.socket(), kubeletPort, kubeletHealth)
	files[filepath.Join(nodeRoot, "kube-proxy.yaml")] = kubeProxyConfig(cp.kubeconfig, proxyHealth, proxyMetrics)
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return err
		}
	}

	if n.containerd, err = cp.spawn("containerd", []string{"--config", filepath.Join(nodeRoot, "containerd.toml")}, env...); err != nil {
		return err
	}
	if err := waitFor(ctx, time.Minute, n.containerd, "containerd", func() error {
		_, err := n.ctr(ctx, bin, "version")
		return err
	}); err != nil {
		return err
	}
	if out, err := n.ctr(ctx, bin, "images", "import", filepath.Join(bin, "pause.tar")); err != nil {
		return fmt.Errorf("import the pause image: %v: %s", err, out)
	}

	if n.kubelet, err = cp.spawn("kubelet", []string{
		"--config=" + filepath.Join(nodeRoot, "kubelet.yaml"),
		"--kubeconfig=" + cp.kubeconfig,
		"--hostname-override=" + NodeName,
		"--node-ip=" + NodeIP,
		"--root-dir=" + filepath.Join(nodeRoot, "kubelet"),
		"--cert-dir=" + filepath.Join(nodeRoot, "kubelet", "pki"),
		"--v=1",
	}, env...); err != nil {
		return err
	}
	if n.kubeProxy, err = cp.spawn("kube-proxy", []string{
		"--config=" + filepath.Join(nodeRoot, "kube-proxy.yaml"),
		"--hostname-override=" + NodeName,
		"--v=1",
	}, env...); err != nil {
		return err
	}
	n.proxyHealth = "http://127.0.0.1:" + strconv.Itoa(proxyHealth) + "/healthz"
	if cp.opts.Detach {
		_ = os.WriteFile(filepath.Join(nodeRun, "owner"), []byte(strconv.Itoa(n.kubelet.cmd.Process.Pid)), 0o600)
	}

	kube, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return err
	}
	return waitFor(ctx, 3*time.Minute, n.kubelet, "kubelet", func() error {
		if err := nodeReady(ctx, kube); err != nil {
			return err
		}
		select {
		case <-n.kubeProxy.done:
			return errors.New("kube-proxy exited")
		default:
		}
		resp, err := http.Get(n.proxyHealth)
		if err != nil {
			return fmt.Errorf("kube-proxy: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("kube-proxy has not synced its rules (healthz: HTTP %d)", resp.StatusCode)
		}
		return nil
	})
}

// nodeReady is nil once the node reports Ready and kube-controller-manager
// has lifted the registration taints, so pods can be scheduled.
func nodeReady(ctx context.Context, kube kubernetes.Interface) error {
	nd, err := kube.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", NodeName, err)
	}
	ready := false
	for _, c := range nd.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return fmt.Errorf("node %s is not Ready", NodeName)
	}
	for _, t := range nd.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return fmt.Errorf("node %s is tainted %s", NodeName, t.Key)
		}
	}
	return nil
}

// ctr runs containerd's client against the node's containerd, in the CRI's
// namespace (where kubelet looks for images).
func (n *node) ctr(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, filepath.Join(bin, "ctr"), append([]string{"--address", n.socket(), "--namespace", "k8s.io"}, args...)...).CombinedOutput()
}

// ImportImage loads an image tarball (docker save or OCI layout, such as
// the one 'make image' writes) into the node's containerd, so that pods can
// run it with imagePullPolicy Never or IfNotPresent.
func (cp *ControlPlane) ImportImage(ctx context.Context, tarball string) error {
	if cp.node == nil {
		return errors.New("no node runs: start the control plane with Level Node")
	}
	return ImportNodeImage(ctx, cp.opts.BinDir, tarball)
}

// ImportNodeImage is ImportImage for the node that runs on this machine,
// whoever started it ('make cluster-up' included).
func ImportNodeImage(ctx context.Context, binDir, tarball string) error {
	n := &node{}
	if _, err := os.Stat(n.socket()); err != nil {
		return fmt.Errorf("no local node runs (no %s): start one with 'make cluster-up'", n.socket())
	}
	if out, err := n.ctr(ctx, binDir, "images", "import", tarball); err != nil {
		return fmt.Errorf("import %s: %v: %s", tarball, err, out)
	}
	return nil
}

// stopHoldingLock ends the node's processes and removes every trace of it
// from the machine. The lock stays held: the caller releases it.
func (n *node) stopHoldingLock(cp *ControlPlane) error {
	errs := []error{stopProcess(n.kubeProxy), stopProcess(n.kubelet)}
	// Containers go before containerd, so that it sees them exit and its
	// shims end with them.
	errs = append(errs, killContainers())
	errs = append(errs, stopProcess(n.containerd))
	errs = append(errs, CleanNode(cp.opts.BinDir))
	return errors.Join(errs...)
}

// CleanNode removes whatever a node left on this machine: containers, the
// processes of containerd, its shims, kubelet and kube-proxy, mounts under
// the node's directories and the pods' network namespaces, kube-proxy's
// iptables rules, the pod bridge and the directories. It is what 'make
// cluster-down' and every node start and stop run; it does nothing harmful
// when there is nothing to clean.
func CleanNode(binDir string) error {
	var errs []error
	errs = append(errs, killContainers())
	killMarked()
	errs = append(errs, unmountUnder(nodeRoot, nodeRun, "/run/netns/cni-", "/var/run/netns/cni-"))
	for _, dir := range []string{"/run/netns", "/var/run/netns"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "cni-") {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(binDir, "kube-proxy")); err == nil {
		// Removes the KUBE-* chains and rules of every proxy mode.
		_ = exec.Command(filepath.Join(binDir, "kube-proxy"), "--cleanup", "--v=0").Run()
	}
	errs = append(errs, removeKubeChains())
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		if out, err := exec.Command("ip", "link", "del", bridgeName).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link del %s: %v: %s", bridgeName, err, out))
		}
	}
	for _, d := range []string{nodeRoot, nodeRun} {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeKubeChains removes the KUBE-* chains that kube-proxy's cleanup
// leaves: kubelet's own (KUBE-FIREWALL, KUBE-KUBELET-CANARY, ...), in every
// table of iptables and ip6tables, with the rules that jump to them.
func removeKubeChains() error {
	var errs []error
	for _, ipt := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(ipt); err != nil {
			continue
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(ipt, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue // the table may not exist for this family
			}
			var chains []string
			for _, line := range strings.Split(string(out), "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
					chains = append(chains, f[1])
				case len(f) > 2 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && strings.Contains(line, " -j KUBE-"):
					// A jump from a built-in chain: delete the same rule.
					args := append([]string{"-w", "-t", table, "-D"}, splitRule(line)[1:]...)
					if b, err := exec.Command(ipt, args...).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s %s: %v: %s", ipt, strings.Join(args, " "), err, b))
					}
				}
			}
			for _, c := range chains {
				_ = exec.Command(ipt, "-w", "-t", table, "-F", c).Run()
			}
			for _, c := range chains {
				if b, err := exec.Command(ipt, "-w", "-t", table, "-X", c).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s -t %s -X %s: %v: %s", ipt, table, c, err, b))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// splitRule splits a line of 'iptables -S' into arguments, keeping quoted
// comments whole and unquoted.
func splitRule(line string) []string {
	var args []string
	var cur strings.Builder
	quoted, have := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, have = !quoted, true
		case r == ' ' && !quoted:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// KubeChains lists the KUBE-* chains left in iptables and ip6tables (for
// tests that prove a stop leaves no rule behind).
func KubeChains() []string {
	var left []string
	for _, ipt := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(ipt, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(out), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-") {
					left = append(left, ipt+" "+table+" "+f[1])
				}
			}
		}
	}
	return left
}

// killContainers force-deletes every container runc knows under the node's
// runc root (one directory per containerd namespace): runc kills each
// container's processes and removes its cgroups.
func killContainers() error {
	root := filepath.Join(nodeRun, "runc")
	nss, err := os.ReadDir(root)
	if err != nil {
		return nil // no containers were ever made
	}
	var errs []error
	for _, ns := range nss {
		nsRoot := filepath.Join(root, ns.Name())
		out, err := exec.Command(runcBinary, "--root", nsRoot, "list", "-q").Output()
		if err != nil {
			continue
		}
		for _, id := range strings.Fields(string(out)) {
			if b, err := exec.Command(runcBinary, "--root", nsRoot, "delete", "--force", id).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("runc delete %s: %v: %s", id, err, b))
			}
		}
	}
	return errors.Join(errs...)
}

// killMarked kills every process whose command line names the node's
// directories (containerd, its shims, kubelet, kube-proxy of a node whose
// owner died) and waits until they are gone.
func killMarked() {
	self := os.Getpid()
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), nodeMarker) {
			continue
		}
		// Only the node's own programs: a shell or editor that merely
		// mentions the path is left alone.
		exe, _ := os.Readlink(filepath.Join("/proc", p.Name(), "exe"))
		switch filepath.Base(exe) {
		case "containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy":
			_ = syscall.Kill(pid, syscall.SIGKILL)
			pids = append(pids, pid)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// processAlive is true while pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// unmountUnder detaches every mount whose mount point starts with one of
// the prefixes, deepest first.
func unmountUnder(prefixes ...string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		for _, p := range prefixes {
			if strings.HasPrefix(mp, p) {
				points = append(points, mp)
				break
			}
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, mp := range points {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NodeMounts lists the mount points a node left on this machine (for tests
// that prove a stop leaves nothing mounted).
func NodeMounts() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[4], nodeMarker) {
			out = append(out, fields[4])
		}
	}
	return out, nil
}

// NodeProcesses lists the pids of the node's programs still running on this
// machine (for tests that prove a stop leaves nothing running).
func NodeProcesses() []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), nodeMarker) && processAlive(pid) {
			exe, _ := os.Readlink(filepath.Join("/proc", p.Name(), "exe"))
			switch filepath.Base(exe) {
			case "containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy":
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// waitFor polls check until it returns nil, the process p exits, or the
// timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, p *process, name string, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %v", name, last)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v", name, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
