package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

func TestParseResources(t *testing.T) {
	l, err := parseResources("capability", "cpu=4, memory=8Gi,nvidia.com/gpu=2")
	if err != nil {
		t.Fatal(err)
	}
	if got := vcprinters.Resources(l); got != "cpu=4,memory=8Gi,nvidia.com/gpu=2" {
		t.Errorf("got %s", got)
	}
	for in, want := range map[string]string{
		"cpu=lots":      "cpu=lots is not a quantity",
		"cpu":           "NAME=QUANTITY",
		"=4":            "NAME=QUANTITY",
		"cpu=1,cpu=2":   "cpu is given twice",
		"memory=-1Gi":   "must not be negative",
		"bad name!=1":   "resource name",
		"cpu=1,,mem=1":  "NAME=QUANTITY",
		"cpu=1;mem=2Gi": "not a quantity",
		// Beyond what apimachinery parses safely: the first hung, the
		// second would wrap to 10.
		"cpu=1e-2000000000": "exponent must be between -1000 and 1000",
		"cpu=1e4294967297":  "exponent must be between -1000 and 1000",
		"cpu=9e+1001":       "exponent must be between -1000 and 1000",
		// Far longer than any real quantity; not echoed back.
		"cpu=1" + strings.Repeat("0", 100000):     "the quantity of cpu is 100001 characters long; at most 100 are accepted",
		"cpu=0." + strings.Repeat("0", 200) + "1": "the quantity of cpu is 203 characters long",
		// Within the bound as written, beyond it as stored.
		"cpu=100e1000": "would be stored as 1e1002: the exponent must be between -1000 and 1000",
		// apimachinery would send these as "1".
		"cpu=1000E":                  "cannot be stored as written (Kubernetes would store 1)",
		"cpu=1000000000000000000000": "cannot be stored as written (Kubernetes would store 1)",
	} {
		_, err := parseResources("capability", in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
	// The refusal of a very long value is a short line, not the value.
	if _, err := parseResources("capability", "cpu="+strings.Repeat("9", 5000)); err == nil || len(err.Error()) > 120 {
		t.Errorf("5000-digit value: got a %d-character error, want a short refusal", len(fmt.Sprint(err)))
	}
	// Exponents within the bound still parse.
	for in, want := range map[string]string{"cpu=5e3": "5k", "memory=1E": "1E", "cpu=25e-2": "250m", "cpu=1e-1000": "1n", "cpu=100E": "100E", "cpu=1e21": "1e21"} {
		l, err := parseResources("capability", in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if q := l[corev1.ResourceName(strings.Split(in, "=")[0])]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%q parsed as %s, want %s", in, q.String(), want)
		}
	}
	if l, err := parseResources("capability", "  "); err != nil || len(l) != 0 {
		t.Errorf("empty: %v %v", l, err)
	}
}

func TestCheckResources(t *testing.T) {
	spec := func(d, g string) *schedulingv1beta1.QueueSpec {
		return &schedulingv1beta1.QueueSpec{
			Deserved:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(d)},
			Guarantee: schedulingv1beta1.Guarantee{Resource: corev1.ResourceList{corev1.ResourceName(g[:strings.Index(g, "=")]): resource.MustParse(g[strings.Index(g, "=")+1:])}},
		}
	}
	if err := checkResources(spec("2", "cpu=2")); err != nil {
		t.Errorf("equal must pass: %v", err)
	}
	err := checkResources(spec("2", "cpu=2001m"))
	if err == nil || err.Error() != "--guarantee cpu=2001m exceeds --deserved cpu=2: deserved must be at least the guarantee" {
		t.Errorf("guarantee above deserved: %v", err)
	}
	// A resource without a deserved amount is not compared.
	if err := checkResources(spec("2", "memory=1Gi")); err != nil {
		t.Errorf("unrelated resource: %v", err)
	}
}

// replaceList must null the keys it drops, or a merge patch would keep them.
func TestReplaceList(t *testing.T) {
	old := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	b, _ := json.Marshal(replaceList(old, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}))
	if string(b) != `{"cpu":"8","memory":null}` {
		t.Errorf("got %s", b)
	}
	if replaceList(old, nil) != nil {
		t.Error("an empty list must remove the field")
	}
}

func TestValidateNames(t *testing.T) {
	validateNames := func(names []string) error { return util.ValidateNames("queue", names, validateName) }
	if err := validateNames([]string{"a", "b.c"}); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]string{{"A"}, {"a", "a"}, {""}, {"a_b"}} {
		if validateNames(bad) == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if validateNewName("b.c") == nil {
		t.Error("a new queue name must be a DNS-1123 label")
	}
}

// queueCounts must read podgroups with one list, whatever the number of
// queues, and not at all when every queue has a status.
func TestQueueCountsOneList(t *testing.T) {
	var objs []runtime.Object
	var queues []schedulingv1beta1.Queue
	for i := 0; i < 50; i++ {
		q := schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%d", i)}}
		queues = append(queues, q)
		objs = append(objs, &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg%d", i), Namespace: "ns"},
			Spec: schedulingv1beta1.PodGroupSpec{Queue: q.Name}, Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning}})
	}
	c := fake.NewSimpleClientset(objs...)
	got := queueCounts(context.Background(), c, queues, pageSizes{rows: 2, objects: 2})
	if got["q7"].Running != 1 || got["q7"].Total != 1 {
		t.Errorf("q7 counts: %+v", got["q7"])
	}
	if n := len(c.Actions()); n != 1 || c.Actions()[0].GetVerb() != "list" {
		t.Errorf("want one list, got %d actions: %v", n, c.Actions())
	}

	c.ClearActions()
	for i := range queues {
		queues[i].Status = schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateOpen, Pending: 2}
	}
	got = queueCounts(context.Background(), c, queues, countPages(nil, 0))
	if got["q3"].Pending != 2 || got["q3"].Running != 0 {
		t.Errorf("status counts not used: %+v", got["q3"])
	}
	if n := len(c.Actions()); n != 0 {
		t.Errorf("status present, yet %d requests", n)
	}
}

// The STATE column carries the hierarchy problem the controller reports.
func TestStateColumn(t *testing.T) {
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	if got := stateColumn(q); got != "Open" {
		t.Errorf("no state, no problem: %q", got)
	}
	q.Status.State = schedulingv1beta1.QueueStateClosed
	q.Annotations = map[string]string{rules.HierarchyProblemAnnotation: rules.HierarchyProblem(rules.ParentCycle, "a -> b -> a")}
	if got := stateColumn(q); got != "Closed,ParentCycle" {
		t.Errorf("with a cycle: %q", got)
	}
}
