package nodeset

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	vcscheme "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/scheme"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
)

// startOn is startWithoutController on a control plane of the test's own
// (e.g. one with kube-controller-manager), not the package's.
func startOn(t testing.TB, plane *controlplane.ControlPlane, prefix string, slurmNodes int) *env {
	t.Helper()
	return &env{nodesets.StartWithoutController(t, plane, prefix, slurmNodes)}
}

// controllerOptions say how runControllerWith runs the controller.
type controllerOptions struct {
	// config changes the controller's configuration.
	config func(*nodeset.Config)
	// slurm replaces the Slurm client (default: the test cluster's).
	slurm slurm.Client
	// events records the controller's events in the API server, as serve
	// does, where the test can read them as a user would.
	events bool
	// metrics receives the controller's metrics.
	metrics prometheus.Registerer
	// flags, when set, are serve's flags for the controller, and it gets
	// no client: it reaches Slurm as they say.
	flags []string
	// discover leaves the controller without client and flags: it finds
	// each NodeSet's slurmrestd through Slinky's objects.
	discover bool
	// kube replaces the controller's Kubernetes client (default e.Kube),
	// e.g. one that counts its requests.
	kube kubernetes.Interface
}

// runControllerWith is runController with options.
func (e *env) runControllerWith(o controllerOptions) {
	t := e.T
	cfg := nodeset.Config{Slurm: e.Slurm.Client(), DrainPoll: 200 * time.Millisecond, Resync: time.Second}
	if o.slurm != nil {
		cfg.Slurm = o.slurm
	}
	if o.flags != nil || o.discover {
		cfg.Slurm = nil
	}
	if o.config != nil {
		o.config(&cfg)
	}
	e.Ctrl = nodeset.New(cfg)
	if o.flags != nil {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		e.Ctrl.AddFlags(fs)
		if err := fs.Parse(o.flags); err != nil {
			t.Fatal(err)
		}
		if err := e.Ctrl.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	kube := e.Kube
	if o.kube != nil {
		kube = o.kube
	}
	trim := framework.CacheTransform(e.Ctrl)
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTransform(trim))
	vf := vcinformers.NewSharedInformerFactoryWithOptions(e.VC, 0, vcinformers.WithTransform(trim))
	// And the same filtered informers (serve's own objects selected by
	// label, the RestApi Services of the trusted namespaces).
	fi := framework.NewFieldInformers(kube, kubeinformers.WithTransform(trim))
	var recorder record.EventRecorder = &record.FakeRecorder{}
	var broadcaster record.EventBroadcaster
	if o.events {
		broadcaster = record.NewBroadcaster()
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.Kube.CoreV1().Events("")})
		// As serve's: our types too, or events about NodeSets are dropped.
		sch := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(sch); err != nil {
			t.Fatal(err)
		}
		if err := vcscheme.AddToScheme(sch); err != nil {
			t.Fatal(err)
		}
		recorder = broadcaster.NewRecorder(sch, corev1.EventSource{Component: "nodeset-controller"})
	}
	opt := &framework.ControllerOption{KubeClient: kube, VolcanoClient: e.VC,
		KubeInformerFactory: kf, VolcanoInformerFactory: vf, FieldInformers: fi,
		Recorder: recorder, MetricsRegistry: o.metrics}
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
		if broadcaster != nil {
			broadcaster.Shutdown()
		}
	})
}

// events lists the messages of the events of reason about the object
// named name.
func (e *env) events(name, reason string) []string {
	e.T.Helper()
	list, err := e.Kube.CoreV1().Events(e.NS).List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason {
			out = append(out, ev.Message)
		}
	}
	return out
}
