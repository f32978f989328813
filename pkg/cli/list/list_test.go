package list

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
)

// TestWatchedRowsLineUp: rows printed by --watch after the list keep the
// list's column widths, as kubectl's do, so that they line up with the
// header.
func TestWatchedRowsLineUp(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := NewOptions(clitesting.Factory{}, streams)
	o.Watch = true
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	o.Printer = p
	table := func(rows ...[]any) func() runtime.Object {
		return func() runtime.Object {
			return vcprinters.Table([]vcprinters.Column{{Name: "NAME"}, {Name: "STATE"}, {Name: "AGE"}}, rows)
		}
	}
	if err := o.Print(nil, 2, "", table([]any{"a-rather-long-queue-name", "Open", "5m"}, []any{"b", "Open", "1d"})); err != nil {
		t.Fatal(err)
	}
	if err := o.Print(nil, 1, "", table([]any{"c", "Closing", "2s"})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[3], "c ") {
		t.Fatalf("output:\n%s", out.String())
	}
	col := strings.Index(lines[0], "STATE")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row does not line up with the header's STATE column (%d):\n%s", col, out.String())
		}
	}
}
