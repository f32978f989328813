package nodeset

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func nodeSetPod(name string, cordoned bool, owner *slinkyv1beta1.NodeSet) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "slurm", Annotations: map[string]string{}}}
	if cordoned {
		p.Annotations[slinkyv1beta1.AnnotationPodCordon] = "true"
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, slinkyv1beta1.NodeSetKind)}
	}
	return p
}

// writes lists the verbs of the actions that change something.
func writes(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			out = append(out, v+" "+a.GetResource().Resource+"/"+a.GetSubresource())
		}
	}
	return out
}

// TestCordonOptions: Complete takes its client from the factory, and Run
// patches only pods a NodeSet controls whose annotation must change.
func TestCordonOptions(t *testing.T) {
	ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: "slurm", UID: "u1"}}
	for _, tc := range []struct {
		name    string
		cordon  bool
		pods    []runtime.Object
		args    []string
		wantOut string
		wantErr string
		writes  int
	}{
		{"cordon", true, []runtime.Object{nodeSetPod("compute-0", false, ns)}, []string{"compute-0"}, "pod/compute-0 cordoned\n", "", 1},
		{"cordon again", true, []runtime.Object{nodeSetPod("compute-0", true, ns)}, []string{"compute-0"}, "pod/compute-0 already cordoned\n", "", 0},
		{"uncordon", false, []runtime.Object{nodeSetPod("compute-0", true, ns)}, []string{"compute-0"}, "pod/compute-0 uncordoned\n", "", 1},
		{"not a NodeSet pod", true, []runtime.Object{nodeSetPod("web", false, nil)}, []string{"web"}, "", "is not managed by a NodeSet", 0},
		{"missing pod", true, nil, []string{"compute-9"}, "", `pod "compute-9" not found in namespace "slurm": cordon takes the names of NodeSet pods`, 0},
		{"the NodeSet's name", true, nil, []string{"compute"}, "", `"compute" is a NodeSet, not a pod: cordon takes the names of its pods, such as compute-0`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := kubefake.NewClientset(tc.pods...)
			var out bytes.Buffer
			o := &CordonOptions{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out},
				Factory: clitesting.Factory{NS: "slurm", Kube: kc, Volcano: vcfake.NewSimpleClientset(ns)}, Cordon: tc.cordon}
			if err := o.Complete(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if out.String() != tc.wantOut {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
			if w := writes(kc.Actions()); len(w) != tc.writes {
				t.Errorf("writes %v, want %d", w, tc.writes)
			}
			if tc.writes == 1 {
				pod, err := kc.CoreV1().Pods("slurm").Get(context.Background(), tc.args[0], metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, has := pod.Annotations[slinkyv1beta1.AnnotationPodCordon]; has != tc.cordon {
					t.Errorf("cordon annotation present=%t, want %t", has, tc.cordon)
				}
			}
		})
	}
}

// TestScaleOptions: Run writes one merge patch of spec.replicas and
// reports the new count; a missing NodeSet is an error with no write.
func TestScaleOptions(t *testing.T) {
	two := int32(2)
	vc := vcfake.NewSimpleClientset(&slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: "slurm"},
		Spec:       slinkyv1beta1.NodeSetSpec{Replicas: &two},
	})
	var out bytes.Buffer
	run := func(name string) error {
		o := &ScaleOptions{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}, Factory: clitesting.Factory{NS: "slurm", Volcano: vc}, Replicas: 5}
		if err := o.Complete([]string{name}); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(context.Background())
	}
	if err := run("compute"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "nodeset.slinky.slurm.net/compute scaled to 5") {
		t.Errorf("output %q", out.String())
	}
	got, err := vc.SlinkyV1beta1().NodeSets("slurm").Get(context.Background(), "compute", metav1.GetOptions{})
	if err != nil || got.Spec.Replicas == nil || *got.Spec.Replicas != 5 {
		t.Fatalf("replicas after scale: %v, %v", got.Spec.Replicas, err)
	}
	vc.ClearActions()
	if err := run("nope"); err == nil {
		t.Fatal("scaling a missing NodeSet succeeded")
	}
	// The fake records the failed patch; nothing was stored.
	if _, err := vc.SlinkyV1beta1().NodeSets("slurm").Get(context.Background(), "nope", metav1.GetOptions{}); err == nil {
		t.Error("a patch of a missing NodeSet created it")
	}
}
