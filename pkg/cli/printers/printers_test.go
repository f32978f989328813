package printers

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func queues() *schedulingv1beta1.QueueList {
	return &schedulingv1beta1.QueueList{Items: []schedulingv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: schedulingv1beta1.QueueSpec{Weight: 2}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Status: schedulingv1beta1.QueueStatus{State: "Closed"}},
	}}
}

func TestCustomColumns(t *testing.T) {
	p, err := NewCustomColumns("NAME:.metadata.name,W:.spec.weight,STATE:{.status.state}", false)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Print(p, queues(), &b); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"NAME W STATE", "a 2 <none>", "b <none> Closed"}
	for i := range want {
		if i >= len(got) || strings.Join(strings.Fields(got[i]), " ") != want[i] {
			t.Fatalf("got:\n%s", b.String())
		}
	}
	for _, bad := range []string{"", "NAME", ":.x", "N:{.a["} {
		if _, err := NewCustomColumns(bad, false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPrintFlags(t *testing.T) {
	for format, want := range map[string]string{
		"name":                               "queue.scheduling.volcano.sh/a\nqueue.scheduling.volcano.sh/b\n",
		"jsonpath={.items[*].metadata.name}": "a b",
		"go-template={{range .items}}{{.kind}} {{end}}": "Queue Queue ",
	} {
		f := NewPrintFlags()
		*f.OutputFormat = format
		p, err := f.ToPrinter()
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var b bytes.Buffer
		if err := Print(p, queues(), &b); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if b.String() != want {
			t.Errorf("%s: got %q, want %q", format, b.String(), want)
		}
	}
	f := NewPrintFlags()
	*f.OutputFormat = "xml"
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), `unknown output format "xml"`) {
		t.Errorf("xml: %v", err)
	}
}

func TestTableWide(t *testing.T) {
	tbl := Table([]Column{{Name: "NAME"}, {Name: "EXTRA", Wide: true}}, [][]any{{"a", "x"}})
	for _, wide := range []bool{false, true} {
		f := NewPrintFlags()
		if wide {
			*f.OutputFormat = "wide"
		}
		p, _ := f.ToPrinter()
		var b bytes.Buffer
		if err := p.PrintObj(tbl.DeepCopy(), &b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "EXTRA") != wide {
			t.Errorf("wide=%v:\n%s", wide, b.String())
		}
	}
}
