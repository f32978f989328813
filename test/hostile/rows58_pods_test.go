package hostile

// The row of issue 58's item 3 for pods: a tenant's pods, which serve
// caches (the podgroup and NodeSet controllers watch every pod), carry
// annotations neither controller reads.

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

func init() { rows = append(rows, rowForeignPods) }

// foreignPods are the tenant's pods, each with a unique annotation of
// foreignAnnotation bytes (62.5 MiB in all). No node runs: they stay
// Pending.
const foreignPods = 1000

var rowForeignPods = row{
	name: "1 000 foreign pods with 64 KiB annotations",
	// 62 MiB written at once, and a second serve started beside them.
	alone: "it writes 62 MiB of pods and starts a second serve beside them, whose idle RSS the other rows' objects would blur",
	apply: func(t *testing.T, w *world) {
		ctx := context.Background()
		pod := func(name, scheduler string, annotations map[string]string) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
				Spec: corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1"}}}}
		}
		parallel(t, foreignPods, func(i int) error {
			_, err := env.kube.CoreV1().Pods(w.ns).Create(ctx, pod(fmt.Sprintf("foreign-%04d", i), "",
				map[string]string{"example.com/blob": unique(foreignAnnotation)}), metav1.CreateOptions{})
			return err
		})
		// Made after them, for Volcano's scheduler: once the podgroup
		// controller has grouped it, the pod watch has delivered every pod
		// written before.
		if _, err := env.kube.CoreV1().Pods(w.ns).Create(ctx, pod("after-foreign-pods", keys.VolcanoScheduler, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	},
	handled: func(t *testing.T, w *world) {
		eventually(t, "the pod made after them grouped", func() (bool, error) {
			p, err := env.kube.CoreV1().Pods(w.ns).Get(context.Background(), "after-foreign-pods", metav1.GetOptions{})
			return err == nil && p.Annotations[keys.KubeGroupName] != "", err
		})
		what := fmt.Sprintf("%d pods of %d KiB annotations (%d MiB)", foreignPods, foreignAnnotation>>10, foreignPods*foreignAnnotation>>20)
		grewWithin(t, w, what)
		// A serve started now lists them before it is ready: its idle RSS
		// is what they cost at every start.
		again := startServe(t, w.slurm.flags(t)...)
		t.Logf("%s: a serve started beside them idles at %d MiB (the first, started before them: %d MiB)", what, again.idle>>20, w.serve.idle>>20)
		if grew := again.idle - w.serve.idle; grew > rowGrowth {
			t.Errorf("a serve started beside %s idles at %d MiB, %d MiB over one started before them: more than %d MiB",
				what, again.idle>>20, grew>>20, rowGrowth>>20)
		}
	},
}
