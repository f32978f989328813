package nodeset

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// FuzzNodeCordonReason: whatever a Node's cordon-reason annotation and
// conditions hold, once cached (keepNodeReasons) the drain reason made of
// them is one line of printable characters, our prefix and at most 256
// runes after it.
func FuzzNodeCordonReason(f *testing.F) {
	f.Add("GPU ECC error\ndetected", "BadCPU", "CPU 17: Machine Check Exception", true)
	f.Add("", "", "", false)
	f.Add("\a\x00\u200b", "r\tr", strings.Repeat("é", 3000), false)
	f.Add(string([]byte{0xff, 0xfe}), "\r\n", "\x1b[31m", true)
	c := New(Config{})
	c.propagatedConditions = []string{"GPUProblem", "CPUProblem"}
	f.Fuzz(func(t *testing.T, annotation, reason, message string, annotate bool) {
		src := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: "CPUProblem", Status: corev1.ConditionTrue, Reason: reason, Message: message},
				{Type: "GPUProblem", Status: corev1.ConditionTrue, Reason: message, Message: reason},
			}}}
		if annotate {
			src.Annotations = map[string]string{slinkyv1beta1.AnnotationNodeCordonReason: annotation}
		}
		dst := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
		c.keepNodeReasons(dst, src)
		for _, nc := range dst.Status.Conditions {
			if len(nc.Reason) > maxKeptText || len(nc.Message) > maxKeptText {
				t.Fatalf("condition kept whole: %d, %d bytes", len(nc.Reason), len(nc.Message))
			}
		}
		got := c.nodeCordonReason(dst)
		rest, ok := strings.CutPrefix(got, reasonPrefix)
		if !ok {
			t.Fatalf("reason %q: not ours", got)
		}
		if n := utf8.RuneCountInString(rest); n > maxReasonRunes+len("kubernetes node n cordoned") {
			t.Fatalf("reason of %d runes", n)
		}
		for _, r := range got {
			if unicode.IsControl(r) || r == utf8.RuneError {
				t.Fatalf("reason %q holds %U", got, r)
			}
		}
		if !nodeCordonDrain(got) {
			t.Fatalf("reason %q not taken for a node cordon's drain", got)
		}
	})
}

// TestNodeCordonReasonOrder: the annotation first, then the listed True
// conditions in the flag's order, then the controller's words; an
// annotation that says nothing printable falls back to the conditions.
func TestNodeCordonReasonOrder(t *testing.T) {
	c := New(Config{})
	c.propagatedConditions = []string{"B", "A"}
	node := func(ann map[string]string, conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "k1", Annotations: ann}, Status: corev1.NodeStatus{Conditions: conds}}
	}
	a := corev1.NodeCondition{Type: "A", Status: corev1.ConditionTrue, Reason: "ra", Message: "ma"}
	b := corev1.NodeCondition{Type: "B", Status: corev1.ConditionTrue, Reason: "rb", Message: "mb"}
	off := corev1.NodeCondition{Type: "A", Status: corev1.ConditionFalse, Reason: "x", Message: "y"}
	for _, tc := range []struct {
		node *corev1.Node
		want string
	}{
		{node(map[string]string{slinkyv1beta1.AnnotationNodeCordonReason: " bad\tdimm "}, a, b), "kubectl-vc: bad dimm"},
		{node(nil, a, b), "kubectl-vc: (rb: mb); (ra: ma)"},
		{node(map[string]string{slinkyv1beta1.AnnotationNodeCordonReason: "\a\n"}, a), "kubectl-vc: (ra: ma)"},
		{node(nil, off), "kubectl-vc: kubernetes node k1 cordoned"},
	} {
		if got := c.nodeCordonReason(tc.node); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	for _, r := range []string{reasonScaleIn, reasonUpdate, reasonCordoned, "bad dimm"} {
		if nodeCordonDrain(r) {
			t.Errorf("%q taken for a node cordon's drain", r)
		}
	}
}
