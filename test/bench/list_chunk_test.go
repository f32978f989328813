package bench

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// BenchmarkListChunks: 'kubectl vc queue list' over 5 000 queues and
// 'kubectl vc podgroup list -A' over 20 000 podgroups at --chunk-size 500
// (the default) and 0 (one request): the requests each run makes and the
// wall time of the whole process (output to /dev/null). The queues' status
// holds state and counts, as with a controller running, so 'queue list'
// reads queues only. Sizes: VC_BENCH_CHUNK_QUEUES, VC_BENCH_CHUNK_PODGROUPS.
func BenchmarkListChunks(b *testing.B) {
	nq, npg := envInt("VC_BENCH_CHUNK_QUEUES", 5000), envInt("VC_BENCH_CHUNK_PODGROUPS", 20000)
	bin := buildBinary(b)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig()
	vc := versioned.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	name := func(q int) string { return fmt.Sprintf("chunk-%04d", q) }
	statuses := queueStatuses(nq, npg, name, func(i int) v1beta1.PodGroupPhase { return coldPhases[i%len(coldPhases)] })
	parallel(nq, func(i int) {
		q, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: name(i)},
			Spec:       v1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		q.Status = statuses[q.Name]
		if _, err := vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
			b.Error(err)
		}
	})
	createListPodGroups(b, kube, vc, "chunk-ns", npg, func(i int) string { return name(i % nq) })
	if b.Failed() {
		return
	}
	proxy := newCountingProxy(b, cfg)
	kc := proxy.kubeconfig(b)
	for _, size := range []string{"500", "0"} {
		b.Run(fmt.Sprintf("vc-queue-list/queues=%d/chunk-size=%s", nq, size), func(b *testing.B) {
			runCounted(b, proxy, kc, []string{bin, "queue", "list", "--chunk-size=" + size})
		})
		b.Run(fmt.Sprintf("vc-podgroup-list-A/podgroups=%d/chunk-size=%s", npg, size), func(b *testing.B) {
			runCounted(b, proxy, kc, []string{bin, "podgroup", "list", "-A", "--chunk-size=" + size})
		})
	}
}
