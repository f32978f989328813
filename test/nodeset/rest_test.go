package nodeset

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// restOnly skips a test of what only the REST client does when the suite
// runs over the Slurm commands.
func restOnly(t *testing.T) {
	t.Helper()
	if nodesets.RESTSuite(t) == nil {
		t.Skipf("over slurmrestd only: 'make test' runs it with %s=slurm-24.11 and slurm-26.05", nodesets.SlurmEnv)
	}
}

// clusterIPRoutes is a dialer that takes a Service's cluster IP and port
// to slurmrestd's loopback address: no kube-proxy runs beside this
// package's API server. Only the routes set are dialled; any other address
// fails, so the controller must have found the right cluster IP itself.
type clusterIPRoutes struct {
	mu     sync.Mutex
	routes map[string]string
}

func (r *clusterIPRoutes) set(from, to string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routes[from] = to
}

func (r *clusterIPRoutes) transport() http.RoundTripper {
	var d net.Dialer
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		r.mu.Lock()
		to, ok := r.routes[addr]
		r.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("no route to %s in this test", addr)
		}
		return d.DialContext(ctx, network, to)
	}}
}

// condition returns the NodeSet's SlurmReachable condition.
func (e *env) reachable(name string) *metav1.Condition {
	return meta.FindStatusCondition(e.Get(name).Status.Conditions, "SlurmReachable")
}

func (e *env) waitReachable(name, status, reason, fragment string) {
	e.T.Helper()
	e.Eventually(fmt.Sprintf("SlurmReachable %s/%s", status, reason), func() (bool, string) {
		c := e.reachable(name)
		return c != nil && string(c.Status) == status && c.Reason == reason && strings.Contains(c.Message, fragment), fmt.Sprintf("%+v", c)
	})
}

// TestFindsSlurmAsSlinky: with no client and no flags the controller finds
// each NodeSet's slurmrestd the way Slinky's operator does: spec.controllerRef
// → Controller → the RestApi naming it → Service <restapi>-restapi (its
// cluster IP, port 6820) and the JWT key in the Secret of the Controller's
// jwtKeyRef. Each missing piece is named in SlurmReachable=False, and no
// pod is made or removed meanwhile; a wrong key is "Unauthorized" and
// stops a scale-in; the right key lets it drain over REST.
func TestFindsSlurmAsSlinky(t *testing.T) {
	restOnly(t)
	e := startWithoutController(t, "disc", 2)
	rb := e.Slurm.(*nodesets.RESTBackend)
	routes := &clusterIPRoutes{routes: map[string]string{}}
	// The administrator trusts this namespace with its Slurm key.
	e.runControllerWith(controllerOptions{discover: true, events: true, flags: []string{"--slurm-namespaces=" + e.NS}, config: func(c *nodeset.Config) {
		c.RESTTransport = routes.transport()
		c.KeyTTL = time.Second
	}})
	e.NewNodeSet("disc", 2)

	e.waitReachable("disc", "False", "ControllerNotFound", "Slinky Controller "+e.NS+"/slurm")
	if n := len(e.Pods()); n != 0 {
		t.Fatalf("%d pods made while Slurm could not be found", n)
	}
	if f := e.doctorNodeSet("disc"); f.Status != doctor.Fail || !strings.Contains(f.Message, "ControllerNotFound") || f.Fix == "" {
		t.Fatalf("doctor on a NodeSet without its Controller: %+v", f)
	}
	_, err := e.VC.SlinkyV1beta1().Controllers(e.NS).Create(e.Ctx, &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm"},
		Spec: slinkyv1beta1.ControllerSpec{
			JwtKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-jwt"}, Key: "jwt_hs256.key"},
			// Required by the CRD; the NodeSet controller mounts it in slurmd.
			SlurmKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-key"}, Key: "slurm.key"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.waitReachable("disc", "False", "RestApiNotFound", "no Slinky RestApi")
	// A RestApi of another Controller does not count.
	for name, ctrl := range map[string]string{"other": "another", "slurm": "slurm"} {
		_, err = e.VC.SlinkyV1beta1().RestApis(e.NS).Create(e.Ctx, &slinkyv1beta1.RestApi{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       slinkyv1beta1.RestApiSpec{ControllerRef: corev1.LocalObjectReference{Name: ctrl}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	e.waitReachable("disc", "False", "ServiceNotFound", "Service "+e.NS+"/slurm-restapi")
	svc, err := e.Kube.CoreV1().Services(e.NS).Create(e.Ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm-restapi"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "slurmrestd", Port: 6820}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restd, err := url.Parse(rb.Cluster.URL)
	if err != nil {
		t.Fatal(err)
	}
	routes.set(net.JoinHostPort(svc.Spec.ClusterIP, "6820"), restd.Host)
	e.waitReachable("disc", "False", "SecretNotFound", "JWT key Secret "+e.NS+"/slurm-jwt")

	// Marked by whoever made it as a key serve may sign with.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "slurm-jwt", Labels: map[string]string{slinky.KeyLabel: "true"}},
		Data: map[string][]byte{"jwt_hs256.key": rb.Cluster.JWTKey}}
	if _, err := e.Kube.CoreV1().Secrets(e.NS).Create(e.Ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitReachable("disc", "True", "Refreshed", "over REST v0.0.4")
	if f := e.doctorNodeSet("disc"); f.Status != doctor.OK || !strings.Contains(f.Message, "over REST v0.0.4") {
		t.Fatalf("doctor on a NodeSet that reaches Slurm: %+v", f)
	}
	if c := e.reachable("disc"); !strings.Contains(c.Message, "http://"+svc.Spec.ClusterIP+":6820") ||
		!strings.Contains(c.Message, "RestApi slurm") {
		t.Fatalf("condition does not say where Slurm is: %s", c.Message)
	}
	e.Eventually("two ready pods, idle in Slurm", func() (bool, string) {
		e.MarkAllReady()
		st := e.Get("disc").Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})

	// A wrong key: slurmrestd refuses the token; nothing is done.
	secret.Data["jwt_hs256.key"] = []byte("a key that is not the cluster's, 32+ bytes long")
	if _, err := e.Kube.CoreV1().Secrets(e.NS).Update(e.Ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitReachable("disc", "False", "Unauthorized", "HTTP 511")
	e.PatchNodeSet("disc", `{"spec":{"replicas":1}}`)
	gen := e.Get("disc").Generation
	e.Eventually("the scale-in seen", func() (bool, string) {
		st := e.Get("disc").Status
		return st.ObservedGeneration == gen, fmt.Sprintf("%+v", st)
	})
	for name, p := range e.Pods() {
		if _, ok := p.Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
			t.Fatalf("%s cordoned with a refused token", name)
		}
		if got := e.SlurmState(name); got != "IDLE" {
			t.Fatalf("%s is %s with a refused token", name, got)
		}
	}
	if n := len(e.Pods()); n != 2 {
		t.Fatalf("%d pods with a refused token, want 2", n)
	}
	// Events reach the API server after the status that the sync wrote
	// (the recorder sends them from a goroutine of its own): waited for.
	e.Eventually("a SlurmUnreachable event naming the refusal", func() (bool, string) {
		ev := e.events("disc", "SlurmUnreachable")
		return strings.Contains(strings.Join(ev, "\n"), "HTTP 511"), fmt.Sprintf("%q", ev)
	})

	// The right key again: the scale-in drains disc-1 over REST, then deletes it.
	secret.Data["jwt_hs256.key"] = rb.Cluster.JWTKey
	if _, err := e.Kube.CoreV1().Secrets(e.NS).Update(e.Ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("scaled in after a drain", func() (bool, string) {
		return len(e.Pods()) == 1 && e.Pods()["disc-0"] != nil, names(e.Pods())
	})
	if got := e.SlurmState("disc-1"); got != "DRAINED (kubectl-vc: scale-in)" {
		t.Fatalf("disc-1 is %s after the scale-in", got)
	}
	e.waitReachable("disc", "True", "Refreshed", "over REST")
}

// TestTokenRenewed: the JWTs the controller signs are renewed before they
// end. slurmrestd refuses an expired token (so an unrenewed one would stop
// the controller), yet the controller, run from serve's flags
// (--slurm-rest-url, --slurm-jwt-key-file), still reads Slurm and drains a
// node two lifetimes of its tokens after it first signed one.
//
// The controller's tokens live 20 s and are renewed a fifth of that, 4 s,
// before they end (nodeset's applyTokenLifetime). That margin must cover a
// request's way to slurmrestd, a CPU stall of 2-3 s on a loaded machine
// included, and the token's exp claim, which is whole seconds rounded
// down (up to 1 s earlier than the signer's reckoning). Tokens of 3 s,
// renewed 0.6 s before, reached slurmrestd expired.
func TestTokenRenewed(t *testing.T) {
	restOnly(t)
	e := startWithoutController(t, "tok", 2)
	rb := e.Slurm.(*nodesets.RESTBackend)
	const life = 20 * time.Second

	// A token of 10 s, never renewed, for the premise below: accepted
	// now (it must outlast a stall before this first request), refused
	// once it has ended.
	old, err := slurm.NewSignedToken(rb.Cluster.JWTKey, "")
	if err != nil {
		t.Fatal(err)
	}
	old.SetLifetime(10*time.Second, 0)
	tok, err := old.Token(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := slurm.NewREST(slurm.RESTConfig{URL: rb.Cluster.URL, Token: fixedToken(tok)})
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Refresh(e.Ctx); err != nil {
		t.Fatalf("a fresh token: %v", err)
	}

	e.runControllerWith(controllerOptions{flags: rb.ServeFlags(t), config: func(c *nodeset.Config) { c.TokenLifetime = life }})
	e.NewNodeSet("tok", 2)
	e.Eventually("two ready pods, idle in Slurm", func() (bool, string) {
		e.MarkAllReady()
		st := e.Get("tok").Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})
	// The controller signed its first token before it could see the pods
	// idle in Slurm; two lifetimes on, that token and the next have ended.
	time.Sleep(2 * life)
	// The premise: this slurmrestd refuses an expired token (the 10 s one
	// ended at least 30 s ago).
	if err := stale.Refresh(e.Ctx); err == nil || !strings.Contains(err.Error(), "HTTP 511") {
		t.Fatalf("an expired token was not refused: %v", err)
	}
	e.waitReachable("tok", "True", "Refreshed", "over REST")
	e.PatchNodeSet("tok", `{"spec":{"replicas":1}}`)
	e.Eventually("scaled in after a drain", func() (bool, string) {
		return len(e.Pods()) == 1, names(e.Pods())
	})
	if got := e.SlurmState("tok-1"); got != "DRAINED (kubectl-vc: scale-in)" {
		t.Fatalf("tok-1 is %s", got)
	}
	e.waitReachable("tok", "True", "Refreshed", "over REST")
}

// doctorNodeSet is doctor's finding about the NodeSet.
func (e *env) doctorNodeSet(name string) doctor.Finding {
	e.T.Helper()
	_, out, errOut := e.vcCmd(controlplane.AdminUser, "doctor", "-o", "json")
	var r doctor.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.T.Fatalf("doctor -o json: %v\n%s%s", err, out, errOut)
	}
	for _, f := range r.Checks {
		if f.Check == "nodesets" && slices.Contains(f.Objects, e.NS+"/"+name) {
			return f
		}
	}
	e.T.Fatalf("doctor says nothing about NodeSet %s:\n%s", name, out)
	return doctor.Finding{}
}

type fixedToken string

func (f fixedToken) Token(context.Context) (string, error) { return string(f), nil }
