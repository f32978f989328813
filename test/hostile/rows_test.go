package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// world is what the rows of one run share: the run's namespace, the
// stand-in slurmrestd serve reaches (nil when it reaches a real Slurm),
// and what each row's apply left for its handled check.
type world struct {
	// t owns what the rows leave to delete: the test, not a row's subtest
	// (the rows of TestAllAtOnce run as subtests that end before serve's
	// checks).
	t     *testing.T
	ns    string
	slurm *standIn
	// serve is the serve the rows run against (its ports).
	serve *serve
	// alone: one row runs against this serve (TestEachRow), so a row
	// may hold serve's memory to a bound of its own.
	alone bool
	mu    sync.Mutex
	state map[string]any
}

func (w *world) put(k string, v any) { w.mu.Lock(); w.state[k] = v; w.mu.Unlock() }
func (w *world) get(k string) any    { w.mu.Lock(); defer w.mu.Unlock(); return w.state[k] }

// row is one row of the bounds table tried with its worst value.
type row struct {
	name string
	// nodes and jobs are the stand-in slurmrestd's answers the row needs.
	nodes []answer
	jobs  *answer
	// apply writes the hostile objects; handled waits until serve has
	// shown that it dealt with them (so that the memory read afterwards
	// includes what they cost).
	apply, handled func(t *testing.T, w *world)
	// flags, when set, are serve's flags for the row instead of the
	// stand-in slurmrestd's: the row reaches Slurm its own way (through
	// Slinky's objects). Such a row is tried alone (TestEachRow) only.
	flags func(t *testing.T, w *world) []string
	// alone, when set, says why the row is tried alone (TestEachRow)
	// only: what it measures would be blurred by the other rows, or it
	// would blur theirs.
	alone string
	// broken, when set, says how the row breaks serve today, in code this
	// suite's authors do not own: the row is skipped saying so (in both
	// tests) unless $KVC_HOSTILE_BROKEN=1 runs it, to see it fail.
	broken string
}

// brokenEnv runs the rows known to break serve.
const brokenEnv = "KVC_HOSTILE_BROKEN"

// skipped tells whether the row is left out of this run, and why.
func (r row) skipped() (string, bool) {
	if r.broken == "" || os.Getenv(brokenEnv) == "1" {
		return "", false
	}
	return fmt.Sprintf("NOT TRIED: %s breaks serve today: %s (%s=1 runs it)", r.name, r.broken, brokenEnv), true
}

// The largest annotation value an object may carry: metadata.annotations
// is limited to 256 KiB (keys and values) in all.
const maxAnnotations = 256 << 10

// maxObject is about the largest object the API server stores (etcd's
// request limit is 1.5 MiB, the object is sent with its metadata).
const maxObject = 1400 << 10

// bigAnnotations fills the annotations to their limit, under a volcano.sh/
// key (the podgroup controller copies those from a pod to its group), but
// for the room of the group-name annotation the podgroup controller adds
// to a pod (a pod without that room keeps no group: the annotation is
// refused, the controller logs it and drops the request).
func bigAnnotations() map[string]string {
	k := "volcano.sh/hostile"
	return map[string]string{k: strings.Repeat("a", maxAnnotations-len(k)-256)}
}

// manyLabels is as many labels of the longest key and value as an object
// takes beside its other fields: 3 000 of 63+63+prefix bytes.
func manyLabels() map[string]string {
	l := map[string]string{}
	prefix := strings.Repeat("p", 200) + ".example.com/"
	for i := range 3000 {
		l[prefix+fmt.Sprintf("%s%05d", strings.Repeat("k", 58), i)] = strings.Repeat("v", 63)
	}
	return l
}

// hugeQuantities are the quantities the CRDs' pattern for resource lists
// accepts (^(\+|-)?(([0-9]+(\.[0-9]*)?)|...)(...[eE](\+|-)?...)?$) and that
// cost a reader the most to parse: exponents that take
// k8s.io/apimachinery's resource.ParseQuantity minutes of CPU and gigabytes
// (it computes 10^|exponent|), and a mantissa of 64 Ki digits.
var hugeQuantities = map[string]string{
	"cpu":                    "9e-2147483648",
	"memory":                 "9e2147483648",
	"nvidia.com/gpu":         "9e-9999999",
	"example.com/long":       strings.Repeat("9", 1<<16),
	"example.com/max-int64":  "9223372036854775807",
	"example.com/past-int64": "9999999999999999999999Ei",
}

func createRaw(t *testing.T, path string, obj any) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	// Through the REST client, not a typed client: a typed client would
	// parse the hostile quantities itself.
	res := env.vc.SchedulingV1beta1().RESTClient().Post().AbsPath(path).Body(b).
		SetHeader("Content-Type", "application/json").Do(context.Background())
	if err := res.Error(); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}

// nodeSet creates a NodeSet in the run's namespace.
func nodeSet(t *testing.T, w *world, name string, replicas int32, mutate ...func(*slinkyv1beta1.NodeSet)) {
	t.Helper()
	ns := &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To(replicas),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
			Template: slinkyv1beta1.PodTemplate{
				PodMetadata: slinkyv1beta1.PodMetadata{Labels: map[string]string{setLabel: name}},
				PodSpec:     corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0)},
			},
		},
	}
	for _, m := range mutate {
		m(ns)
	}
	if _, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setLabel labels the pods of each NodeSet with its name, so that a check
// lists only them (not the largest pods of the other rows, every 100 ms).
const setLabel = "hostile.kubectl-vc.io/set"

func podsOf(t *testing.T, w *world, set string) []corev1.Pod {
	t.Helper()
	l, err := env.kube.CoreV1().Pods(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: setLabel + "=" + set})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// hierarchyLabel labels the queues of the hierarchy row with its prefix,
// so that its check lists only them.
const hierarchyLabel = "hostile.kubectl-vc.io/hierarchy"

// parallel runs f(i) for i in [0, n) on 16 goroutines.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// The rows, in the order of the bounds table.
var rows = []row{
	{
		name: "NodeSet replicas 2147483647",
		apply: func(t *testing.T, w *world) {
			if w.slurm != nil {
				w.slurm.known.Store("ignored", true)
			}
			nodeSet(t, w, "huge", 2147483647)
		},
		handled: func(t *testing.T, w *world) {
			// One burst (250 pods, as Slinky's operator's burstReplicas)
			// and no more per sync: nothing is made per replica stated.
			eventually(t, "the NodeSet's first 250 pods", func() (bool, error) {
				return len(podsOf(t, w, "huge")) >= 250, nil
			})
		},
	},
	{
		name:  "slurmrestd answer of 65 MiB",
		nodes: []answer{oversized},
		apply: func(t *testing.T, w *world) { nodeSet(t, w, "big-answer", 1) },
		handled: func(t *testing.T, w *world) {
			// Served twice: serve read the first to the bound and asked
			// again.
			eventually(t, "the 65 MiB answer served twice", func() (bool, error) {
				return w.slurm.servedCount(oversized.name)+len(w.slurm.endedEarly(oversized.name)) >= 2, nil
			})
		},
	},
	{
		name:  "slurmrestd answer of 64 MiB of tiny nodes",
		nodes: []answer{tinyNodes},
		apply: func(t *testing.T, w *world) { nodeSet(t, w, "tiny-nodes", 1) },
		handled: func(t *testing.T, w *world) {
			eventually(t, "the tiny nodes served twice", func() (bool, error) {
				return w.slurm.servedCount(tinyNodes.name) >= 2, nil
			})
		},
	},
	{
		name:  "slurmrestd answer nested 32 Mi deep",
		nodes: []answer{deepUnknown, deepNode},
		apply: func(t *testing.T, w *world) { nodeSet(t, w, "deep-answer", 1) },
		handled: func(t *testing.T, w *world) {
			eventually(t, "each deep answer served twice", func() (bool, error) {
				return w.slurm.servedCount(deepUnknown.name)+len(w.slurm.endedEarly(deepUnknown.name)) >= 2 &&
					w.slurm.servedCount(deepNode.name)+len(w.slurm.endedEarly(deepNode.name)) >= 2, nil
			})
		},
	},
	{
		name:  "slurmrestd answer that never ends",
		nodes: []answer{endless},
		apply: func(t *testing.T, w *world) {
			nodeSet(t, w, "endless", 1)
			w.put("endless since", time.Now())
		},
		handled: func(t *testing.T, w *world) {
			// serve's slurmrestd client gives up after its request timeout
			// (30 s): the stand-in sees the connection go.
			eventually(t, "serve to give up the never-ending answer", func() (bool, error) {
				return len(w.slurm.endedEarly(endless.name)) >= 1, nil
			})
			d := w.slurm.endedEarly(endless.name)[0]
			t.Logf("serve gave up the never-ending answer after %v", d.Round(time.Millisecond))
			if d > 45*time.Second {
				t.Errorf("serve read a never-ending answer for %v: its 30 s request timeout does not hold", d)
			}
		},
	},
	{
		name: "slurmrestd job hostlist n[0-9223372036854775807]",
		jobs: &hugeHostlist,
		apply: func(t *testing.T, w *world) {
			// A node is drained (scale in to 0) while a job runs on it:
			// serve asks for the job list to know when the drain ends.
			nodeSet(t, w, "drain", 1)
			var pod corev1.Pod
			eventually(t, "the pod of NodeSet drain", func() (bool, error) {
				p := podsOf(t, w, "drain")
				if len(p) == 1 {
					pod = p[0]
				}
				return len(p) == 1, nil
			})
			w.slurm.known.Store(pod.Name, true)
			patch := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`,
				metav1.Now().UTC().Format(time.RFC3339))
			if _, err := env.kube.CoreV1().Pods(w.ns).Patch(context.Background(), pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
				t.Fatal(err)
			}
			if _, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).Patch(context.Background(), "drain", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		handled: func(t *testing.T, w *world) {
			eventually(t, "the job list served twice", func() (bool, error) {
				return w.slurm.servedCount(hugeHostlist.name) >= 2, nil
			})
		},
	},
	{
		name: "queue hierarchy 300 deep, 1000 wide, a 200-queue cycle",
		apply: func(t *testing.T, w *world) {
			p := runName("h")
			w.put("hierarchy", p)
			const deep, wide, cycle = 300, 1000, 200
			var qs []*v1beta1.Queue
			for i := range deep {
				parent := keys.RootQueue
				if i > 0 {
					parent = fmt.Sprintf("%s-d%d", p, i-1)
				}
				qs = append(qs, &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-d%d", p, i)}, Spec: v1beta1.QueueSpec{Weight: 1, Parent: parent}})
				qs[len(qs)-1].Labels = map[string]string{hierarchyLabel: p}
			}
			for i := range wide {
				qs = append(qs, &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-w%d", p, i)}, Spec: v1beta1.QueueSpec{Weight: 1, Parent: p + "-d0"}})
				qs[len(qs)-1].Labels = map[string]string{hierarchyLabel: p}
			}
			for i := range cycle {
				qs = append(qs, &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-c%d", p, i)}, Spec: v1beta1.QueueSpec{Weight: 1, Parent: fmt.Sprintf("%s-c%d", p, (i+1)%cycle)}})
				qs[len(qs)-1].Labels = map[string]string{hierarchyLabel: p}
			}
			for _, q := range qs {
				deleteQueueAfter(w.t, q.Name)
			}
			parallel(t, len(qs), func(i int) error {
				_, err := env.vc.SchedulingV1beta1().Queues().Create(context.Background(), qs[i], metav1.CreateOptions{})
				return err
			})
		},
		handled: func(t *testing.T, w *world) {
			p := w.get("hierarchy").(string)
			eventually(t, "every queue of the hierarchy synced", func() (bool, error) {
				l, err := env.vc.SchedulingV1beta1().Queues().List(context.Background(), metav1.ListOptions{LabelSelector: hierarchyLabel + "=" + p})
				if err != nil {
					return false, err
				}
				open, cycle := 0, 0
				for _, q := range l.Items {
					switch {
					case !strings.HasPrefix(q.Name, p+"-"):
					case strings.HasPrefix(q.Name, p+"-c"):
						if q.Annotations[rules.HierarchyProblemAnnotation] != "" {
							cycle++
						}
					case q.Status.State == v1beta1.QueueStateOpen:
						open++
					}
				}
				return open == 1300 && cycle == 200, nil
			})
		},
	},
	{
		name: "Commands with odd targets and actions",
		apply: func(t *testing.T, w *world) {
			q := victimLike(t, w, "cmd-target")
			w.put("cmd-target", q.Name)
			ref := metav1.NewControllerRef(q, v1beta1.SchemeGroupVersion.WithKind("Queue"))
			odd := func(name string, target *metav1.OwnerReference, action string) *busv1alpha1.Command {
				return &busv1alpha1.Command{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}, Action: action, TargetObject: target}
			}
			qref := func(name string) *metav1.OwnerReference {
				return &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: name, UID: "x"}
			}
			long := strings.Repeat("q", maxObject-4096)
			cmds := []*busv1alpha1.Command{
				odd("missing-queue", qref("no-such-queue"), busv1alpha1.CloseQueueAction),
				odd("longest-target", qref(long), busv1alpha1.CloseQueueAction),
				odd("odd-target-name", qref("../../default"), busv1alpha1.CloseQueueAction),
				odd("pod-target", &metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "x", UID: "x"}, busv1alpha1.CloseQueueAction),
				odd("other-version", &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v9", Kind: "Queue", Name: q.Name, UID: q.UID}, busv1alpha1.CloseQueueAction),
				odd("no-target", nil, busv1alpha1.CloseQueueAction),
				odd("bogus-action", ref, "DeleteEverything"),
				odd("longest-action", ref, strings.Repeat("A", maxObject-4096)),
				odd("stale-uid", qref(q.Name), busv1alpha1.CloseQueueAction),
			}
			for i := range 300 {
				cmds = append(cmds, odd(fmt.Sprintf("flood-%d", i), qref("no-such-queue"), busv1alpha1.OpenQueueAction))
			}
			parallel(t, len(cmds), func(i int) error {
				_, err := env.vc.BusV1alpha1().Commands(w.ns).Create(context.Background(), cmds[i], metav1.CreateOptions{})
				return err
			})
		},
		handled: func(t *testing.T, w *world) {
			// The refused Commands for the queue that exists are deleted;
			// the queue stays Open (the stale and foreign ones do not act).
			eventually(t, "the Commands for queue cmd-target refused and deleted", func() (bool, error) {
				l, err := env.vc.BusV1alpha1().Commands(w.ns).List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return false, err
				}
				for _, c := range l.Items {
					if c.Name == "bogus-action" || c.Name == "longest-action" || c.Name == "stale-uid" {
						return false, nil
					}
				}
				return true, nil
			})
			name := w.get("cmd-target").(string)
			q, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if q.Status.State != v1beta1.QueueStateOpen {
				t.Errorf("queue %s is %s after Commands that must not act on it", name, q.Status.State)
			}
		},
	},
	{
		name: "podgroups minMember 2147483647, huge minResources",
		apply: func(t *testing.T, w *world) {
			q := victimLike(t, w, "pg-queue")
			w.put("pg-queue", q.Name)
			long := strings.Repeat("q", 253) // spec.queue's maxLength
			res := map[string]string{}
			for i := range 2000 {
				res[fmt.Sprintf("example.com/r%05d", i)] = "9223372036854775807"
			}
			for i := range 20 {
				pg := map[string]any{
					"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
					"metadata": map[string]any{"name": fmt.Sprintf("huge-%d", i), "namespace": w.ns},
					"spec":     map[string]any{"minMember": 2147483647, "minTaskMember": map[string]any{"t": 2147483647}, "queue": q.Name, "minResources": res},
					"status":   map[string]any{"phase": "Pending"},
				}
				createRaw(t, "/apis/scheduling.volcano.sh/v1beta1/namespaces/"+w.ns+"/podgroups", pg)
			}
			createRaw(t, "/apis/scheduling.volcano.sh/v1beta1/namespaces/"+w.ns+"/podgroups", map[string]any{
				"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
				"metadata": map[string]any{"name": "longest-queue-name", "namespace": w.ns},
				"spec":     map[string]any{"minMember": 2147483647, "queue": long},
			})
		},
		handled: func(t *testing.T, w *world) {
			name := w.get("pg-queue").(string)
			eventually(t, "the 20 huge podgroups counted in their queue", func() (bool, error) {
				q, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
				return err == nil && q.Status.Pending == 20, err
			})
		},
	},
	{
		name: "quantities that take minutes to parse",
		apply: func(t *testing.T, w *world) {
			q := victimLike(t, w, "quantity-queue")
			w.put("quantity-queue", q.Name)
			hq := runName("hostile-capability")
			deleteQueueAfter(w.t, hq)
			createRaw(t, "/apis/scheduling.volcano.sh/v1beta1/queues", map[string]any{
				"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
				"metadata": map[string]any{"name": hq},
				"spec":     map[string]any{"weight": 1, "capability": hugeQuantities, "deserved": hugeQuantities, "guarantee": map[string]any{"resource": hugeQuantities}},
			})
			w.put("hostile-capability", hq)
			createRaw(t, "/apis/scheduling.volcano.sh/v1beta1/namespaces/"+w.ns+"/podgroups", map[string]any{
				"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
				"metadata": map[string]any{"name": "hostile-quantities", "namespace": w.ns},
				"spec":     map[string]any{"minMember": 1, "queue": q.Name, "minResources": hugeQuantities},
				"status":   map[string]any{"phase": "Running"},
			})
		},
		handled: func(t *testing.T, w *world) {
			// The podgroup is counted in its queue, and the queue with the
			// hostile capability is synced.
			name := w.get("quantity-queue").(string)
			eventually(t, "the podgroup with hostile quantities counted", func() (bool, error) {
				q, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
				return err == nil && q.Status.Running == 1, err
			})
			hq := w.get("hostile-capability").(string)
			eventually(t, "the queue with hostile quantities Open", func() (bool, error) {
				b, err := env.vc.SchedulingV1beta1().RESTClient().Get().AbsPath("/apis/scheduling.volcano.sh/v1beta1/queues/" + hq).DoRaw(context.Background())
				return err == nil && strings.Contains(string(b), `"state":"Open"`), err
			})
		},
	},
	{
		name: "labels and annotations at their limits",
		apply: func(t *testing.T, w *world) {
			q := victimLike(t, w, "labelled", func(q *v1beta1.Queue) { q.Annotations = bigAnnotations(); q.Labels = manyLabels() })
			w.put("labelled", q.Name)
			parallel(t, 5, func(i int) error {
				_, err := env.kube.CoreV1().Pods(w.ns).Create(context.Background(), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("labelled-%d", i), Annotations: bigAnnotations(), Labels: manyLabels()},
					Spec:       corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
				}, metav1.CreateOptions{})
				return err
			})
			nodeSet(t, w, "labelled", 0, func(s *slinkyv1beta1.NodeSet) { s.Annotations = bigAnnotations(); s.Labels = manyLabels() })
		},
		handled: func(t *testing.T, w *world) {
			eventually(t, "the labelled pods in their podgroups", func() (bool, error) {
				for i := range 5 {
					p, err := env.kube.CoreV1().Pods(w.ns).Get(context.Background(), fmt.Sprintf("labelled-%d", i), metav1.GetOptions{})
					if err != nil || p.Annotations[keys.KubeGroupName] == "" {
						return false, err
					}
				}
				return true, nil
			})
		},
	},
	{
		name: "pods naming odd podgroups",
		apply: func(t *testing.T, w *world) {
			long := strings.Repeat("g", maxAnnotations-len(keys.KubeGroupName)-64)
			odd := map[string]map[string]string{
				"empty-group":    {keys.KubeGroupName: ""},
				"longest-group":  {keys.KubeGroupName: long},
				"path-group":     {keys.KubeGroupName: "../../kube-system/x"},
				"upper-group":    {keys.KubeGroupName: "UPPER_case"},
				"missing-group":  {keys.KubeGroupName: "podgroup-00000000-0000-0000-0000-000000000000"},
				"max-min-member": {keys.GroupMinMember: "2147483647"},
				"past-int32":     {keys.GroupMinMember: "99999999999999999999999"},
				"negative":       {keys.GroupMinMember: "-2147483648"},
				"longest-queue":  {keys.QueueName: long},
			}
			for name, a := range odd {
				_, err := env.kube.CoreV1().Pods(w.ns).Create(context.Background(), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: a},
					Spec: corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{Name: "c", Image: "busybox",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"example.com/max": *resourceMax()},
							Limits: corev1.ResourceList{"example.com/max": *resourceMax()}}}}},
				}, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("pod %s: %v", name, err)
				}
			}
			if _, err := env.kube.CoreV1().Pods(w.ns).Create(context.Background(), &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "after-the-odd-ones"},
				Spec:       corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		handled: func(t *testing.T, w *world) {
			// The pod created after them gets its group: the controller's
			// pod watch delivered the odd ones before it.
			eventually(t, "a podgroup for the pod created after the odd ones", func() (bool, error) {
				p, err := env.kube.CoreV1().Pods(w.ns).Get(context.Background(), "after-the-odd-ones", metav1.GetOptions{})
				return err == nil && p.Annotations[keys.KubeGroupName] != "", err
			})
		},
	},
	{
		name: "Job, JobFlow, JobTemplate of the most tasks",
		apply: func(t *testing.T, w *world) {
			// 2 000 tasks of 2147483647 replicas each (about 400 KiB; the
			// API server's validation of larger lists takes it tens of
			// seconds, and serve reads none of these kinds).
			var tasks []batchv1alpha1.TaskSpec
			for i := range 2000 {
				tasks = append(tasks, batchv1alpha1.TaskSpec{Name: fmt.Sprintf("t%05d", i), Replicas: 2147483647, MinAvailable: ptr.To[int32](2147483647),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}})
			}
			spec := batchv1alpha1.JobSpec{SchedulerName: "volcano", MinAvailable: 2147483647, Queue: "default", Tasks: tasks}
			if _, err := env.vc.BatchV1alpha1().Jobs(w.ns).Create(context.Background(), &batchv1alpha1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "most-tasks"}, Spec: spec}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if !flowCRDs(t) {
				return
			}
			if _, err := env.vc.FlowV1alpha1().JobTemplates(w.ns).Create(context.Background(), &flowv1alpha1.JobTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: "most-tasks"}, Spec: spec}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var flows []flowv1alpha1.Flow
			for i := range 3000 {
				var dep *flowv1alpha1.DependsOn
				if i > 0 {
					dep = &flowv1alpha1.DependsOn{Targets: []string{fmt.Sprintf("s%05d", i-1)}}
				}
				flows = append(flows, flowv1alpha1.Flow{Name: fmt.Sprintf("s%05d", i), DependsOn: dep})
			}
			if _, err := env.vc.FlowV1alpha1().JobFlows(w.ns).Create(context.Background(), &flowv1alpha1.JobFlow{
				ObjectMeta: metav1.ObjectMeta{Name: "most-steps"}, Spec: flowv1alpha1.JobFlowSpec{Flows: flows}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		// serve watches none of these kinds: nothing to wait for but the
		// close and the memory.
		handled: func(*testing.T, *world) {},
	},
}

// victimLike creates an Open queue of this run, other than the victim.
func victimLike(t *testing.T, w *world, prefix string, mutate ...func(*v1beta1.Queue)) *v1beta1.Queue {
	t.Helper()
	q := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: runName(prefix)}, Spec: v1beta1.QueueSpec{Weight: 1, Parent: keys.RootQueue}}
	for _, m := range mutate {
		m(q)
	}
	out, err := env.vc.SchedulingV1beta1().Queues().Create(context.Background(), q, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deleteQueueAfter(w.t, out.Name)
	return out
}

func newWorld(t *testing.T, slurm *standIn) *world {
	t.Helper()
	return &world{t: t, ns: namespaces.PerRun(t, env.kube, env.vc, "hostile"), slurm: slurm, state: map[string]any{}}
}
