package cptest

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Serve is a running 'kubectl-vc serve' process started by a test.
type Serve struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// Health and Metrics are the loopback addresses of its endpoints.
	Health, Metrics string
	// Log is the file that receives its output.
	Log string
	// token, when set, is the bearer token its metrics and profiles are
	// read with, over HTTPS (StartProfiledServe).
	token string
}

// StartServe runs 'binary serve' with kubeconfig (unless args name another
// --kubeconfig) on free loopback ports for /readyz and /metrics, and waits
// until it is ready. It is SIGKILLed when the test ends if still running,
// and its last log lines are shown when the test failed.
func StartServe(t testing.TB, binary, kubeconfig string, args ...string) *Serve {
	t.Helper()
	p := &Serve{done: make(chan struct{}), Health: freeport.Addr(t), Metrics: freeport.Addr(t)}
	p.Log = filepath.Join(t.TempDir(), "serve.log")
	logf, err := os.Create(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	// Metrics over plain HTTP: the tests read them as a local user of
	// serve does (--metrics-secure=false); the HTTPS endpoint, its token
	// and permission checks are proven in test/install (TestMetricsAccess).
	full := []string{"serve", "--health-probe-bind-address=" + p.Health, "--metrics-bind-address=" + p.Metrics, "--metrics-secure=false"}
	hasKubeconfig := false
	for _, a := range args {
		hasKubeconfig = hasKubeconfig || strings.HasPrefix(a, "--kubeconfig")
	}
	if !hasKubeconfig {
		full = append(full, "--kubeconfig="+kubeconfig)
	}
	full = append(full, args...)
	p.cmd = exec.Command(binary, full...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("serve log (%v):\n%s", full, p.LastLog(40))
		}
	})
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("serve exited early: %v", p.err)
		}
		resp, err := http.Get("http://" + p.Health + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("serve not ready: %v\n%s", err, p.LastLog(40))
	}
	return p
}

// StartProfiledServe is StartServe with --profiling: its metrics and Go's
// profiles are served over HTTPS behind the API server's token and RBAC
// checks (serve refuses profiling otherwise), and read (Metric, Stacks,
// Get) with the token of a ServiceAccount of the test's own allowed to
// (ProfilerToken). kubeconfig (or the --kubeconfig in args) is serve's
// identity, which must be allowed to create TokenReviews and
// SubjectAccessReviews (the control plane's admin is); kube makes the
// ServiceAccount and its grant.
func StartProfiledServe(t testing.TB, binary, kubeconfig string, kube kubernetes.Interface, args ...string) *Serve {
	t.Helper()
	token := ProfilerToken(t, kube)
	p := StartServe(t, binary, kubeconfig, append(args, "--metrics-secure=true", "--profiling")...)
	p.token = token
	return p
}

// ProfilerToken makes a ServiceAccount (in namespace default) allowed to
// GET serve's /metrics and /debug/pprof/* (a ClusterRole of those
// non-resource URLs, bound to it), and returns a token of it for serve's
// HTTPS endpoint (FetchSecure). They are removed when the test ends.
func ProfilerToken(t testing.TB, kube kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	const ns = "default"
	sa, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kvc-test-profiler-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("profiler ServiceAccount: %v", err)
	}
	name := sa.Name // also the ClusterRole's and the binding's
	t.Cleanup(func() {
		ctx := context.Background()
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.CoreV1().ServiceAccounts(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics", "/debug/pprof/*"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("profiler ClusterRole: %v", err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("profiler ClusterRoleBinding: %v", err)
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("profiler token: %v", err)
	}
	return tok.Status.Token
}

// secureClient reads serve's HTTPS endpoint. It does not verify serve's
// certificate: a test's serve makes a self-signed one (the endpoint's
// checks are of the caller's token, which is what a test goes through).
var secureClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// FetchSecure GETs path from serve's HTTPS metrics address addr with the
// bearer token.
func FetchSecure(ctx context.Context, addr, token, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return secureClient.Do(req)
}

// Get GETs path from serve's metrics address: over HTTPS with its token
// when it was started by StartProfiledServe, over plain HTTP otherwise.
func (p *Serve) Get(path string) (*http.Response, error) {
	if p.token != "" {
		return FetchSecure(context.Background(), p.Metrics, p.token, path)
	}
	return http.Get("http://" + p.Metrics + path)
}

// Exited reports whether the process has ended.
func (p *Serve) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill is a crash: SIGKILL, no chance to clean up. It waits for the exit.
func (p *Serve) Kill() {
	if !p.Exited() {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
}

// Terminate sends SIGTERM and returns the exit error once the process ends.
func (p *Serve) Terminate(t testing.TB) error {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
		return nil
	}
}

// Metric sums the samples of a metric whose label text contains every given
// fragment (e.g. `queue_name="q1"`); found is false when there is none.
func (p *Serve) Metric(t testing.TB, name string, fragments ...string) (sum float64, found bool) {
	t.Helper()
	resp, err := p.Get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum, found, err = MetricSum(resp.Body, name, fragments...)
	if err != nil {
		t.Fatal(err)
	}
	return sum, found
}

// MetricSum adds up the samples of metric name in a Prometheus text
// exposition whose line contains every fragment (`code="403"`).
func MetricSum(r io.Reader, name string, fragments ...string) (sum float64, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, f := range fragments {
			if !strings.Contains(line, f) {
				continue lines
			}
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, false, fmt.Errorf("bad sample %q", line)
		}
		sum += v
		found = true
	}
	return sum, found, sc.Err()
}

// Writes is the number of API requests of the process that could change
// something (POST, PUT, PATCH, DELETE).
func (p *Serve) Writes(t testing.TB) float64 {
	t.Helper()
	var n float64
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		v, _ := p.Metric(t, "rest_client_requests_total", `method="`+m+`"`)
		n += v
	}
	return n
}

// LastLog returns the last n lines of the process's output.
func (p *Serve) LastLog(n int) string {
	b, _ := os.ReadFile(p.Log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Err is the exit error of the process, meaningful once Exited is true.
func (p *Serve) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Stacks returns the goroutine stacks of a serve started with
// StartProfiledServe that mention every given fragment (all stacks when none is given), read
// from its /debug/pprof/ without stopping it: what a test that timed out
// shows of what serve was busy with.
func (p *Serve) Stacks(fragments ...string) (string, error) {
	resp, err := p.Get("/debug/pprof/goroutine?debug=2")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("/debug/pprof/goroutine: %s (was serve started with StartProfiledServe?)", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var kept []string
stacks:
	for _, g := range strings.Split(string(b), "\n\n") {
		for _, f := range fragments {
			if !strings.Contains(g, f) {
				continue stacks
			}
		}
		kept = append(kept, g)
	}
	return strings.Join(kept, "\n\n"), nil
}
