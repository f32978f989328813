package evictions

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

var now = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func event(ns, name string, kind string, obj string, uid types.UID, typ, reason, msg string, at time.Time) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: obj, UID: uid},
		Type:           typ, Reason: reason, Message: msg, Count: 1, FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at)}
}

func run(t *testing.T, ns string, args func(*Options)) (string, string, error) {
	t.Helper()
	victimAt := now.Add(-10 * time.Minute)
	kube := kubefake.NewSimpleClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "urgent-0", UID: "u-urgent", Annotations: map[string]string{keys.KubeGroupName: "urgent"}},
			Spec: corev1.PodSpec{Priority: ptr.To[int32](100)}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "batch-0", UID: "u-new", Annotations: map[string]string{keys.KubeGroupName: "batch"}},
			Spec: corev1.PodSpec{Priority: ptr.To[int32](1), NodeName: "n9"}},
		event("a", "e1", "Pod", "batch-0", "u-old", corev1.EventTypeNormal, "Scheduled", "Successfully assigned a/batch-0 to n1", victimAt.Add(-time.Hour/2)),
		event("a", "e2", "Pod", "batch-0", "u-old", corev1.EventTypeWarning, infer.EvictReason, infer.EvictMessagePrefix+infer.Preempt, victimAt),
		event("a", "e3", "PodGroup", "batch", "", corev1.EventTypeNormal, infer.EvictReason, infer.Preempt, victimAt),
		event("a", "e4", "Pod", "urgent-0", "u-urgent", corev1.EventTypeWarning, infer.FailedScheduling,
			"Pod a/urgent-0 can possibly be assigned to n1, once resource is released and minAvailable is satisfied", victimAt.Add(time.Second)),
	)
	vc := vcfake.NewSimpleClientset([]runtime.Object{
		&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "batch"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "q"}},
		&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "urgent"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "q"}},
	}...)
	var out, errOut bytes.Buffer
	o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut},
		Factory: clitesting.Factory{NS: ns, Kube: kube, Volcano: vc}, now: func() time.Time { return now }}
	args(o)
	if err := o.Complete(nil); err != nil {
		return "", "", err
	}
	if err := o.Validate(); err != nil {
		return "", "", err
	}
	err := o.Run(context.Background())
	return out.String(), errOut.String(), err
}

func TestTable(t *testing.T) {
	out, errOut, err := run(t, "a", func(*Options) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TIME", "ACTION", "VICTIM", "GROUP", "QUEUE", "NODE", "FOR",
		"2026-11-29T05:50:00Z", "preempt", "batch-0", "batch", "q", "n1", "pod a/urgent-0 (group urgent, queue q, priority 100) [inferred]"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "EVIDENCE") || errOut != "" {
		t.Errorf("wide columns or notes without -o wide:\n%s\n%s", out, errOut)
	}
}

func TestJSON(t *testing.T) {
	out, _, err := run(t, "a", func(o *Options) { o.Output = "json" })
	if err != nil {
		t.Fatal(err)
	}
	var l List
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != "EvictionList" || len(l.Items) != 1 || l.Items[0].VictimUID != "u-old" || l.Items[0].For == nil || !l.Items[0].For.Inferred {
		t.Fatalf("%s", out)
	}
}

func TestFilters(t *testing.T) {
	for name, set := range map[string]func(*Options){
		"since":       func(o *Options) { o.Since = 5 * time.Minute },
		"other queue": func(o *Options) { o.Queue = "other" },
	} {
		out, errOut, err := run(t, "a", set)
		if err != nil || out != "" || !strings.Contains(errOut, "No evictions found in a namespace") {
			t.Errorf("%s: %v\n%s\n%s", name, err, out, errOut)
		}
	}
	out, _, err := run(t, "a", func(o *Options) { o.Queue = "q" })
	if err != nil || !strings.Contains(out, "batch-0") {
		t.Errorf("queue q: %v\n%s", err, out)
	}
}

func TestValidate(t *testing.T) {
	for name, set := range map[string]func(*Options){
		"negative since": func(o *Options) { o.Since = -time.Minute },
		"bad queue":      func(o *Options) { o.Queue = "A_B" },
		"output":         func(o *Options) { o.Output = "name" },
		"watch json":     func(o *Options) { o.Watch, o.Output = true, "json" },
	} {
		if _, _, err := run(t, "a", set); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
