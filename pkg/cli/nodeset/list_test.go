package nodeset

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clienttesting "k8s.io/client-go/testing"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

// TestListWatchError: a watch the API server ends with an error is one
// line and an error (the root makes it a non-zero exit), after the rows.
func TestListWatchError(t *testing.T) {
	vc := vcfake.NewSimpleClientset()
	// The fake lists without a resourceVersion; a server's list has one,
	// and the watch starts from it.
	vc.PrependReactor("list", "nodesets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &slinkyv1beta1.NodeSetList{ListMeta: metav1.ListMeta{ResourceVersion: "1"},
			Items: []slinkyv1beta1.NodeSet{*listedNodeSet("a")}}, nil
	})
	w := watch.NewFakeWithChanSize(1, false)
	w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (2)"})
	vc.PrependWatchReactor("nodesets", func(clienttesting.Action) (bool, watch.Interface, error) { return true, w, nil })
	var out, errOut bytes.Buffer
	cmd := newListCmd(clitesting.Factory{NS: "slurm", Volcano: vc}, genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--watch", "--no-headers"})
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		t.Fatalf("no error; stdout:\n%s", out.String())
	}
	if msg := util.Message(err); msg != "watch ended: too old resource version: 1 (2)" {
		t.Errorf("error %q", msg)
	}
	if f := strings.Fields(out.String()); len(f) == 0 || f[0] != "a" {
		t.Errorf("the list was not printed first:\n%s", out.String())
	}
}

// TestListNegativeChunkSize: refused before any request.
func TestListNegativeChunkSize(t *testing.T) {
	vc := vcfake.NewSimpleClientset()
	var out, errOut bytes.Buffer
	cmd := newListCmd(clitesting.Factory{NS: "slurm", Volcano: vc}, genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--chunk-size=-1"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	if _, usage := err.(util.UsageError); !usage || !strings.Contains(util.Message(err), "--chunk-size") {
		t.Fatalf("error %v", err)
	}
	if n := len(vc.Actions()); n != 0 || out.Len() != 0 {
		t.Errorf("%d requests, stdout %q", n, out.String())
	}
}

func listedNodeSet(name string) *slinkyv1beta1.NodeSet {
	return &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "slurm"}}
}
