// Package nodeset implements 'kubectl vc nodeset': list, describe, scale,
// cordon, uncordon and history for Slinky NodeSets (Slurm compute nodes
// running as pods).
package nodeset

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Commands returns the commands of the 'nodeset' group (its name, aliases
// and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newListCmd, describe.Constructor(Kind), newScaleCmd, newCordonCmd, newUncordonCmd, newHistoryCmd)
}

func validateName(kind, name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return util.UsageErrorf("invalid %s name %q: %s", kind, name, errs[0])
	}
	return nil
}

// desiredPods is how many pods a NodeSet should have: spec.replicas (1 when
// unset), or in DaemonSet mode, which ignores replicas, the nodes that
// should run one as its controller counted them (status.desired).
func desiredPods(ns *slinkyv1beta1.NodeSet) int32 {
	if ns.Spec.ScalingMode == slinkyv1beta1.ScalingModeDaemonSet {
		return ns.Status.Desired
	}
	if ns.Spec.Replicas != nil {
		return *ns.Spec.Replicas
	}
	return 1
}

func namespace(f util.Factory) (string, error) {
	ns, _, err := f.Namespace()
	return ns, err
}

// nodeSetOfPod returns the name of the NodeSet controlling pod, or an error
// saying the pod is not a NodeSet pod.
func nodeSetOfPod(pod *corev1.Pod) (string, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != slinkyv1beta1.NodeSetKind.Kind || ref.APIVersion != slinkyv1beta1.SchemeGroupVersion.String() {
		return "", fmt.Errorf("pod %s/%s is not managed by a NodeSet", pod.Namespace, pod.Name)
	}
	return ref.Name, nil
}

// nodeSetPods lists the pods controlled by ns.
func nodeSetPods(ctx context.Context, kc kubernetes.Interface, ns *slinkyv1beta1.NodeSet) ([]corev1.Pod, error) {
	sel := fmt.Sprintf("%s=%s,%s=%s", slinkyv1beta1.LabelAppName, slinkyv1beta1.AppName, slinkyv1beta1.LabelAppInstance, ns.Name)
	list, err := kc.CoreV1().Pods(ns.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if metav1.IsControlledBy(&p, ns) {
			out = append(out, p)
		}
	}
	return out, nil
}
