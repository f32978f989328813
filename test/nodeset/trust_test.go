package nodeset

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// tokenTrap is an HTTP server standing where a tenant points serve: it
// records every request and the Slurm token it carried.
type tokenTrap struct {
	srv    *httptest.Server
	mu     sync.Mutex
	tokens []string
	hits   int
}

func newTokenTrap(t *testing.T) *tokenTrap {
	tr := &tokenTrap{}
	tr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tr.hits++
		if tok := r.Header.Get("X-SLURM-USER-TOKEN"); tok != "" {
			tr.tokens = append(tr.tokens, tok)
		}
		tr.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(tr.srv.Close)
	return tr
}

func (tr *tokenTrap) seen() (hits int, tokens []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.hits, append([]string(nil), tr.tokens...)
}

// secretReads counts the GETs of Secrets a client sends, per namespace.
type secretReads struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (s *secretReads) RoundTrip(r *http.Request) (*http.Response, error) {
	// /api/v1/namespaces/<ns>/secrets/<name>
	if p := strings.Split(r.URL.Path, "/"); len(p) == 7 && p[5] == "secrets" {
		s.mu.Lock()
		s.n[p[4]]++
		s.mu.Unlock()
	}
	return s.next.RoundTrip(r)
}

func (s *secretReads) in(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[ns]
}

// tenantWorld is what a principal who may write Slinky's objects and
// Services, but not read Secrets, makes in a namespace: a Controller naming
// the key Secret keySecret/keyName, a RestApi of it, its Service, and a
// NodeSet; as that principal, through the API server's RBAC.
func tenantWorld(e *env, tenantKube kubernetes.Interface, tenantVC versioned.Interface, ns, keySecret, keyName string) *corev1.Service {
	t := e.T
	if _, err := tenantKube.CoreV1().Secrets(ns).Get(e.Ctx, keySecret, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the tenant reads Secret %s/%s: %v (the test needs a tenant who may not)", ns, keySecret, err)
	}
	_, err := tenantVC.SlinkyV1beta1().Controllers(ns).Create(e.Ctx, &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm"},
		Spec: slinkyv1beta1.ControllerSpec{
			JwtKeyRef:   &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: keySecret}, Key: keyName},
			SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-slurm"}, Key: "slurm.key"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tenantVC.SlinkyV1beta1().RestApis(ns).Create(e.Ctx, &slinkyv1beta1.RestApi{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm"},
		Spec:       slinkyv1beta1.RestApiSpec{ControllerRef: corev1.LocalObjectReference{Name: "slurm"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := tenantKube.CoreV1().Services(ns).Create(e.Ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm" + slinkyv1beta1.RestApiServiceSuffix},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "slurmrestd", Port: slinkyv1beta1.SlurmrestdPort}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tenantVC.SlinkyV1beta1().NodeSets(ns).Create(e.Ctx, &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To[int32](1),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestSlurmKeyNotLentToTenant: a user bound to a Role that lets them write
// Slinky's Controllers, RestApis and NodeSets and Services, but not read
// Secrets, points serve's NodeSet controller at a key Secret of their
// namespace and at an address of their own (the "trap"). Where the
// administrator has not named the namespace (--slurm-namespaces), serve reads
// no Secret there, sends nothing and acts on nothing (NamespaceNotServed); in
// a named namespace
// it signs with no Secret that has not opted in, a database password say
// (KeyNotTrusted). The last step shows the trap would have caught a token:
// with the key Secret as Slinky's chart makes it, in a named namespace,
// serve signs and sends, as the trust model says it then may.
func TestSlurmKeyNotLentToTenant(t *testing.T) {
	restOnly(t)
	e := startWithoutController(t, "trust", 1)
	rb := e.Slurm.(*nodesets.RESTBackend)
	untrusted := e.NS
	trusted := "ns-" + rand.String(6)
	admin := e.Kube
	if _, err := admin.CoreV1().Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: trusted}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(e.Ctx, trusted, metav1.DeleteOptions{}) })

	// The tenant: a real user of the API server (impersonated by the
	// admin), bound in both namespaces to a Role without Secrets.
	user := "tenant-" + rand.String(5)
	for _, ns := range []string{untrusted, trusted} {
		if _, err := admin.RbacV1().Roles(ns).Create(e.Ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "slinky-writer"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"slinky.slurm.net"}, Resources: []string{"controllers", "restapis", "nodesets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
				{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(e.Ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "slinky-writer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "slinky-writer"},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The namespace's keys, as its administrator made them: Slurm's JWT
		// key as Slinky's chart creates it, and a database password.
		for _, s := range []*corev1.Secret{
			{ObjectMeta: metav1.ObjectMeta{Name: "slurm-auth-jwt", Labels: map[string]string{
				"app.kubernetes.io/part-of": "slurm", "helm.sh/chart": "slurm-1.0.0", "app.kubernetes.io/managed-by": "Helm"}},
				Data: map[string][]byte{"jwt.key": rb.Cluster.JWTKey}},
			{ObjectMeta: metav1.ObjectMeta{Name: "db-password"},
				Data: map[string][]byte{"password": []byte("the accounting database's password, 32+ bytes")}},
		} {
			if _, err := admin.CoreV1().Secrets(ns).Create(e.Ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tcfg := rest.CopyConfig(cp.AdminConfig())
	tcfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	tenantKube := kubernetes.NewForConfigOrDie(tcfg)
	tenantVC := versioned.NewForConfigOrDie(tcfg)

	trap := newTokenTrap(t)
	trapAddr := strings.TrimPrefix(trap.srv.URL, "http://")
	routes := &clusterIPRoutes{routes: map[string]string{}}
	route := func(svc *corev1.Service, to string) {
		routes.set(svc.Spec.ClusterIP+":6820", to)
	}

	// The untrusted namespace: the chart's own key, an address of the
	// tenant's.
	route(tenantWorld(e, tenantKube, tenantVC, untrusted, "slurm-auth-jwt", "jwt.key"), trapAddr)
	// The trusted one: the database password.
	route(tenantWorld(e, tenantKube, tenantVC, trusted, "db-password", "password"), trapAddr)

	reads := &secretReads{next: http.DefaultTransport, n: map[string]int{}}
	ccfg := rest.CopyConfig(cp.AdminConfig())
	ccfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { reads.next = rt; return reads })
	e.runControllerWith(controllerOptions{kube: kubernetes.NewForConfigOrDie(ccfg),
		flags: []string{"--slurm-namespaces=" + trusted},
		config: func(c *nodeset.Config) {
			c.RESTTransport = routes.transport()
			c.KeyTTL = time.Second
		}})

	in := func(ns string) *env { return &env{&nodesets.Env{T: e.T, Ctx: e.Ctx, Kube: e.Kube, VC: e.VC, NS: ns}} }
	in(untrusted).waitReachable("tenant", "False", nodeset.ReasonNotServed, "--slurm-namespaces")
	in(trusted).waitReachable("tenant", "False", nodeset.ReasonKeyNotTrusted, slinky.KeyLabel)
	// A few more syncs (Resync is 1 s), then count.
	time.Sleep(3 * time.Second)
	if n := reads.in(untrusted); n != 0 {
		t.Errorf("serve read %d Secrets in %s, a namespace not named in --slurm-namespaces", n, untrusted)
	}
	if hits, toks := trap.seen(); hits != 0 || len(toks) != 0 {
		t.Fatalf("serve sent %d requests, %d tokens, to the tenant's address: %q", hits, len(toks), toks)
	}

	// The trap catches what is sent: the tenant points the trusted
	// namespace's Controller at the chart's key Secret, which serve may
	// sign with there; the token goes where the tenant's Service says. This
	// is the trust --slurm-namespaces states (docs/security.md).
	if _, err := tenantVC.SlinkyV1beta1().Controllers(trusted).Patch(e.Ctx, "slurm", "application/merge-patch+json",
		[]byte(`{"spec":{"jwtKeyRef":{"name":"slurm-auth-jwt","key":"jwt.key"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("a token at the trap from the trusted namespace", func() (bool, string) {
		hits, toks := trap.seen()
		return len(toks) > 0, fmt.Sprintf("%d requests, %d tokens", hits, len(toks))
	})
	if n := reads.in(trusted); n == 0 {
		t.Errorf("no Secret read in the trusted namespace %s: the count sees nothing", trusted)
	}
}
