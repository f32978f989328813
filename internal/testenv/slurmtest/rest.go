package slurmtest

// Slurm with slurmrestd, for tests of REST clients. The host's Slurm
// (Debian 12: 22.05) serves no REST API a current client speaks, so these
// clusters run Debian's newer Slurm from chroots that hack/slurm/chroot.sh
// builds (make slurm): munged, slurmctld, one slurmd per node and slurmrestd
// with JWT authentication.
//
// Every daemon and command runs as PID 1's child in a new PID and mount
// namespace: its /proc, /sys and /dev mounts exist only there, and when the
// namespace's first process dies the kernel kills everything else in it
// (slurmstepd and the jobs' processes too). Nothing is mounted on the host
// and nothing outlives Stop or a killed test process.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
)

// RESTSuite is one Slurm version with slurmrestd, run from a chroot of a
// Debian suite.
type RESTSuite struct {
	Name   string // for subtests: "slurm-24.11"
	Debian string // the chroot's suite: "trixie"
	Slurm  string // major.minor: "24.11"
}

// RESTSuites are the Slurm versions hack/slurm/chroot.sh provides. Both serve
// the REST API version v0.0.42.
var RESTSuites = []RESTSuite{
	{Name: "slurm-24.11", Debian: "trixie", Slurm: "24.11"},
	{Name: "slurm-26.05", Debian: "forky", Slurm: "26.05"},
}

// ChrootsDir is where hack/slurm/chroot.sh builds the chroots:
// $KVC_SLURM_CHROOTS, by default /var/cache/kubectl-vc/slurm.
func ChrootsDir() string {
	if d := os.Getenv("KVC_SLURM_CHROOTS"); d != "" {
		return d
	}
	return "/var/cache/kubectl-vc/slurm"
}

// Root is the suite's chroot directory.
func (s RESTSuite) Root() string { return filepath.Join(ChrootsDir(), s.Debian) }

// chrootStamp is the file hack/slurm/chroot.sh writes last into a chroot;
// its first line ends with the chroot's revision, chrootRev.
const (
	chrootStamp = ".kvc-slurm-chroot"
	chrootRev   = "rev=2"
)

// RESTUnavailable says why this machine cannot run suite's daemons, or nil.
func RESTUnavailable(s RESTSuite) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s: not root: Slurm's REST daemons run in a chroot, which needs root", s.Name)
	}
	b, err := os.ReadFile(filepath.Join(s.Root(), chrootStamp))
	if err != nil {
		return fmt.Errorf("%s: chroot %s not built: run make slurm (hack/slurm/chroot.sh %s)", s.Name, s.Root(), s.Debian)
	}
	lines := strings.Split(string(b), "\n")
	if !slices.Contains(strings.Fields(lines[0]), chrootRev) {
		return fmt.Errorf("%s: chroot %s is from an older hack/slurm/chroot.sh: run make slurm", s.Name, s.Root())
	}
	var version string
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "slurm="); ok {
			version = v
		}
	}
	if !strings.HasPrefix(version, s.Slurm+".") {
		return fmt.Errorf("%s: chroot %s has Slurm %q, not %s", s.Name, s.Root(), version, s.Slurm)
	}
	return nil
}

// RESTOption changes how StartREST runs the cluster.
type RESTOption func(*restOptions)

type restOptions struct {
	listenAddr string
	port       int
	noSlurmd   bool
}

// WithoutSlurmd declares the nodes IDLE and runs no slurmd for them (with
// SlurmdTimeout=0 slurmctld keeps them so): a cluster of hundreds of nodes
// for measuring reads, on which no job can run.
func WithoutSlurmd() RESTOption { return func(o *restOptions) { o.noSlurmd = true } }

// WithListenAddr makes slurmrestd listen on addr (an IP address; default
// 127.0.0.1). "0.0.0.0" lets pods on a local kubelet reach it.
func WithListenAddr(addr string) RESTOption { return func(o *restOptions) { o.listenAddr = addr } }

// WithPort makes slurmrestd listen on port instead of a free one.
func WithPort(port int) RESTOption { return func(o *restOptions) { o.port = port } }

// RESTCluster is a running munged, slurmctld, slurmds and slurmrestd.
type RESTCluster struct {
	Suite RESTSuite
	Nodes []string
	// URL is slurmrestd's, http://HOST:PORT: HOST is the listen address, or
	// 127.0.0.1 for 0.0.0.0.
	URL string
	// Addr is slurmrestd's listen address and Port its port.
	Addr string
	Port int
	// JWTKey is the HS256 key of slurm.conf's AuthAltParameters=jwt_key:
	// tokens signed with it (claims iat, exp, sun) are accepted.
	JWTKey []byte
	// Dir is the instance directory on the host (inside the chroot), with
	// slurm.conf and each daemon's log; removed by Stop.
	Dir string

	root   string // the chroot
	inDir  string // Dir as seen inside the chroot
	conf   string // slurm.conf inside the chroot
	logs   []string
	mu     sync.Mutex
	munged *daemon
	ctld   *daemon
	slurmd []*daemon
	restd  *daemon
	done   bool
}

type daemon struct {
	name string
	log  string // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartREST starts a cluster of suite's Slurm with the given nodes in a new
// instance directory of the chroot, and returns once every node is IDLE with
// its slurmd registered and slurmrestd answers. Call Stop when done.
func StartREST(ctx context.Context, s RESTSuite, nodes []string, opts ...RESTOption) (*RESTCluster, error) {
	if err := RESTUnavailable(s); err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, errors.New("StartREST: no nodes")
	}
	for _, n := range nodes {
		if n == "" || strings.ContainsAny(n, " \t\n,=[]%/") {
			return nil, fmt.Errorf("StartREST: node name %q is not usable", n)
		}
	}
	o := restOptions{listenAddr: "127.0.0.1"}
	for _, f := range opts {
		f(&o)
	}
	// No retry on "Address already in use": the daemons bind only the
	// ports freeport hands out, which no other process using freeport (the
	// other test binaries) can be given while this one lives, and below
	// the ephemeral range, so no connection takes one as its source port.
	// A clash would be a bug to see, not to hide.
	root := s.Root()
	base := filepath.Join(root, "var/lib/kvc-test")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	removeStale(base)
	dir, err := os.MkdirTemp(base, "i-")
	if err != nil {
		return nil, err
	}
	owner := fmt.Sprintf("%d %s\n", os.Getpid(), procStart(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(owner), 0o644); err != nil {
		os.Remove(dir)
		return nil, err
	}
	c := &RESTCluster{
		Suite: s, Nodes: append([]string(nil), nodes...), Addr: o.listenAddr, Dir: dir,
		root: root, inDir: "/var/lib/kvc-test/" + filepath.Base(dir),
	}
	c.conf = c.inDir + "/slurm.conf"
	if err := c.start(ctx, o); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	return c, nil
}

// StartRESTT starts a cluster for a test and stops it at cleanup. It skips
// the test when RESTUnavailable, except when CI=true: then it fails.
func StartRESTT(t testing.TB, s RESTSuite, nodes ...string) *RESTCluster {
	t.Helper()
	skipShort(t)
	if err := RESTUnavailable(s); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := StartREST(ctx, s, nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s logs:\n%s", s.Name, c.LogTails(20))
		}
		c.Stop()
	})
	return c
}

func (c *RESTCluster) start(ctx context.Context, o restOptions) error {
	if err := os.Chmod(c.Dir, 0o755); err != nil { // slurmrestd (nobody) reads slurm.conf
		return err
	}
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.Mkdir(filepath.Join(c.Dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if err := os.Mkdir(filepath.Join(c.Dir, "spool", n), 0o755); err != nil {
			return err
		}
	}
	mungeKey := make([]byte, 1024)
	jwt := make([]byte, 32)
	if _, err := rand.Read(mungeKey); err != nil {
		return err
	}
	if _, err := rand.Read(jwt); err != nil {
		return err
	}
	// Printable, so that no tool in between stops at a NUL byte.
	c.JWTKey = []byte(hex.EncodeToString(jwt))
	if err := os.WriteFile(filepath.Join(c.Dir, "munge", "munge.key"), mungeKey, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "jwt_hs256.key"), c.JWTKey, 0o600); err != nil {
		return err
	}
	ports, err := freeport.Ports("127.0.0.1", 1+len(c.Nodes))
	if err != nil {
		return err
	}
	c.Port = o.port
	if c.Port == 0 {
		if c.Port, err = freeport.Port(o.listenAddr); err != nil {
			return err
		}
	}
	host := o.listenAddr
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	c.URL = "http://" + net.JoinHostPort(host, strconv.Itoa(c.Port))
	if err := os.WriteFile(filepath.Join(c.Dir, "slurm.conf"), []byte(c.slurmConf(ports, o.noSlurmd)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "topology.conf"), []byte(c.topologyConf()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "cgroup.conf"), []byte("CgroupPlugin=disabled\n"), 0o644); err != nil {
		return err
	}
	// slurmctld runs as SlurmUser=slurm, as in Slinky's images: the user
	// whose tokens (sun=slurm, what Slinky's operator and serve sign) may
	// drain and resume nodes. What it writes and the JWT key are its own.
	if err := c.chownToSlurm("state", "jwt_hs256.key", "slurmctld.log", "slurmctld.pid"); err != nil {
		return err
	}
	c.logs = []string{"munged.out", "munge/munged.log", "slurmctld.out", "slurmctld.log"}
	for _, n := range c.Nodes {
		c.logs = append(c.logs, "slurmd-"+n+".out", "slurmd-"+n+".log")
	}
	c.logs = append(c.logs, "slurmrestd.out")

	in := func(p string) string { return c.inDir + "/" + p }
	// --force: munged refuses, otherwise, a key and socket outside its
	// usual directories.
	c.munged, err = c.spawn("munged", false, nil, "munged", "-F", "--force",
		"--key-file="+in("munge/munge.key"), "--socket="+in("munge/munge.socket"),
		"--pid-file="+in("munge/munged.pid"), "--seed-file="+in("munge/seed"),
		"--log-file="+in("munge/munged.log"))
	if err != nil {
		return err
	}
	if err := c.await(ctx, "munged's socket", []*daemon{c.munged}, func() bool {
		_, err := os.Stat(filepath.Join(c.Dir, "munge", "munge.socket"))
		return err == nil
	}); err != nil {
		return err
	}
	if c.ctld, err = c.spawn("slurmctld", false, nil, "slurmctld", "-D"); err != nil {
		return err
	}
	ctldAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	if err := c.await(ctx, "slurmctld on "+ctldAddr, []*daemon{c.ctld}, func() bool {
		conn, err := net.DialTimeout("tcp", ctldAddr, time.Second)
		if err == nil {
			conn.Close()
		}
		return err == nil
	}); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		if o.noSlurmd {
			break
		}
		d, err := c.spawn("slurmd-"+n, false, nil, "slurmd", "-D", "-N", n)
		if err != nil {
			return err
		}
		c.slurmd = append(c.slurmd, d)
	}
	if err := c.startRestd(ctx); err != nil {
		return err
	}
	all := append([]*daemon{c.munged, c.ctld, c.restd}, c.slurmd...)
	return c.await(ctx, "all nodes IDLE with slurmd registered", all, func() bool {
		states, err := c.nodeStates(ctx)
		if err != nil {
			return false
		}
		for _, n := range c.Nodes {
			st, ok := states[n]
			if !ok || st.state != "IDLE" || !o.noSlurmd && (st.slurmdStart == "" || st.slurmdStart == "None") {
				return false
			}
		}
		return true
	})
}

// chownToSlurm gives the chroot's slurm user the instance's files named,
// creating the missing ones empty.
func (c *RESTCluster) chownToSlurm(names ...string) error {
	passwd, err := os.ReadFile(filepath.Join(c.root, "etc", "passwd"))
	if err != nil {
		return err
	}
	uid, gid := -1, -1
	for _, line := range strings.Split(string(passwd), "\n") {
		f := strings.Split(line, ":")
		if len(f) > 3 && f[0] == "slurm" {
			uid, _ = strconv.Atoi(f[2])
			gid, _ = strconv.Atoi(f[3])
		}
	}
	if uid < 0 {
		return fmt.Errorf("%s has no slurm user: run make slurm", c.root)
	}
	for _, n := range names {
		p := filepath.Join(c.Dir, n)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return err
			}
		}
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// topologyConf is a tree topology (its name, in Slurm 25.05 and later, is
// "default"), for the tests of node topology: switch s0 holds the first
// node, s1 the others, and switch top both.
func (c *RESTCluster) topologyConf() string {
	if len(c.Nodes) == 1 {
		return "SwitchName=s0 Nodes=" + c.Nodes[0] + "\n"
	}
	return "SwitchName=s0 Nodes=" + c.Nodes[0] + "\nSwitchName=s1 Nodes=" + strings.Join(c.Nodes[1:], ",") +
		"\nSwitchName=top Switches=s0,s1\n"
}

func (c *RESTCluster) slurmConf(ports []int, noSlurmd bool) string {
	in := func(p string) string { return c.inDir + "/" + p }
	var b strings.Builder
	fmt.Fprintf(&b, `# Written by internal/testenv/slurmtest for one test instance.
ClusterName=kvctest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%s
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s/%%n
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
KillWait=5
TopologyPlugin=topology/tree
`, ports[0], in("munge/munge.socket"), in("jwt_hs256.key"), in("state"), in("spool"),
		in("slurmctld.pid"), in("slurmd-%n.pid"), in("slurmctld.log"), in("slurmd-%n.log"))
	state := "UNKNOWN"
	if noSlurmd {
		b.WriteString("SlurmdTimeout=0\n")
		state = "IDLE"
	}
	for i, n := range c.Nodes {
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 Port=%d CPUs=1 State=%s\n", n, ports[1+i], state)
	}
	b.WriteString("PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	return b.String()
}

func (c *RESTCluster) startRestd(ctx context.Context) error {
	addr := net.JoinHostPort(c.Addr, strconv.Itoa(c.Port))
	for {
		d, err := c.spawn("slurmrestd", true, []string{"SLURM_JWT=daemon"},
			"slurmrestd", "-a", "rest_auth/jwt", "-s", "openapi/slurmctld", addr)
		if err != nil {
			return err
		}
		err = c.await(ctx, "slurmrestd on "+addr, []*daemon{d}, func() bool {
			return restdAnswers(c.URL)
		})
		if err == nil {
			c.restd = d
			return nil
		}
		d.kill()
		// The port may still be held for a moment after a restart; retry
		// while the context allows.
		if ctx.Err() != nil || !bytes.Contains(tail(d.log, 20), []byte("in use")) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func restdAnswers(url string) bool {
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get(url + "/openapi/v3")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// chrootScript runs in the host's /bin/sh as the first process of a new PID
// and mount namespace: it mounts /proc, /sys and /dev into the chroot (in
// that namespace only) and runs the command in the chroot. It does not exec
// the command: a process that changes its user (chroot --userspec) loses
// its parent-death signal, and this shell keeps it.
const chrootScript = `set -e
mount --make-rprivate /
root=$1
shift
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
chroot "$@"
exit $?
`

// chrootCmd makes the command for prog (a name looked up in the chroot's
// PATH) and its arguments in the chroot, as nobody if asNobody.
func (c *RESTCluster) chrootCmd(ctx context.Context, asNobody bool, env []string, prog string, args ...string) *exec.Cmd {
	argv := []string{"-c", chrootScript, "kvc-chroot", c.root}
	if asNobody {
		argv = append(argv, "--userspec=65534:65534", "--groups=65534")
	}
	argv = append(argv, c.root, prog)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", argv...)
	cmd.Env = append([]string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "HOME=/root", "SLURM_CONF=" + c.conf,
	}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
	}
	return cmd
}

// spawner starts processes from one OS thread that never exits. The
// parent-death signal fires when the thread that started a process ends,
// not the process; Go ends a thread when a goroutine that locked it returns.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func startLocked(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // for good
			for r := range spawner.reqs {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := spawnReq{cmd: cmd, err: make(chan error, 1)}
	spawner.reqs <- r
	return <-r.err
}

func (c *RESTCluster) spawn(name string, asNobody bool, env []string, prog string, args ...string) (*daemon, error) {
	log := filepath.Join(c.Dir, name+".out")
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := c.chrootCmd(context.Background(), asNobody, env, prog, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := startLocked(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, log: log, cmd: cmd, done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	return d, nil
}

// kill ends the daemon's namespace (SIGKILL to its first process takes all
// of it) and waits until it is gone.
func (d *daemon) kill() {
	if d == nil {
		return
	}
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}

// await polls ok until it holds; it fails when ctx ends or one of the
// daemons exits, with the tails of the logs.
func (c *RESTCluster) await(ctx context.Context, what string, ds []*daemon, ok func() bool) error {
	for {
		if ok() {
			return nil
		}
		for _, d := range ds {
			select {
			case <-d.done:
				return fmt.Errorf("waiting for %s: %s exited (%v):\n%s", what, d.name, d.err, c.tails(40, d.logs()...))
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w:\n%s", what, ctx.Err(), c.LogTails(15))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logs are the daemon's log files, relative to the instance directory.
func (d *daemon) logs() []string {
	switch d.name {
	case "munged":
		return []string{"munged.out", "munge/munged.log"}
	case "slurmrestd":
		return []string{"slurmrestd.out"}
	}
	// slurm.conf's SlurmctldLogFile and SlurmdLogFile.
	return []string{d.name + ".out", d.name + ".log"}
}

// LogTails returns the last n lines of each daemon's log files.
func (c *RESTCluster) LogTails(n int) string { return c.tails(n, c.logs...) }

func (c *RESTCluster) tails(n int, logs ...string) string {
	var b strings.Builder
	for _, l := range logs {
		t := tail(filepath.Join(c.Dir, l), n)
		if len(bytes.TrimSpace(t)) == 0 {
			continue
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", l, bytes.TrimRight(t, "\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}

func tail(path string, n int) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > n+1 {
		lines = lines[len(lines)-n-1:]
	}
	return bytes.Join(lines, nil)
}

// Stop stops slurmrestd and slurmctld, then the slurmds (with their jobs),
// then munged, and removes the instance directory. It may be called more
// than once.
func (c *RESTCluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	c.restd.kill()
	c.restd = nil
	c.ctld.kill()
	for _, d := range c.slurmd {
		d.kill()
	}
	c.munged.kill()
	// Mounts only ever exist in the daemons' own namespaces; still, never
	// delete below a mount point.
	if mounted, _ := mountedUnder(c.Dir); !mounted {
		_ = os.RemoveAll(c.Dir)
	}
}

// removeStale removes the instance directories that killed test processes
// left behind: those whose owner (pid and start time) no longer runs. Their
// daemons died with their owner (parent-death signal).
func removeStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "i-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil {
			// Being created (or from an older harness): only when old.
			if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < 10*time.Minute {
				continue
			}
		} else if pid, start, ok := strings.Cut(strings.TrimSpace(string(b)), " "); ok {
			if n, err := strconv.Atoi(pid); err == nil && procStart(n) == start && start != "" {
				continue // its owner runs
			}
		}
		if mounted, _ := mountedUnder(dir); !mounted {
			_ = os.RemoveAll(dir)
		}
	}
}

// procStart returns the process's start time (in clock ticks since boot),
// which tells a process from a later one with the same pid; "" if none runs.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The fields after the command name, which is in parentheses: state is
	// the first, starttime the 20th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" { // a zombie has ended
		return ""
	}
	return f[19]
}

func mountedUnder(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return true, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			return true, nil
		}
	}
	return false, s.Err()
}

// StopRestd kills slurmrestd, so that requests fail as when Slurm is
// unreachable.
func (c *RESTCluster) StopRestd() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restd.kill()
	c.restd = nil
}

// StartRestd starts slurmrestd again on the same address and port and
// returns once it answers. It does nothing when slurmrestd runs.
func (c *RESTCluster) StartRestd(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errors.New("cluster stopped")
	}
	if c.restd != nil {
		select {
		case <-c.restd.done:
		default:
			return nil
		}
	}
	return c.startRestd(ctx)
}

// Command runs a Slurm command (scontrol, sinfo, squeue, sbatch, ...) in the
// chroot, as root, against this cluster. It returns the standard output; the
// error includes the standard error.
func (c *RESTCluster) Command(ctx context.Context, name string, args ...string) (string, error) {
	cmd := c.chrootCmd(ctx, false, nil, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := startLocked(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "),
			err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Token returns a JWT for user (a user of the chroot, e.g. "slurm" or
// "root") from "scontrol token", valid for lifespan (rounded up to seconds).
func (c *RESTCluster) Token(ctx context.Context, user string, lifespan time.Duration) (string, error) {
	args := []string{"token", "username=" + user}
	if lifespan > 0 {
		args = append(args, "lifespan="+strconv.Itoa(ceilDiv(lifespan, time.Second)))
	}
	out, err := c.Command(ctx, "scontrol", args...)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(out, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "SLURM_JWT="); ok {
			return t, nil
		}
	}
	return "", fmt.Errorf("scontrol token: no SLURM_JWT in %q", out)
}

// Submit submits a batch job that sleeps for d (0: until cancelled) on node,
// with the time limit timeLimit rounded up to minutes (0: the partition's,
// unlimited), and returns its id once it is RUNNING on node.
func (c *RESTCluster) Submit(ctx context.Context, node string, d, timeLimit time.Duration) (string, error) {
	sleep := "infinity"
	if d > 0 {
		sleep = strconv.Itoa(ceilDiv(d, time.Second))
	}
	args := []string{"--parsable", "-N1", "-w", node, "-J", "kvc-test", "-o", "/dev/null", "-D", "/"}
	if timeLimit > 0 {
		args = append(args, "--time="+strconv.Itoa(ceilDiv(timeLimit, time.Minute)))
	}
	args = append(args, "--wrap", "exec sleep "+sleep)
	out, err := c.Command(ctx, "sbatch", args...)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch: no job id in %q", out)
	}
	var last string
	for {
		state, nodes, err := c.jobState(ctx, id)
		if err == nil {
			last = state + " " + nodes
			switch {
			case state == "RUNNING" && nodes == node:
				return id, nil
			case state == "" || !activeJobStates[state]:
				return id, fmt.Errorf("job %s on %s ended before running: %s", id, node, last)
			}
		}
		select {
		case <-ctx.Done():
			return id, fmt.Errorf("job %s not running on %s (last: %q, %v): %w", id, node, last, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Cancel cancels the job and returns once it no longer runs and none of its
// nodes is COMPLETING.
func (c *RESTCluster) Cancel(ctx context.Context, jobID string) error {
	state, nodes, err := c.jobState(ctx, jobID)
	if err != nil {
		return err
	}
	var names []string
	if nodes != "" && nodes != "(null)" {
		out, err := c.Command(ctx, "scontrol", "show", "hostnames", nodes)
		if err != nil {
			return err
		}
		names = strings.Fields(out)
	}
	if activeJobStates[state] {
		if _, err := c.Command(ctx, "scancel", jobID); err != nil &&
			!strings.Contains(err.Error(), "already completing or completed") {
			return err
		}
	}
	for {
		state, _, err = c.jobState(ctx, jobID)
		done := err == nil && (state == "" || !activeJobStates[state])
		if done {
			states, err2 := c.nodeStates(ctx)
			err = err2
			for _, n := range names {
				if err2 != nil || strings.Contains(states[n].state, "COMPLETING") {
					done = false
				}
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("job %s still active after scancel (state %q, %v): %w", jobID, state, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// activeJobStates are the job states in which a job holds or waits for
// nodes.
var activeJobStates = map[string]bool{
	"PENDING": true, "CONFIGURING": true, "RUNNING": true, "SUSPENDED": true, "COMPLETING": true,
	"REQUEUED": true, "REQUEUE_HOLD": true, "REQUEUE_FED": true, "RESIZING": true, "SIGNALING": true,
	"STAGE_OUT": true, "STOPPED": true, "RESV_DEL_HOLD": true,
}

// jobState returns the job's state and node list; "" when Slurm no longer
// knows the job.
func (c *RESTCluster) jobState(ctx context.Context, id string) (state, nodes string, err error) {
	out, err := c.Command(ctx, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T %N")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return "", "", nil
		}
		return "", "", err
	}
	state, nodes, _ = strings.Cut(strings.TrimSpace(out), " ")
	return state, nodes, nil
}

type nodeState struct{ state, slurmdStart string }

// nodeStates reads "scontrol -o show nodes": each node's State (e.g. IDLE,
// ALLOCATED, IDLE+COMPLETING) and SlurmdStartTime (None before its slurmd
// registered).
func (c *RESTCluster) nodeStates(ctx context.Context) (map[string]nodeState, error) {
	out, err := c.Command(ctx, "scontrol", "-o", "show", "nodes")
	if err != nil {
		return nil, err
	}
	m := map[string]nodeState{}
	for _, l := range strings.Split(out, "\n") {
		var name string
		var st nodeState
		for _, f := range strings.Fields(l) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "NodeName":
				name = v
			case "State":
				st.state = v
			case "SlurmdStartTime":
				st.slurmdStart = v
			}
		}
		if name != "" {
			m[name] = st
		}
	}
	return m, nil
}

func ceilDiv(d, unit time.Duration) int { return int((d + unit - 1) / unit) }
