// Package nodeset tests the NodeSet controller against the real API server
// and a real slurmctld. No kubelet runs: the tests set pod status the way a
// kubelet would, and bind pods to Node objects they create.
package nodeset

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/controlplane"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
	"github.com/kubectl-vc/kubectl-vc/test/internal/pods"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Setup: func(e *cptest.Env) error {
		cp = e.CP
		// Slinky's Controller and RestApi kinds, for the tests that find
		// slurmrestd as Slinky's operator does (rest_test.go).
		return cptest.InstallSlinkyOperatorCRDs(context.Background(), cp)
	}})
}

// env is one test's world: a namespace, a Slurm cluster whose nodes are the
// pod names the test will use, and a running controller.
type env struct {
	t     testing.TB
	ctx   context.Context
	kube  kubernetes.Interface
	vc    versioned.Interface
	ns    string
	slurm slurmBackend
	ctrl  *nodeset.Controller
}

func start(t testing.TB, prefix string, slurmNodes int) *env {
	t.Helper()
	e := startWithoutController(t, prefix, slurmNodes)
	e.runController()
	return e
}

// startWithoutController is start without the test's own controller, for
// tests that run it another way.
func startWithoutController(t testing.TB, prefix string, slurmNodes int) *env {
	t.Helper()
	var nodes []string
	for i := range slurmNodes {
		nodes = append(nodes, fmt.Sprintf("%s-%d", prefix, i))
	}
	cl := startSlurm(t, nodes)
	cfg := cp.AdminConfig()
	e := &env{t: t, ctx: context.Background(), slurm: cl,
		kube: kubernetes.NewForConfigOrDie(cfg), vc: versioned.NewForConfigOrDie(cfg)}
	e.ns = "ns-" + rand.String(6)
	if _, err := e.kube.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) runController() {
	t := e.t
	e.ctrl = nodeset.New(nodeset.Config{Slurm: e.slurm.Client(), DrainPoll: 200 * time.Millisecond, Resync: time.Second})
	// The same trimmed caches as in serve, so these tests prove the
	// controller reads nothing it did not declare in CacheReads.
	trim := framework.CacheTransform(e.ctrl)
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(e.kube, 0, kubeinformers.WithTransform(trim))
	vf := vcinformers.NewSharedInformerFactoryWithOptions(e.vc, 0, vcinformers.WithTransform(trim))
	opt := &framework.ControllerOption{KubeClient: e.kube, VolcanoClient: e.vc,
		KubeInformerFactory: kf, VolcanoInformerFactory: vf, Recorder: &record.FakeRecorder{}}
	if err := e.ctrl.Initialize(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := ctx.Done()
	kf.Start(stop)
	vf.Start(stop)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); e.ctrl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		kf.Shutdown()
		vf.Shutdown()
	})
}

func (e *env) newNodeSet(name string, replicas int32, mutate ...func(*slinkyv1beta1.NodeSet)) *slinkyv1beta1.NodeSet {
	e.t.Helper()
	ns := &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To(replicas),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
			Template: slinkyv1beta1.PodTemplate{
				PodMetadata: slinkyv1beta1.PodMetadata{Labels: map[string]string{"team": "hpc"}},
				PodSpec:     corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0)},
			},
			UpdateStrategy: slinkyv1beta1.NodeSetUpdateStrategy{
				Type:          slinkyv1beta1.RollingUpdateNodeSetStrategyType,
				RollingUpdate: &slinkyv1beta1.RollingUpdateNodeSetStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			},
		},
	}
	for _, m := range mutate {
		m(ns)
	}
	created, err := e.vc.SlinkyV1beta1().NodeSets(e.ns).Create(e.ctx, ns, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// patchNodeSet applies a JSON merge patch to the spec, as kubectl would.
func (e *env) patchNodeSet(name, patch string) {
	e.t.Helper()
	_, err := e.vc.SlinkyV1beta1().NodeSets(e.ns).Patch(e.ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) get(name string) *slinkyv1beta1.NodeSet {
	e.t.Helper()
	ns, err := e.vc.SlinkyV1beta1().NodeSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ns
}

// pods lists the namespace's pods that are not being deleted, by name.
func (e *env) pods() map[string]*corev1.Pod {
	e.t.Helper()
	return pods.Live(e.t, e.kube, e.ns)
}

func names(p map[string]*corev1.Pod) string { return pods.Names(p) }

// markReady plays kubelet: Running and Ready.
// It patches the status as a kubelet does, so that conditions others
// write (the controller's Slurm states, the scheduler's) stay and no write
// conflicts with theirs.
func (e *env) markReady(pod *corev1.Pod) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`,
		metav1.Now().UTC().Format(time.RFC3339))
	_, err := e.kube.CoreV1().Pods(e.ns).Patch(e.ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil && !strings.Contains(err.Error(), "not found") {
		e.t.Fatal(err)
	}
}

// markAllReady marks every pod not yet ready; returns how many pods there are.
func (e *env) markAllReady() int {
	e.t.Helper()
	pods := e.pods()
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			e.markReady(p)
		}
	}
	return len(pods)
}

// eventually polls cond until it holds (or fails the test after a minute,
// printing cond's last explanation). It asserts an outcome, not a speed.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("%s: never happened; last: %s", what, last)
}

func (e *env) slurmState(node string) string {
	e.t.Helper()
	st, err := e.slurm.State(e.ctx, node)
	if err != nil {
		e.t.Fatal(err)
	}
	return st.String()
}
