package compat

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/slinkyoperator"
)

// The CRDs of Slinky operator's kinds that kubectl-vc reads.
var slinkyOperatorCRDNames = []string{"controllers.slinky.slurm.net", "restapis.slinky.slurm.net"}

// slinkyOperatorFixtures are Controllers and RestApis as Slinky's operator
// and its Helm chart write them: many fields we do not model, alongside the
// few we read.
const slinkyOperatorFixtures = `
apiVersion: slinky.slurm.net/v1beta1
kind: Controller
metadata: {name: slurm, namespace: default}
spec:
  clusterName: kvc
  slurmKeyRef: {name: slurm-auth-slurm, key: slurm.key}
  jwtKeyRef: {name: slurm-auth-jwt, key: jwt_hs256.key}
  jwksKeyRef: {name: slurm-jwks, key: jwks.json}
  accountingRef: {name: slurm}
  inplaceReconfigure: true
  slurmctld:
    image: ghcr.io/slinkyproject/slurmctld:25.05-ubuntu24.04
    resources: {limits: {cpu: "2", memory: 2Gi}}
  reconfigure: {image: ghcr.io/slinkyproject/slurmctld:25.05-ubuntu24.04}
  logfile: {image: docker.io/library/alpine:latest}
  template:
    metadata: {labels: {team: hpc}, annotations: {note: fixture}}
    spec: {nodeSelector: {kubernetes.io/os: linux}, priorityClassName: high}
  extraConf: "SchedulerParameters=defer"
  configFileRefs: [{name: slurm-extra-conf}]
  prologScriptRefs: [{name: slurm-prolog}]
  epilogScriptRefs: [{name: slurm-epilog}]
  prologSlurmctldScriptRefs: [{name: slurm-prolog-ctld}]
  epilogSlurmctldScriptRefs: [{name: slurm-epilog-ctld}]
  persistence:
    enabled: true
    accessModes: [ReadWriteOnce]
    resources: {requests: {storage: 4Gi}}
  service:
    metadata: {labels: {exposed: "no"}}
    spec: {type: ClusterIP}
  metrics: {enabled: true, serviceMonitor: {enabled: false}}
  ha: {enabled: false}
---
apiVersion: slinky.slurm.net/v1beta1
kind: Controller
metadata: {name: legacy, namespace: default}
spec:
  clusterName: legacy
  slurmKeyRef: {name: legacy-auth-slurm, key: slurm.key}
  jwtHs256KeyRef: {name: legacy-auth-jwths256, key: jwt_hs256.key, optional: false}
  slurmctld: {image: ghcr.io/slinkyproject/slurmctld:24.11-ubuntu24.04}
---
apiVersion: slinky.slurm.net/v1beta1
kind: Controller
metadata: {name: outside, namespace: default}
spec:
  clusterName: outside
  external: true
  externalConfig: {host: slurmctld.example.org, port: 6817}
---
apiVersion: slinky.slurm.net/v1beta1
kind: RestApi
metadata: {name: slurm, namespace: default}
spec:
  controllerRef: {name: slurm}
  replicas: 2
  slurmrestd:
    image: ghcr.io/slinkyproject/slurmrestd:25.05-ubuntu24.04
    env: [{name: SLURMRESTD_SECURITY, value: disable_unshare_files}]
  template:
    metadata: {labels: {team: hpc}}
    spec: {tolerations: [{key: dedicated, operator: Exists}]}
  service:
    metadata: {annotations: {note: fixture}}
    spec: {type: ClusterIP}
---
apiVersion: slinky.slurm.net/v1beta1
kind: RestApi
metadata: {name: legacy, namespace: default}
spec:
  controllerRef: {name: legacy}
  service: {port: 16820, nodePort: 30820, spec: {type: NodePort}}
`

// TestSlinkyOperatorKindsOnUpstreamCRDs serves Slinky's own Controller and
// RestApi CRDs and checks our read-only types against them: our generated
// CRDs carry upstream's names and a schema upstream's covers; objects in
// upstream's shape, written with the dynamic client, read correctly through
// our clientset and listers; objects written with our clientset are
// accepted by upstream's validation.
func TestSlinkyOperatorKindsOnUpstreamCRDs(t *testing.T) {
	all, err := crds.LoadDir(cptest.UpstreamCRDs(t, "slinky-crds"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range all {
		byName[c.Name] = c
	}
	var upstream []*apiextensionsv1.CustomResourceDefinition
	for _, name := range slinkyOperatorCRDNames {
		if byName[name] == nil {
			t.Fatalf("upstream slinky-crds lacks %s", name)
		}
		upstream = append(upstream, byName[name])
	}
	t.Run("generated CRDs", func(t *testing.T) {
		ours, err := slinkyoperator.CRDs()
		if err != nil {
			t.Fatal(err)
		}
		if len(ours) != len(slinkyOperatorCRDNames) {
			t.Fatalf("pkg/crds/slinkyoperator holds %d CRDs, want %v", len(ours), slinkyOperatorCRDNames)
		}
		for _, c := range ours {
			up := byName[c.Name]
			if up == nil {
				t.Errorf("%s has no upstream counterpart", c.Name)
				continue
			}
			compareReadOnlyCRD(t, c, up)
		}
	})
	t.Run("server", func(t *testing.T) {
		cfg := startWith(t, func(ctx context.Context, cp *controlplane.ControlPlane) error {
			return crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), "test", upstream...)
		})
		checkSlinkyOperatorKinds(t, cfg)
	})
}

// TestSlinkyOperatorKindsOnGeneratedCRDs does the same reads and writes
// against the CRDs generated from our types (cptest.InstallSlinkyOperatorCRDs,
// what other tests use for fixtures): upstream-shaped objects keep the
// fields we do not model, and upstream's validation rules on the fields we
// do model hold there too.
func TestSlinkyOperatorKindsOnGeneratedCRDs(t *testing.T) {
	checkSlinkyOperatorKinds(t, startWith(t, cptest.InstallSlinkyOperatorCRDs))
}

// startWith starts an API server of its own (the shared one serves neither
// kind, and must not get one set of these CRDs while another test wants the
// other), prepared by install, and stops it when the test ends.
func startWith(t *testing.T, install func(context.Context, *controlplane.ControlPlane) error) *rest.Config {
	t.Helper()
	c, err := controlplane.Start(ctxT(t), controlplane.Options{BeforeControllers: install})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c.AdminConfig()
}

// compareReadOnlyCRD checks a CRD generated from our read-only types
// against upstream's: same group, names, scope, version and printer
// columns; every part of our schema in upstream's, descriptions aside (our
// schema models fewer fields and keeps the others, so it adds
// preserve-unknown-fields); our validation rules among upstream's.
func compareReadOnlyCRD(t *testing.T, ours, up *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if ours.Spec.Group != up.Spec.Group || ours.Spec.Scope != up.Spec.Scope || !reflect.DeepEqual(ours.Spec.Names, up.Spec.Names) {
		t.Errorf("%s: group/scope/names differ.\nours:     %s %s %+v\nupstream: %s %s %+v", ours.Name,
			ours.Spec.Group, ours.Spec.Scope, ours.Spec.Names, up.Spec.Group, up.Spec.Scope, up.Spec.Names)
	}
	if len(ours.Spec.Versions) != 1 || len(up.Spec.Versions) != 1 {
		t.Fatalf("%s: want one version on each side, ours %d, upstream %d", ours.Name, len(ours.Spec.Versions), len(up.Spec.Versions))
	}
	ov, uv := ours.Spec.Versions[0], up.Spec.Versions[0]
	if ov.Name != uv.Name || ov.Served != uv.Served || ov.Storage != uv.Storage || ov.Name != "v1beta1" || !ov.Served || !ov.Storage {
		t.Errorf("%s: version %s served=%v storage=%v, upstream %s served=%v storage=%v", ours.Name,
			ov.Name, ov.Served, ov.Storage, uv.Name, uv.Served, uv.Storage)
	}
	if !reflect.DeepEqual(ov.AdditionalPrinterColumns, uv.AdditionalPrinterColumns) {
		t.Errorf("%s: printer columns %+v, upstream %+v", ours.Name, ov.AdditionalPrinterColumns, uv.AdditionalPrinterColumns)
	}
	toMap := func(s *apiextensionsv1.JSONSchemaProps) map[string]any {
		b, err := json.Marshal(s.Properties["spec"])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return stripKey(m, "description").(map[string]any)
	}
	o, u := toMap(ov.Schema.OpenAPIV3Schema), toMap(uv.Schema.OpenAPIV3Schema)
	ourRules, _ := o["x-kubernetes-validations"].([]any)
	upRules, _ := u["x-kubernetes-validations"].([]any)
	for _, r := range ourRules {
		if !slices.ContainsFunc(upRules, func(x any) bool { return reflect.DeepEqual(x, r) }) {
			t.Errorf("%s: our rule %v is not upstream's", ours.Name, r)
		}
	}
	delete(o, "x-kubernetes-validations")
	delete(u, "x-kubernetes-validations")
	dropPreserveUnknown(o)
	for _, d := range schemaCovers(u, o, "spec") {
		t.Errorf("%s: upstream's schema does not cover ours: %s", ours.Name, d)
	}
}

// dropPreserveUnknown removes x-kubernetes-preserve-unknown-fields from the
// schema s and its properties where s also lists properties (ours marks the
// partly modelled objects so); a schemaless node keeps it.
func dropPreserveUnknown(s map[string]any) {
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return
	}
	delete(s, "x-kubernetes-preserve-unknown-fields")
	for _, p := range props {
		if m, ok := p.(map[string]any); ok {
			dropPreserveUnknown(m)
		}
	}
}

var (
	controllersGVR = slinkyv1beta1.SchemeGroupVersion.WithResource("controllers")
	restapisGVR    = slinkyv1beta1.SchemeGroupVersion.WithResource("restapis")
)

func checkSlinkyOperatorKinds(t *testing.T, cfg *rest.Config) {
	ctx := ctxT(t)
	dyn := dynamic.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)
	const ns = "default"

	// Upstream-shaped objects, written as any other tool would.
	sent := map[string]*unstructured.Unstructured{}
	for _, doc := range splitYAML(t, slinkyOperatorFixtures) {
		u := &unstructured.Unstructured{Object: doc}
		gvr := map[string]schema.GroupVersionResource{"Controller": controllersGVR, "RestApi": restapisGVR}[u.GetKind()]
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		sent[u.GetKind()+"/"+u.GetName()] = u
	}

	// Read through our clientset.
	ctrl := func(name string) *slinkyv1beta1.Controller {
		t.Helper()
		c, err := vc.SlinkyV1beta1().Controllers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get Controller %s: %v", name, err)
		}
		return c
	}
	slurm, legacy, outside := ctrl("slurm"), ctrl("legacy"), ctrl("outside")
	wantSel := func(name, key string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
	}
	if got, want := slurm.JWTKeySelector(), wantSel("slurm-auth-jwt", "jwt_hs256.key"); !reflect.DeepEqual(got, want) {
		t.Errorf("slurm: JWTKeySelector %+v, want %+v", got, want)
	}
	if slurm.Spec.JwtHs256KeyRef != nil || slurm.Spec.External || slurm.Spec.ExternalConfig != nil {
		t.Errorf("slurm: unexpected spec %+v", slurm.Spec)
	}
	if got, want := slurm.Spec.SlurmKeyRef, wantSel("slurm-auth-slurm", "slurm.key"); !reflect.DeepEqual(got, want) {
		t.Errorf("slurm: slurmKeyRef %+v, want %+v", got, want)
	}
	legacyWant := wantSel("legacy-auth-jwths256", "jwt_hs256.key")
	legacyWant.Optional = new(bool)
	if got := legacy.JWTKeySelector(); !reflect.DeepEqual(got, legacyWant) || legacy.Spec.JwtKeyRef != nil {
		t.Errorf("legacy: JWTKeySelector %+v (jwtKeyRef %+v), want jwtHs256KeyRef %+v", got, legacy.Spec.JwtKeyRef, legacyWant)
	}
	if !outside.Spec.External || outside.Spec.ExternalConfig == nil ||
		*outside.Spec.ExternalConfig != (slinkyv1beta1.ExternalConfig{Host: "slurmctld.example.org", Port: 6817}) ||
		outside.JWTKeySelector() != nil {
		t.Errorf("outside: external %v, externalConfig %+v, JWTKeySelector %+v", outside.Spec.External, outside.Spec.ExternalConfig, outside.JWTKeySelector())
	}
	for name, wantPort := range map[string]int32{"slurm": 6820, "legacy": 16820} {
		r, err := vc.SlinkyV1beta1().RestApis(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.ControllerRef.Name != name || r.ServiceName() != name+"-restapi" || r.ServicePort() != wantPort {
			t.Errorf("RestApi %s: controllerRef %q, Service %s:%d; want %q, %s-restapi:%d", name,
				r.Spec.ControllerRef.Name, r.ServiceName(), r.ServicePort(), name, name, wantPort)
		}
	}

	// Read through listers, as the NodeSet controller does: the RestApi of
	// a Controller is the one whose controllerRef names it.
	factory := externalversions.NewSharedInformerFactoryWithOptions(vc, 0, externalversions.WithNamespace(ns))
	controllers := factory.Slinky().V1beta1().Controllers()
	restapis := factory.Slinky().V1beta1().RestApis()
	_, _ = controllers.Informer(), restapis.Informer()
	// Shutdown waits for the informers, which stop when informerCtx ends.
	informerCtx, stopInformers := context.WithCancel(ctx)
	defer factory.Shutdown()
	defer stopInformers()
	factory.Start(informerCtx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("cache of %v did not sync", typ)
		}
	}
	for _, name := range []string{"slurm", "legacy"} {
		c, err := controllers.Lister().Controllers(ns).Get(name)
		if err != nil {
			t.Fatalf("lister: %v", err)
		}
		if c.JWTKeySelector() == nil {
			t.Errorf("lister: Controller %s has no JWT key selector", name)
		}
		list, err := restapis.Lister().RestApis(ns).List(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, r := range list {
			if r.Spec.ControllerRef.Name == c.Name {
				found = append(found, r.ServiceName())
			}
		}
		if !reflect.DeepEqual(found, []string{name + "-restapi"}) {
			t.Errorf("lister: Services of the RestApis of Controller %s: %v, want [%s-restapi]", name, found, name)
		}
	}
	if c, err := controllers.Lister().Controllers(ns).Get("outside"); err != nil || !c.Spec.External {
		t.Errorf("lister: Controller outside: %+v, %v", c, err)
	}

	// The fields we do not model stay on the server (upstream: in its
	// schema; ours: preserved unknown fields).
	for key, u := range sent {
		gvr := map[string]schema.GroupVersionResource{"Controller": controllersGVR, "RestApi": restapisGVR}[u.GetKind()]
		got, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range schemaCovers(normalize(got.Object["spec"]), normalize(u.Object["spec"]), key+".spec") {
			t.Errorf("a field sent was not kept: %s", d)
		}
	}

	// Objects written through our clientset (test fixtures) pass the
	// CRD's validation, and the server keeps what was sent.
	typed := []*slinkyv1beta1.Controller{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: ns},
			Spec: slinkyv1beta1.ControllerSpec{
				SlurmKeyRef: wantSel("typed-auth-slurm", "slurm.key"),
				JwtKeyRef:   wantSel("typed-auth-jwt", "jwt_hs256.key"),
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "typed-legacy", Namespace: ns},
			Spec: slinkyv1beta1.ControllerSpec{
				SlurmKeyRef:    wantSel("typed-auth-slurm", "slurm.key"),
				JwtHs256KeyRef: wantSel("typed-auth-jwt", "jwt_hs256.key"),
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "typed-external", Namespace: ns},
			Spec: slinkyv1beta1.ControllerSpec{
				External:       true,
				ExternalConfig: &slinkyv1beta1.ExternalConfig{Host: "10.0.0.1", Port: 6817},
			},
		},
	}
	for _, c := range typed {
		created, err := vc.SlinkyV1beta1().Controllers(ns).Create(ctx, c, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create Controller %s through our clientset: %v", c.Name, err)
		}
		if !reflect.DeepEqual(created.Spec, c.Spec) {
			t.Errorf("Controller %s: spec read back %+v, sent %+v", c.Name, created.Spec, c.Spec)
		}
		checkKept(t, dyn, controllersGVR, ns, c.Name, c.Spec)
	}
	r := &slinkyv1beta1.RestApi{
		ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: ns},
		Spec: slinkyv1beta1.RestApiSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "typed"},
			Service:       &slinkyv1beta1.RestApiService{Port: 6821},
		},
	}
	createdR, err := vc.SlinkyV1beta1().RestApis(ns).Create(ctx, r, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create RestApi through our clientset: %v", err)
	}
	if !reflect.DeepEqual(createdR.Spec, r.Spec) || createdR.ServicePort() != 6821 {
		t.Errorf("RestApi typed: spec read back %+v, sent %+v", createdR.Spec, r.Spec)
	}
	checkKept(t, dyn, restapisGVR, ns, r.Name, r.Spec)

	// Upstream's rules apply: an in-cluster Controller needs a JWT key.
	_, err = vc.SlinkyV1beta1().Controllers(ns).Create(ctx, &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: "typed-nojwt", Namespace: ns},
		Spec:       slinkyv1beta1.ControllerSpec{SlurmKeyRef: wantSel("typed-auth-slurm", "slurm.key")},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("a Controller without jwtKeyRef or jwtHs256KeyRef: got %v, want Invalid", err)
	}
}

// checkKept reads the object back with the dynamic client and checks that
// every field of spec (as our type encodes it) is on the server unchanged.
func checkKept(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, spec any) {
	t.Helper()
	got, err := dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range schemaCovers(normalize(got.Object["spec"]), normalize(spec), gvr.Resource+"/"+name+".spec") {
		t.Errorf("written through our clientset, not kept: %s", d)
	}
}

// splitYAML decodes a multi-document YAML stream.
func splitYAML(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(s, "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}
