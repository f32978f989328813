package nodesets

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

	"github.com/spf13/pflag"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/pods"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// Env is one test's world: a namespace, a Slurm cluster whose nodes are the
// pod names the test will use, and a running controller.
type Env struct {
	T     testing.TB
	Ctx   context.Context
	Kube  kubernetes.Interface
	VC    versioned.Interface
	NS    string
	Slurm Backend
	Ctrl  *nodeset.Controller
}

// Start is StartWithoutController, then RunController.
func Start(t testing.TB, cp *controlplane.ControlPlane, prefix string, slurmNodes int) *Env {
	t.Helper()
	e := StartWithoutController(t, cp, prefix, slurmNodes)
	e.RunController()
	return e
}

// StartWithoutController makes the test's namespace on cp and starts its
// Slurm with nodes prefix-0, prefix-1, ..., without the test's own
// controller, for tests that run it another way.
func StartWithoutController(t testing.TB, cp *controlplane.ControlPlane, prefix string, slurmNodes int) *Env {
	t.Helper()
	var nodes []string
	for i := range slurmNodes {
		nodes = append(nodes, fmt.Sprintf("%s-%d", prefix, i))
	}
	cl := StartSlurm(t, nodes)
	cfg := cp.AdminConfig()
	e := &Env{T: t, Ctx: context.Background(), Slurm: cl,
		Kube: kubernetes.NewForConfigOrDie(cfg), VC: versioned.NewForConfigOrDie(cfg)}
	e.NS = "ns-" + rand.String(6)
	// Its NodeSets and pods are deleted when the test ends, after its
	// controller has stopped (cleanups run last registered first): the Slurm
	// node names are the same in every run of a test (-count=N), and a
	// later run's controller, which watches every namespace, would
	// otherwise sync this run's NodeSets against its own Slurm's nodes of
	// the same names, resuming and draining them under its test.
	namespaces.Create(t, e.Kube, e.VC, e.NS)
	return e
}

// RunController runs the NodeSet controller on the test's Slurm until the
// test ends, its flags set from flags as serve sets them (e.g.
// "--propagated-node-conditions=GPUProblem").
func (e *Env) RunController(flags ...string) {
	t := e.T
	e.Ctrl = nodeset.New(nodeset.Config{Slurm: e.Slurm.Client(), DrainPoll: 200 * time.Millisecond, Resync: time.Second})
	if len(flags) > 0 {
		fs := pflag.NewFlagSet(nodeset.Name, pflag.ContinueOnError)
		e.Ctrl.AddFlags(fs)
		if err := fs.Parse(flags); err != nil {
			t.Fatal(err)
		}
		if err := e.Ctrl.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	// The same trimmed caches as in serve, so these tests prove the
	// controller reads nothing it did not declare in CacheReads.
	trim := framework.CacheTransform(e.Ctrl)
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(e.Kube, 0, kubeinformers.WithTransform(trim))
	vf := vcinformers.NewSharedInformerFactoryWithOptions(e.VC, 0, vcinformers.WithTransform(trim))
	// And the same filtered informers (serve's own objects selected by
	// label, the RestApi Services of the trusted namespaces).
	fi := framework.NewFieldInformers(e.Kube, kubeinformers.WithTransform(trim))
	opt := &framework.ControllerOption{KubeClient: e.Kube, VolcanoClient: e.VC,
		KubeInformerFactory: kf, VolcanoInformerFactory: vf, FieldInformers: fi,
		Recorder: &record.FakeRecorder{}}
	if err := e.Ctrl.Initialize(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := ctx.Done()
	kf.Start(stop)
	vf.Start(stop)
	fi.Start(stop)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); e.Ctrl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		kf.Shutdown()
		vf.Shutdown()
		fi.Shutdown()
	})
}

// NewNodeSet creates a NodeSet of replicas pods in the test's namespace,
// after the mutations.
func (e *Env) NewNodeSet(name string, replicas int32, mutate ...func(*slinkyv1beta1.NodeSet)) *slinkyv1beta1.NodeSet {
	e.T.Helper()
	ns := &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS},
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
	created, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Create(e.Ctx, ns, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return created
}

// PatchNodeSet applies a JSON merge patch to the spec, as kubectl would.
func (e *Env) PatchNodeSet(name, patch string) {
	e.T.Helper()
	_, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Patch(e.Ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
}

// Get reads a NodeSet of the test's namespace.
func (e *Env) Get(name string) *slinkyv1beta1.NodeSet {
	e.T.Helper()
	ns, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return ns
}

// Pods lists the namespace's pods that are not being deleted, by name.
func (e *Env) Pods() map[string]*corev1.Pod {
	e.T.Helper()
	return pods.Live(e.T, e.Kube, e.NS)
}

// MarkReady plays kubelet: Running and Ready.
// It patches the status as a kubelet does, so that conditions others
// write (the controller's Slurm states, the scheduler's) stay and no write
// conflicts with theirs.
func (e *Env) MarkReady(pod *corev1.Pod) {
	e.T.Helper()
	patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`,
		metav1.Now().UTC().Format(time.RFC3339))
	_, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil && !strings.Contains(err.Error(), "not found") {
		e.T.Fatal(err)
	}
}

// MarkAllReady marks every pod not yet ready; returns how many pods there are.
func (e *Env) MarkAllReady() int {
	e.T.Helper()
	pods := e.Pods()
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			e.MarkReady(p)
		}
	}
	return len(pods)
}

// Eventually polls cond until it holds (or fails the test after a minute,
// printing cond's last explanation). It asserts an outcome, not a speed.
func (e *Env) Eventually(what string, cond func() (bool, string)) {
	e.T.Helper()
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
	e.T.Fatalf("%s: never happened; last: %s", what, last)
}

// SlurmState reads a node's state from Slurm, apart from the controller.
func (e *Env) SlurmState(node string) string {
	e.T.Helper()
	st, err := e.Slurm.State(e.Ctx, node)
	if err != nil {
		e.T.Fatal(err)
	}
	return st.String()
}

// NodeSet is the smallest NodeSet the API server takes, for tests of the
// commands that only list it.
func NodeSet(name string) *slinkyv1beta1.NodeSet {
	return &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To[int32](1),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
		},
	}
}
