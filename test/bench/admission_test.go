package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/plugins/queuewebhook"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/queueindex"
)

// BenchmarkAdmission measures what the admission policies 'kubectl vc
// install' ships cost each request, at several numbers of queues
// (VC_BENCH_ADMISSION_QUEUES, "10,1000,10000" by default), each size on its
// own API server: the same requests without the policies ("none") and with
// them in index mode, serve's queue index controller keeping their index
// and serve's queue webhook answering queue writes, in this process as a
// user's serve runs them ("installed"), alternating (every other round in
// reverse order), VC_BENCH_ROUNDS rounds each (and in
// per-queue mode, "per-queue", when VC_BENCH_ADMISSION_PER_QUEUE=1; and,
// when VC_BENCH_ADMISSION_NULL_WEBHOOK=1, "null-webhook": installed, with
// the queue webhook pointed at one that admits every review unread, which
// is what the call out of the API server costs whatever the webhook
// decides; VC_BENCH_ADMISSION_NULL_WEBHOOK_H2=1 serves that one over
// HTTP/2, serve's own being HTTP/1.1 only):
//
//   - pg: 2 000 PodGroup creates, 32 at once, spread over the queues;
//   - job: 2 000 Volcano Job creates, 32 at once;
//   - queue-create: 1 000 queue creates under a parent with resources, 32 at once;
//   - queue-delete: the deletes of those 1 000 (closed first, untimed);
//   - queue-plain: 1 000 creates of plain queues under root (no resource
//     list), which the queue webhook is not called for.
//
// VC_BENCH_ADMISSION_BATCHES (e.g. "queue-create,queue-plain") runs only
// the batches it names, for more rounds of those in the same time.
// VC_BENCH_ADMISSION_INDEXER_ARGS passes flags to serve's queue index
// controller (e.g. "--queueindex-batch-delay=2s"), to tell what its index
// writes cost a batch from what the policies do.
//
// The batches take 1–2 s each. On two shared cores one round's ratio can
// be off by 0.5 either way, so the figures are medians over rounds, with
// the middle half of the rounds' own ratios logged beside them.
//
// Each figure is the wall time of the batch, and beside it the API
// server's CPU time per request of the batch (…-apiserver-ms), which the
// other processes on the machine (etcd, this client, serve) disturb less;
// the ratios installed/none of the medians are logged per size. "none" takes the bindings, the
// webhook configuration and the indexes away (the policies stay, unbound), "installed" runs install again and waits, as
// install does, until they are in force.
func BenchmarkAdmission(b *testing.B) {
	sizes := []int{10, 1000, 10000}
	if v := os.Getenv("VC_BENCH_ADMISSION_QUEUES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("VC_BENCH_ADMISSION_QUEUES: %q is not a positive count", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("queues=%d", n), func(b *testing.B) { admissionAtSize(b, n) })
	}
}

func admissionAtSize(b *testing.B, nq int) {
	ctx := context.Background()
	cp, err := cptest.StartWithCRDs(ctx, controlplane.APIServer)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cp.Stop() })
	_, apiserverPid := cp.Pids()
	cfg := cp.AdminConfig()
	cfg.QPS, cfg.Burst = -1, 0
	vc := versioned.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	queueName := func(i int) string { return fmt.Sprintf("q-%05d", i) }
	start := time.Now()
	parallel(nq, func(i int) {
		if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: queueName(i)}, Spec: v1beta1.QueueSpec{Weight: 1, Parent: "root"},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	// The parent of the created queues: bounds to check.
	if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-parent"},
		Spec:       v1beta1.QueueSpec{Weight: 1, Parent: "root", Capability: resourceList("cpu=1000,memory=4Ti")},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if b.Failed() {
		return
	}
	b.Logf("%d queues created in %v", nq, time.Since(start).Round(time.Millisecond))

	// serve's queue index controller, as a user's serve runs it (it idles
	// while no index exists: in the none and per-queue rounds).
	wh := startIndexer(b, cp.AdminConfig())

	variants := []string{"none", "installed"}
	if os.Getenv("VC_BENCH_ADMISSION_PER_QUEUE") == "1" {
		variants = append(variants, "per-queue")
	}
	var null *cptest.Webhook
	if os.Getenv("VC_BENCH_ADMISSION_NULL_WEBHOOK") == "1" {
		variants = append(variants, "null-webhook")
		null = startNullWebhook(b)
	}
	kubeconfig := writeKubeconfig(b, cp)
	results := map[string]map[string][]float64{} // variant -> measure -> seconds
	var seq atomic.Int64
	for round := range benchRounds() {
		// Every other round runs the variants in reverse order: the API
		// server measured later in a round runs slower (about 10 % per
		// place, seen with identical admission in two places), so a
		// fixed order would charge that to whatever runs after "none".
		order := slices.Clone(variants)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, variant := range order {
			switch variant {
			case "none":
				unbind(b, kube, vc)
			case "installed", "per-queue", "null-webhook":
				mode := keys.AdmissionModeIndex
				if variant == "per-queue" {
					mode = keys.AdmissionModePerQueue
				}
				t0 := time.Now()
				o := &install.Options{Selection: install.Selection{CRDs: true, Policies: true, Admission: mode}}
				if mode == keys.AdmissionModeIndex {
					o.Selection.WebhookURL, o.Selection.WebhookCABundle = wh.URL, wh.CA
				}
				if variant == "null-webhook" {
					o.Selection.WebhookURL, o.Selection.WebhookCABundle = null.URL, null.CA
				}
				if _, err := cptest.Install(ctx, cptest.Factory(kubeconfig), o); err != nil {
					b.Fatal(err)
				}
				b.Logf("round %d: install (%s) over %d queues took %v", round, mode, nq, time.Since(t0).Round(time.Millisecond))
				// As long as unbind's pause for "none": the batches measure
				// admission in force, not the API server still taking in
				// what install wrote (it rebuilds its policy set about once
				// a second).
				time.Sleep(3 * time.Second)
			}
			r := admissionRound(b, vc, nq, queueName, seq.Add(1), variant, apiserverPid)
			if results[variant] == nil {
				results[variant] = map[string][]float64{}
			}
			for m, v := range r {
				results[variant][m] = append(results[variant][m], v)
			}
			b.Logf("round %d %-9s pg %.2fs job %.2fs queue-create %.2fs queue-plain %.2fs queue-delete %.2fs; API server per request pg %.2fms job %.2fms queue-create %.2fms queue-plain %.2fms queue-delete %.2fms",
				round, variant, r["pg"], r["job"], r["queue-create"], r["queue-plain"], r["queue-delete"],
				r["pg-apiserver-ms"], r["job-apiserver-ms"], r["queue-create-apiserver-ms"], r["queue-plain-apiserver-ms"], r["queue-delete-apiserver-ms"])
		}
	}
	for _, m := range []string{"pg", "job", "queue-create", "queue-plain", "queue-delete"} {
		for _, unit := range []string{"s", "apiserver-ms"} {
			key, prefix := m, m
			if unit != "s" {
				key, prefix = m+"-"+unit, m+"-apiserver"
			}
			if len(results["none"][key]) == 0 {
				continue // a batch VC_BENCH_ADMISSION_BATCHES left out
			}
			none := median(results["none"][key])
			b.ReportMetric(none, prefix+"-none-"+strings.TrimPrefix(unit, "apiserver-"))
			for _, v := range variants[1:] {
				with := median(results[v][key])
				b.ReportMetric(with, prefix+"-"+v+"-"+strings.TrimPrefix(unit, "apiserver-"))
				if none > 0 {
					// Beside the ratio of the medians, the median of each
					// round's ratio: a round's two variants run seconds
					// apart, so what drifts over minutes on the machine
					// weighs on both alike.
					var paired []float64
					for i, n := range results["none"][key] {
						if i < len(results[v][key]) && n > 0 {
							paired = append(paired, results[v][key][i]/n)
						}
					}
					b.ReportMetric(with/none, prefix+"-"+v+"-ratio")
					b.ReportMetric(median(paired), prefix+"-"+v+"-paired-ratio")
					// The middle half of the rounds' ratios says how far
					// the machine's noise moves a figure.
					if len(paired) == 0 {
						continue
					}
					slices.Sort(paired)
					lo, hi := paired[len(paired)/4], paired[(3*len(paired))/4]
					if len(paired) < 4 {
						lo, hi = paired[0], paired[len(paired)-1]
					}
					b.Logf("queues=%d %-25s none %.2f%s %s %.2f%s ratio %.2f, median of the rounds' ratios %.2f (middle half %.2f–%.2f)", nq, key, none, unit, v, with, unit, with/none, median(paired), lo, hi)
				}
			}
		}
	}
}

// settle is the pause before each timed batch of BenchmarkAdmission.
const settle = 2 * time.Second

// admissionRound runs the four batches once and returns their wall times
// (name) and the API server's CPU milliseconds per request (name
// "-apiserver-ms").
func admissionRound(b *testing.B, vc versioned.Interface, nq int, queueName func(int) string, seq int64, variant string, apiserverPid int) map[string]float64 {
	ctx := context.Background()
	out := map[string]float64{}
	timed := func(name string, requests int, f func()) {
		// Each batch starts on a settled machine, in every variant alike:
		// what the one before it set going (the API server's garbage
		// collection and watch fan-out, the informers in this process)
		// otherwise ran into it, and the installed rounds' waits for
		// serve's index gave them a pause the none rounds did not have
		// (queue creates measured ×0.9 and plain ones ×1.5 at 10 queues).
		time.Sleep(settle)
		// VC_BENCH_ADMISSION_PPROF=DIR keeps a CPU profile of the API
		// server during each batch, in DIR (named for the variant, to
		// compare with go tool pprof -diff_base).
		if dir := os.Getenv("VC_BENCH_ADMISSION_PPROF"); dir != "" {
			done := make(chan struct{})
			defer func() { <-done }()
			go func() {
				defer close(done)
				raw, err := vc.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", "2").DoRaw(ctx)
				if err == nil {
					err = os.WriteFile(fmt.Sprintf("%s/%s-%s-%d.pprof", dir, variant, name, seq), raw, 0o644)
				}
				if err != nil {
					b.Logf("profile of %s: %v", name, err)
				}
			}()
		}
		cpu0, t0 := procCPU(apiserverPid), time.Now()
		f()
		out[name] = time.Since(t0).Seconds()
		out[name+"-apiserver-ms"] = float64(procCPU(apiserverPid)-cpu0) / float64(time.Millisecond) / float64(requests)
	}
	// VC_BENCH_ADMISSION_BATCHES=pg,queue-plain,… runs only those batches;
	// the queue deletes delete what the queue creates made, so either
	// runs both.
	run := func(string) bool { return true }
	if want := os.Getenv("VC_BENCH_ADMISSION_BATCHES"); want != "" {
		picked := map[string]bool{}
		for _, f := range strings.Split(want, ",") {
			picked[strings.TrimSpace(f)] = true
		}
		picked["queue-create"] = picked["queue-create"] || picked["queue-delete"]
		run = func(batch string) bool { return picked[batch] }
	}
	if run("pg") {
		timed("pg", 2000, func() {
			parallel(2000, func(i int) {
				if _, err := vc.SchedulingV1beta1().PodGroups("default").Create(ctx, &v1beta1.PodGroup{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg-%d-%05d", seq, i)},
					Spec:       v1beta1.PodGroupSpec{MinMember: 1, Queue: queueName(i % nq)},
				}, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			})
		})
	}
	if run("job") {
		timed("job", 2000, func() {
			parallel(2000, func(i int) {
				if _, err := vc.BatchV1alpha1().Jobs("default").Create(ctx, &batchv1alpha1.Job{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("job-%d-%05d", seq, i)},
					Spec:       batchv1alpha1.JobSpec{Queue: queueName(i % nq), MinAvailable: 1},
				}, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			})
		})
	}
	const queues = 1000
	indexed := variant == "installed" || variant == "null-webhook"
	if run("queue-create") {
		child := func(i int) string { return fmt.Sprintf("child-%d-%04d", seq, i) }
		timed("queue-create", queues, func() {
			parallel(queues, func(i int) {
				if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
					ObjectMeta: metav1.ObjectMeta{Name: child(i)},
					Spec:       v1beta1.QueueSpec{Weight: 1, Parent: "bench-parent", Capability: resourceList("cpu=4,memory=16Gi")},
				}, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			})
		})
		// Closed as the queue controller closes a queue (untimed). The
		// deletes are timed once serve has indexed the closes, so that its
		// writes are not counted against the deletes.
		parallel(queues, func(i int) {
			if err := closeQueue(ctx, vc, child(i)); err != nil {
				b.Error(err)
			}
		})
		if indexed {
			waitStatesIndexed(b, vc, "the closed queues", func(n int) bool { return n >= queues })
		}
		timed("queue-delete", queues, func() {
			parallel(queues, func(i int) {
				if err := vc.SchedulingV1beta1().Queues().Delete(ctx, child(i), metav1.DeleteOptions{}); err != nil {
					b.Error(err)
				}
			})
		})
		if indexed {
			// serve's index writes for the deletes are not counted in
			// the next batch.
			waitStatesIndexed(b, vc, "the deleted queues", func(n int) bool { return n == 0 })
		}
	}
	if run("queue-plain") {
		// Plain queues under root, as `kubectl vc queue create NAME`
		// makes them: no hierarchy rule concerns them, so the queue
		// webhook is not called. Closed and deleted again, untimed.
		plain := func(i int) string { return fmt.Sprintf("plain-%d-%04d", seq, i) }
		timed("queue-plain", queues, func() {
			parallel(queues, func(i int) {
				if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
					ObjectMeta: metav1.ObjectMeta{Name: plain(i)}, Spec: v1beta1.QueueSpec{Weight: 1},
				}, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			})
		})
		parallel(queues, func(i int) {
			if err := closeQueue(ctx, vc, plain(i)); err != nil {
				b.Error(err)
			}
		})
		// A delete the policy refuses while the close has not reached it
		// yet is tried again.
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			var failed atomic.Int64
			parallel(queues, func(i int) {
				err := vc.SchedulingV1beta1().Queues().Delete(ctx, plain(i), metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					failed.Add(1)
				}
			})
			return failed.Load() == 0, nil
		}); err != nil {
			b.Errorf("the plain queues of round %d are not deleted: %v", seq, err)
		}
		if indexed {
			waitStatesIndexed(b, vc, "the deleted queues", func(n int) bool { return n == 0 })
		}
	}
	// The round's podgroups and Jobs go (untimed), so that every round
	// finds the API server as the first did: left there, they grew its
	// heap round after round, and its garbage collection with it, which
	// made the later rounds of either variant dearer than the earlier.
	sel := metav1.ListOptions{}
	if err := vc.SchedulingV1beta1().PodGroups("default").DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		b.Error(err)
	}
	if err := vc.BatchV1alpha1().Jobs("default").DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		b.Error(err)
	}
	return out
}

// closeQueue writes Closed into a queue's status as the queue controller
// does.
func closeQueue(ctx context.Context, vc versioned.Interface, name string) error {
	var err error
	for range 10 {
		var q *v1beta1.Queue
		if q, err = vc.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		q.Status.State = v1beta1.QueueStateClosed
		if _, err = vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return err
}

// unbind removes every binding install made, so that the policies stay but
// check nothing, the webhook configuration and the indexes, and waits a
// moment for the API server to drop them.
func unbind(b *testing.B, kube kubernetes.Interface, vc versioned.Interface) {
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=kubectl-vc"}
	vb, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, sel)
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range vb.Items {
		if err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, x.Name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	mb, err := kube.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().List(ctx, sel)
	if err == nil {
		for _, x := range mb.Items {
			_ = kube.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Delete(ctx, x.Name, metav1.DeleteOptions{})
		}
	}
	// The queue webhook goes too (install makes it again).
	vw, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, sel)
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range vw.Items {
		if err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, x.Name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	// And the indexes: a cluster without what install ships has no serve
	// keeping them, and serve's queue index controller idles without
	// them (install writes them again).
	ix, err := vc.AdmissionV1alpha1().QueueIndexes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range ix.Items {
		if err := vc.AdmissionV1alpha1().QueueIndexes().Delete(ctx, x.Name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	// The policy plugin rebuilds its set about once a second.
	time.Sleep(3 * time.Second)
}

// waitStatesIndexed waits until serve's states index holds as many
// queues as want accepts: the closes of a batch recorded, or its deletes.
func waitStatesIndexed(b *testing.B, vc versioned.Interface, what string, want func(queues int) bool) {
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		idx, err := vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, admissionv1alpha1.QueueIndexStates, metav1.GetOptions{})
		return err == nil && want(max(strings.Count(idx.Spec.Entries, ";")-1, 0)), nil
	})
	if err != nil {
		b.Fatalf("the queue index controller did not record %s", what)
	}
}

func writeKubeconfig(b *testing.B, cp *controlplane.ControlPlane) string {
	p := b.TempDir() + "/kubeconfig"
	if err := cp.WriteKubeconfig(p, controlplane.AdminUser); err != nil {
		b.Fatal(err)
	}
	return p
}

// resourceList parses "cpu=4,memory=16Gi".
func resourceList(s string) corev1.ResourceList {
	l, err := rules.ParseResourceList("bench", s)
	if err != nil {
		panic(err)
	}
	return l
}

// installAdmission installs the CRDs and the policies in index mode and runs
// serve's queue index controller in-process until the benchmark ends.
func installAdmission(b *testing.B, kubeconfig string, cfg *rest.Config) {
	ctx := context.Background()
	// serve first: install waits until its webhook answers.
	wh := startIndexer(b, cfg)
	if _, err := cptest.Install(ctx, cptest.Factory(kubeconfig), &install.Options{Selection: install.Selection{CRDs: true, Policies: true,
		Admission: keys.AdmissionModeIndex, WebhookURL: wh.URL, WebhookCABundle: wh.CA}}); err != nil {
		b.Fatal(err)
	}
}

// startIndexer runs serve's queue index controller and its queue webhook
// in-process until the benchmark ends, and returns where the webhook
// answers.
func startIndexer(b *testing.B, cfg *rest.Config) *cptest.Webhook {
	idx, err := framework.Configure("queueindex", strings.Fields(os.Getenv("VC_BENCH_ADMISSION_INDEXER_ARGS"))...)
	if err != nil {
		b.Fatal(err)
	}
	wh, err := cptest.NewWebhook(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ictx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ictx, controller.Config{Kubeconfig: cfg, Controllers: []framework.Controller{idx},
			WebhookAddr: wh.Addr, WebhookCertDir: wh.CertDir, Webhooks: []framework.Webhook{queuewebhook.New()},
			MaxRequeueNum: -1, FeatureGates: framework.NewFeatureGate(), WaitForStop: true})
	}()
	b.Cleanup(func() { stop(); <-done })
	return wh
}

// startNullWebhook serves, until the benchmark ends, a webhook that admits
// every review it is sent without reading the object: the floor of any
// webhook's cost to the API server.
func startNullWebhook(b *testing.B) *cptest.Webhook {
	wh, err := cptest.NewWebhook(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(wh.CertDir, "tls.crt"), filepath.Join(wh.CertDir, "tls.key"))
	if err != nil {
		b.Fatal(err)
	}
	// HTTP/1.1, as serve's webhook server; VC_BENCH_ADMISSION_NULL_WEBHOOK_H2=1
	// offers HTTP/2 first, to measure what the transport costs the API
	// server.
	var protoSeen atomic.Value
	b.Cleanup(func() { b.Logf("the null webhook was last called over %v", protoSeen.Load()) })
	protos := []string{"http/1.1"}
	if os.Getenv("VC_BENCH_ADMISSION_NULL_WEBHOOK_H2") == "1" {
		protos = []string{"h2", "http/1.1"}
	}
	srv := &http.Server{Addr: wh.Addr, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			protoSeen.Store(r.Proto)
			var review struct {
				Request struct {
					UID string `json:"uid"`
				} `json:"request"`
			}
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":true}}`, review.Request.UID)
		})}
	ln, err := net.Listen("tcp", wh.Addr)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	b.Cleanup(func() { _ = srv.Close() })
	return wh
}
