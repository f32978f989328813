package faults

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// convergeDeadline bounds the polls for serve's work once serve is
// connected and retrying normally: the work of these tests done on a loaded
// two-core machine. It bounds a poll; how fast serve really converges is
// measured by the benchmarks.
const convergeDeadline = 30 * time.Second

// client-go's reflector (k8s.io/client-go v0.37 tools/cache/reflector.go,
// defaultBackoff*) retries a failed list or watch after a backoff that
// starts at 800 ms, doubles up to 30 s, and is stretched by a jitter of up
// to 100%: a reflector that has failed for a while sleeps up to 60 s
// before it tries again.
const (
	reflectorBackoffInit   = 800 * time.Millisecond
	reflectorBackoffCap    = 30 * time.Second
	reflectorBackoffJitter = 1.0
	// serve's workqueues (workqueue.DefaultTypedControllerRateLimiter)
	// retry a failed sync after 5 ms, doubling, without jitter.
	workqueueBackoffInit = 5 * time.Millisecond
)

// afterOutage is how long serve may take to converge once the API is back
// from an outage of the given length. Its watches and its failed syncs were
// retried with growing backoffs during the outage, and the sleep under way
// when the API returns must end first. A backoff that doubles from init
// has slept at least its current base minus init in all, so after failing
// for the whole outage its base is at most outage+init: the sleep under way
// is at most (1+jitter)(outage+init), and never more than (1+jitter) times
// the cap. Then serve converges as after any change (convergeDeadline).
func afterOutage(outage time.Duration) time.Duration {
	reflector := time.Duration((1 + reflectorBackoffJitter) * float64(min(outage+reflectorBackoffInit, reflectorBackoffCap)))
	workqueue := outage + workqueueBackoffInit
	return max(reflector, workqueue) + convergeDeadline
}

func createPods(t *testing.T, kube kubernetes.Interface, ns, prefix string, n, workers int) {
	t.Helper()
	if err := createPodsErr(kube, ns, prefix, n, workers); err != nil {
		t.Fatal(err)
	}
}

// createPodsErr creates n pods with workers requests at a time and returns
// the first error.
func createPodsErr(kube kubernetes.Interface, ns, prefix string, n, workers int) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := atomic.Int64{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if _, err := kube.CoreV1().Pods(ns).Create(ctx, barePod(fmt.Sprintf("%s-%04d", prefix, i)), metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when there was none
}

func createGroup(t *testing.T, vc versioned.Interface, ns, name, queue string, phase v1beta1.PodGroupPhase) {
	t.Helper()
	_, err := vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &v1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1beta1.PodGroupSpec{MinMember: 1, Queue: queue},
		Status:     v1beta1.PodGroupStatus{Phase: phase},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func setPhase(t *testing.T, vc versioned.Interface, ns, name string, phase v1beta1.PodGroupPhase) {
	t.Helper()
	patch := []byte(`{"status":{"phase":"` + string(phase) + `"}}`)
	if _, err := vc.SchedulingV1beta1().PodGroups(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createQueue creates a queue of this run (base and a suffix), deleted when
// the test ends, and returns its name.
func createQueue(t *testing.T, vc versioned.Interface, base string) string {
	t.Helper()
	name := perRun(base)
	if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1beta1.QueueSpec{Weight: 1},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vc, _ := clients(t) // a test may have restarted the API server
		if err := vc.SchedulingV1beta1().Queues().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("cleanup: delete queue %s: %v", name, err)
		}
	})
	return name
}

func wantCounts(vc versioned.Interface, queue string, pending, running, completed int32) func() (bool, error) {
	return func() (bool, error) {
		s, err := queueCounts(vc, queue)
		if err != nil {
			return false, err
		}
		if s.Pending != pending || s.Running != running || s.Completed != completed {
			return false, fmt.Errorf("queue %s: pending %d running %d completed %d, want %d %d %d",
				queue, s.Pending, s.Running, s.Completed, pending, running, completed)
		}
		return true, nil
	}
}

func groupedBy(vc versioned.Interface, kube kubernetes.Interface, ns string, pods int) func() (bool, error) {
	return func() (bool, error) {
		bad, err := checkGrouping(vc, kube, ns, pods)
		if err != nil {
			return false, err
		}
		if bad != "" {
			return false, fmt.Errorf("%s", bad)
		}
		return true, nil
	}
}

// TestAPIServerAndEtcdRestart stops kube-apiserver and then etcd while
// serve is grouping pods and counting a queue, and brings them back. serve
// must stay up through the outage (no exit on a lost watch or a failed
// write), reconnect on its own, and converge once the API answers again
// (within afterOutage: the backoffs it built up while the API was away,
// and then the time to do the work), both on the work interrupted by the outage and
// on changes made after it; and no pod may end up with two groups.
func TestAPIServerAndEtcdRestart(t *testing.T) {
	vc, kube := clients(t)
	ns := namespace(t, kube, "restart")
	queue := createQueue(t, vc, "restart-q")
	for i := range 10 {
		createGroup(t, vc, ns, fmt.Sprintf("job-%02d", i), queue, v1beta1.PodGroupRunning)
	}
	p := startServe(t, "--controllers=queue,podgroup")
	poll(t, "initial queue counts", 2*time.Minute, wantCounts(vc, queue, 0, 10, 0))

	// Pods created just before the outage are being grouped when the API
	// goes away: some of serve's creates and pod patches fail mid-flight.
	createPods(t, kube, ns, "before", 100, 8)
	down := time.Now()
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := cp.StopEtcd(); err != nil {
		t.Fatal(err)
	}
	// Let serve's watches break and its retries fail for a while; a crash
	// on a lost connection would happen here.
	time.Sleep(3 * time.Second)
	if p.Exited() {
		t.Fatalf("serve exited while the API was down: %v", p.Err())
	}
	if err := cp.StartEtcd(); err != nil {
		t.Fatal(err)
	}
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	outage := back.Sub(down)
	deadline := afterOutage(outage)
	t.Logf("the API was away for %v; serve is given %v to converge", outage.Round(time.Millisecond), deadline.Round(time.Millisecond))
	// Fresh clients: the old ones' connections died with the server.
	vc, kube = clients(t)

	// Changes after the outage reach serve only through re-established
	// watches.
	createPods(t, kube, ns, "after", 20, 4)
	for i := range 5 {
		setPhase(t, vc, ns, fmt.Sprintf("job-%02d", i), v1beta1.PodGroupPending)
	}
	for i := range 3 {
		createGroup(t, vc, ns, fmt.Sprintf("late-%02d", i), queue, v1beta1.PodGroupCompleted)
	}
	poll(t, "queue counts after the restart", deadline, wantCounts(vc, queue, 5, 5, 3))
	// 120 pods, each with exactly one group of its own, plus the 13 groups
	// made by hand which have no pod: checkGrouping works on pods, so the
	// hand-made groups live in another namespace for that check below.
	poll(t, "every pod grouped after the restart", deadline, func() (bool, error) {
		return podsGroupedIgnoring(vc, kube, ns, 120)
	})
	t.Logf("converged %v after the API was back", time.Since(back).Round(time.Millisecond))
	if p.Exited() {
		t.Fatalf("serve exited after the restart: %v", p.Err())
	}
}

// podsGroupedIgnoring is checkGrouping for a namespace that also holds
// groups made by hand (owned by nothing): those are not counted.
func podsGroupedIgnoring(vc versioned.Interface, kube kubernetes.Interface, ns string, pods int) (bool, error) {
	pgs, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	if len(list.Items) != pods {
		return false, fmt.Errorf("%d pods, want %d", len(list.Items), pods)
	}
	byOwner := map[types.UID]int{}
	for _, pg := range pgs.Items {
		for _, ref := range pg.OwnerReferences {
			byOwner[ref.UID]++
		}
	}
	for _, pod := range list.Items {
		if n := byOwner[pod.UID]; n != 1 {
			return false, fmt.Errorf("pod %s owns %d groups", pod.Name, n)
		}
		if pod.Annotations[keys.KubeGroupName] != "podgroup-"+string(pod.UID) {
			return false, fmt.Errorf("pod %s not annotated with its group", pod.Name)
		}
	}
	return true, nil
}

// TestKillServeWhileGrouping SIGKILLs serve three times while it groups
// 1 000 pods and restarts it. After
// the last restart every pod carries its group, each pod owns exactly one
// group, and no group is left without its pod.
func TestKillServeWhileGrouping(t *testing.T) {
	vc, kube := clients(t)
	ns := namespace(t, kube, "crash")
	const total = 1000
	p := startServe(t, "--controllers=podgroup")
	created := make(chan struct{})
	go func() {
		defer close(created)
		// Not t.Fatal: this is not the test's goroutine.
		if err := createPodsErr(kube, ns, "pod", total, 16); err != nil {
			t.Error(err)
		}
	}()
	killedMidway := 0
	for _, at := range []int{150, 450, 800} {
		poll(t, fmt.Sprintf("%d groups", at), 2*time.Minute, func() (bool, error) {
			l, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			return err == nil && len(l.Items) >= at, err
		})
		p.Kill()
		l, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("SIGKILLed serve with %d of %d groups made", len(l.Items), total)
		if len(l.Items) < total {
			killedMidway++
		}
		p = startServe(t, "--controllers=podgroup")
	}
	<-created
	if t.Failed() {
		return
	}
	if killedMidway == 0 {
		t.Log("serve finished before every kill; the restarts still ran")
	}
	poll(t, "every pod grouped after the restarts", 2*time.Minute, groupedBy(vc, kube, ns, total))
}

// TestSecondWriterEditsQueue: while serve keeps rewriting a queue's status
// (its podgroups change phase all the time), a user edits the queue's
// weight and labels 40 times with patches. serve must never undo a user
// edit: a watch on the queue must never see the weight go back, and at the
// end the last weight and every label are there and the counts are right.
func TestSecondWriterEditsQueue(t *testing.T) {
	vc, kube := clients(t)
	ns := namespace(t, kube, "editor")
	const groups, edits = 20, 40
	queue := createQueue(t, vc, "edited-q")
	for i := range groups {
		createGroup(t, vc, ns, fmt.Sprintf("g-%02d", i), queue, v1beta1.PodGroupPending)
	}
	startServe(t, "--controllers=queue")
	poll(t, "initial counts", 2*time.Minute, wantCounts(vc, queue, groups, 0, 0))

	w, err := vc.SchedulingV1beta1().Queues().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + queue})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	rollbacks := make(chan string, 100)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		high := int32(0)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified {
				continue
			}
			q := ev.Object.(*v1beta1.Queue)
			if q.Spec.Weight < high {
				rollbacks <- fmt.Sprintf("weight went back from %d to %d at resourceVersion %s", high, q.Spec.Weight, q.ResourceVersion)
			}
			high = max(high, q.Spec.Weight)
		}
	}()

	stop := make(chan struct{})
	churned := make(chan struct{})
	go func() {
		defer close(churned)
		phases := []v1beta1.PodGroupPhase{v1beta1.PodGroupRunning, v1beta1.PodGroupPending}
		for round := 0; ; round++ {
			for i := range groups {
				select {
				case <-stop:
					return
				default:
				}
				patch := []byte(`{"status":{"phase":"` + string(phases[round%2]) + `"}}`)
				_, _ = vc.SchedulingV1beta1().PodGroups(ns).Patch(ctx, fmt.Sprintf("g-%02d", i), types.MergePatchType, patch, metav1.PatchOptions{})
			}
		}
	}()
	for i := 1; i <= edits; i++ {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"edit-%02d":"yes"}},"spec":{"weight":%d}}`, i, i+1)
		if _, err := vc.SchedulingV1beta1().Queues().Patch(ctx, queue, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "second-writer"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // spread the edits over serve's writes
	}
	close(stop)
	<-churned
	// Settle every group on one phase so the final counts are known.
	for i := range groups {
		setPhase(t, vc, ns, fmt.Sprintf("g-%02d", i), v1beta1.PodGroupRunning)
	}
	poll(t, "final counts", convergeDeadline, wantCounts(vc, queue, 0, groups, 0))
	w.Stop()
	<-watched
	close(rollbacks)
	for r := range rollbacks {
		t.Error("lost user edit: " + r)
	}
	q, err := vc.SchedulingV1beta1().Queues().Get(ctx, queue, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Spec.Weight != edits+1 {
		t.Errorf("weight %d, want the last edit's %d", q.Spec.Weight, edits+1)
	}
	for i := 1; i <= edits; i++ {
		if q.Labels[fmt.Sprintf("edit-%02d", i)] != "yes" {
			t.Errorf("label edit-%02d lost: %v", i, q.Labels)
		}
	}
}
