package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Fixtures shared by the scale benchmarks: objects the size and shape of
// a real cluster's, so that what a cache keeps of them means something.

// createRealisticPods creates n running training pods, their status written
// as a kubelet would. mutate, when set, edits pod i first (its namespace
// too: "default" unless set).
func createRealisticPods(b *testing.B, kube kubernetes.Interface, n int, mutate func(i int, p *corev1.Pod)) {
	ctx := context.Background()
	parallel(n, func(i int) {
		p := realisticPod(i)
		if mutate != nil {
			mutate(i, p)
		}
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		created, err := kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		created.Status = realisticPodStatus(i)
		if _, err := kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			b.Error(err)
		}
	})
}

// createRealisticPodGroups creates n podgroups in "default" as the podgroup
// controller makes them, with the status and conditions Volcano's scheduler
// writes; podgroup i is in queue queueOf(i) with phase phaseOf(i).
func createRealisticPodGroups(b *testing.B, vc versioned.Interface, n int, queueOf func(i int) string, phaseOf func(i int) v1beta1.PodGroupPhase) {
	createRealisticPodGroupsIn(b, vc, n, func(int) string { return "default" }, queueOf, phaseOf)
}

// createRealisticPodGroupsIn is createRealisticPodGroups with podgroup i
// in namespace nsOf(i).
func createRealisticPodGroupsIn(b *testing.B, vc versioned.Interface, n int, nsOf, queueOf func(i int) string, phaseOf func(i int) v1beta1.PodGroupPhase) {
	ctx := context.Background()
	minRes := corev1.ResourceList{
		"count/pods": resource.MustParse("4"), "pods": resource.MustParse("4"),
		"cpu": resource.MustParse("2"), "requests.cpu": resource.MustParse("2"),
		"memory": resource.MustParse("8Gi"), "requests.memory": resource.MustParse("8Gi"),
	}
	parallel(n, func(i int) {
		phase := phaseOf(i)
		if _, err := vc.SchedulingV1beta1().PodGroups(nsOf(i)).Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg-%05d", i),
				Annotations: map[string]string{"volcano.sh/preemptable": "true"}},
			Spec:   v1beta1.PodGroupSpec{MinMember: 4, Queue: queueOf(i), MinResources: &minRes},
			Status: realisticGroupStatus(phase),
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
}

// realisticGroupStatus is a status as Volcano's scheduler leaves it.
func realisticGroupStatus(phase v1beta1.PodGroupPhase) v1beta1.PodGroupStatus {
	t := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	s := v1beta1.PodGroupStatus{Phase: phase}
	switch phase {
	case v1beta1.PodGroupRunning, v1beta1.PodGroupCompleted:
		s.Running, s.Succeeded = 4, 0
		s.Conditions = []v1beta1.PodGroupCondition{{Type: v1beta1.PodGroupScheduled, Status: corev1.ConditionTrue,
			TransitionID: "8f4c2a9e-2b41-4a57-9e0c-51b1c07d6a3e", LastTransitionTime: t,
			Reason: "tasks in gang are ready to be scheduled", Message: ""}}
	default:
		s.Conditions = []v1beta1.PodGroupCondition{{Type: v1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue,
			TransitionID: "3d0e7a51-64f2-4c1b-8a3c-9b7f0e2d4c16", LastTransitionTime: t, Reason: "NotEnoughResources",
			Message: "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; Pending: 4 Unschedulable"}}
	}
	return s
}

// createRealisticReplicaSets creates n ReplicaSets such as Deployments
// leave behind (scaled to zero, default scheduler): the podgroup
// controller caches every ReplicaSet of the cluster.
func createRealisticReplicaSets(b *testing.B, kube kubernetes.Interface, n int) {
	ctx := context.Background()
	parallel(n, func(i int) {
		p := realisticPod(i)
		p.Spec.SchedulerName = "default-scheduler"
		labels := map[string]string{"app": fmt.Sprintf("svc-%04d", i), "pod-template-hash": fmt.Sprintf("%08x", i)}
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%04d-%08x", i, i), Labels: labels,
				Annotations: map[string]string{"deployment.kubernetes.io/revision": "3", "deployment.kubernetes.io/desired-replicas": "2"}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: p.Spec}},
		}
		if _, err := kube.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
}

// realisticPodStatus is what a kubelet reports for a running pod.
func realisticPodStatus(i int) corev1.PodStatus {
	t := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	cond := func(c corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: t}
	}
	ip := fmt.Sprintf("10.%d.%d.%d", 100+i/65536, (i/256)%256, i%256)
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{cond("PodReadyToStartContainers"), cond(corev1.PodInitialized),
			cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
		HostIP: "192.168.10.17", HostIPs: []corev1.HostIP{{IP: "192.168.10.17"}},
		PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &t, QOSClass: corev1.PodQOSBurstable,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "trainer", Ready: true, Started: ptr.To(true), RestartCount: 0,
			Image:       "registry.example/ml/trainer:2025.11.3",
			ImageID:     "registry.example/ml/trainer@sha256:9b2f1c4d7e8a0b3c6d5e4f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e",
			ContainerID: fmt.Sprintf("containerd://%064x", i),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi")},
				Limits:   corev1.ResourceList{"cpu": resource.MustParse("8"), "memory": resource.MustParse("32Gi")},
			},
			AllocatedResources: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi")},
		}},
	}
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

// createListPodGroups creates n small podgroups (minMember 1, mixed
// phases) spread over 20 namespaces <nsPrefix>-00..19, podgroup i in queue
// queueOf(i): the fixture of the list benchmarks.
func createListPodGroups(b *testing.B, kube kubernetes.Interface, vc versioned.Interface, nsPrefix string, n int, queueOf func(i int) string) {
	ctx := context.Background()
	const namespaces = 20
	for i := range namespaces {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%02d", nsPrefix, i)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	parallel(n, func(i int) {
		if _, err := vc.SchedulingV1beta1().PodGroups(fmt.Sprintf("%s-%02d", nsPrefix, i%namespaces)).Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg-%05d", i)},
			Spec:       v1beta1.PodGroupSpec{MinMember: 1, Queue: queueOf(i)},
			Status:     v1beta1.PodGroupStatus{Phase: coldPhases[i%len(coldPhases)]},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
}
