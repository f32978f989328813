package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane/cptest"
)

// BenchmarkInformerMemory measures what serve's informer caches cost, to
// size the opportunity of a stronger transform than the manager's current
// one (which drops managedFields only). For pods (realistic ones: env,
// volumes, probes, tolerations, status) and podgroups it reports the live
// heap of a synced cache with: no transform, managedFields dropped (what
// serve does today), and everything dropped that the controllers do not
// read. It does not change serve; docs/benchmarks.md discusses the result.
func BenchmarkInformerMemory(b *testing.B) {
	npods, npg := envInt("VC_BENCH_MEM_PODS", 5000), envInt("VC_BENCH_MEM_PODGROUPS", 20000)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig()
	kube := kubernetes.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)
	ctx := context.Background()
	parallel(npods, func(i int) {
		if _, err := kube.CoreV1().Pods("default").Create(ctx, realisticPod(i), metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	minRes := corev1.ResourceList{"cpu": resource.MustParse("2"), "requests.cpu": resource.MustParse("2"),
		"memory": resource.MustParse("8Gi"), "requests.memory": resource.MustParse("8Gi"), "count/pods": resource.MustParse("4")}
	parallel(npg, func(i int) {
		if _, err := vc.SchedulingV1beta1().PodGroups("default").Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("mem-%05d", i), Annotations: map[string]string{"volcano.sh/preemptable": "true"}},
			Spec:       v1beta1.PodGroupSpec{MinMember: 4, Queue: "default", MinResources: &minRes},
			Status:     v1beta1.PodGroupStatus{Phase: v1beta1.PodGroupRunning},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	if b.Failed() {
		return
	}
	variants := []struct {
		name string
		fn   cache.TransformFunc
	}{
		{"none", nil},
		{"managedFields", dropManagedFieldsCopy},
		{"readFieldsOnly", keepReadFields},
	}
	for _, v := range variants {
		b.Run("pods/"+v.name, func(b *testing.B) {
			for range b.N {
				heap := cachedHeap(b, func(stop chan struct{}) cache.SharedIndexInformer {
					opts := []kubeinformers.SharedInformerOption{}
					if v.fn != nil {
						opts = append(opts, kubeinformers.WithTransform(v.fn))
					}
					f := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, opts...)
					inf := f.Core().V1().Pods().Informer()
					f.Start(stop)
					return inf
				})
				b.ReportMetric(heap/(1<<20), "MiB-heap")
				b.ReportMetric(heap/float64(npods), "B/object")
			}
		})
		b.Run("podgroups/"+v.name, func(b *testing.B) {
			for range b.N {
				heap := cachedHeap(b, func(stop chan struct{}) cache.SharedIndexInformer {
					opts := []vcinformers.SharedInformerOption{}
					if v.fn != nil {
						opts = append(opts, vcinformers.WithTransform(v.fn))
					}
					f := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, opts...)
					inf := f.Scheduling().V1beta1().PodGroups().Informer()
					f.Start(stop)
					return inf
				})
				b.ReportMetric(heap/(1<<20), "MiB-heap")
				b.ReportMetric(heap/float64(npg), "B/object")
			}
		})
	}
}

// cachedHeap is the live heap a synced informer adds, measured after GC
// with the informer still referenced.
func cachedHeap(b *testing.B, start func(stop chan struct{}) cache.SharedIndexInformer) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	inf := start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		b.Fatal("cache not synced")
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := len(inf.GetStore().ListKeys())
	close(stop)
	runtime.KeepAlive(inf)
	if n == 0 {
		b.Fatal("empty cache")
	}
	return float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
}

// dropManagedFieldsCopy does what serve's transform does today (the
// manager's own function is unexported).
func dropManagedFieldsCopy(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// keepReadFields keeps what the queue and podgroup controllers read. For
// pods: metadata (owners, labels, annotations, deletion), scheduler and
// priority class, each container's name and resources (init containers
// with their restart policy, for sidecars), overhead and pod resources,
// the phase and the resources in container statuses (in-place resize).
// For podgroups the queue controller needs only queue and phase, but the
// podgroup controller Updates groups from its cache, so spec, labels and
// annotations stay (stripping them would make that Update drop them).
func keepReadFields(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		o.ManagedFields = nil
		slim := func(cs []corev1.Container) []corev1.Container {
			out := make([]corev1.Container, len(cs))
			for i, c := range cs {
				out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
			}
			return out
		}
		o.Spec = corev1.PodSpec{
			SchedulerName: o.Spec.SchedulerName, PriorityClassName: o.Spec.PriorityClassName,
			Containers: slim(o.Spec.Containers), InitContainers: slim(o.Spec.InitContainers),
			Overhead: o.Spec.Overhead, Resources: o.Spec.Resources,
		}
		statuses := func(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
			out := make([]corev1.ContainerStatus, len(ss))
			for i, s := range ss {
				out[i] = corev1.ContainerStatus{Name: s.Name, Resources: s.Resources}
			}
			return out
		}
		o.Status = corev1.PodStatus{Phase: o.Status.Phase,
			ContainerStatuses: statuses(o.Status.ContainerStatuses), InitContainerStatuses: statuses(o.Status.InitContainerStatuses)}
		return o, nil
	case *v1beta1.PodGroup:
		o.ManagedFields = nil
		o.Status.Conditions = nil
		return o, nil
	}
	return dropManagedFieldsCopy(obj)
}

// realisticPod looks like a pod of a training job: several env vars,
// volumes and mounts, probes, tolerations, affinity.
func realisticPod(i int) *corev1.Pod {
	env := make([]corev1.EnvVar, 12)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("TRAINING_SETTING_%02d", j), Value: fmt.Sprintf("value-%d-%d", i, j)}
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intOrString(8080)}}, PeriodSeconds: 10}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("worker-%05d", i),
			Labels:      map[string]string{"app": "trainer", "job": fmt.Sprintf("job-%03d", i/8), "role": "worker", "team": "ml-platform"},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
		},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			Containers: []corev1.Container{{
				Name: "trainer", Image: "registry.example/ml/trainer:2025.11.3",
				Command: []string{"python", "-m", "trainer.main"}, Args: []string{"--epochs=90", "--batch-size=256", "--data=/data"},
				Env: env,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi")},
					Limits:   corev1.ResourceList{"cpu": resource.MustParse("8"), "memory": resource.MustParse("32Gi")},
				},
				VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "shm", MountPath: "/dev/shm"}, {Name: "config", MountPath: "/etc/trainer"}},
				LivenessProbe:  probe,
				ReadinessProbe: probe,
				Ports:          []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {Name: "nccl", ContainerPort: 29500}},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "datasets"}}},
				{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "trainer-config"}}}},
			},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu-a", "gpu-b"}}}}}}}},
		},
	}
}

func intOrString(port int) intstr.IntOrString { return intstr.FromInt32(int32(port)) }
