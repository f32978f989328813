package command

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

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func run(vc *vcfake.Clientset, args ...string) (stdout string, err error) {
	var out, errOut bytes.Buffer
	cmd := newListCmd(clitesting.Factory{NS: "ns", Volcano: vc}, genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestListWatchError: a watch the API server ends with an error is one
// line and an error (the root makes it a non-zero exit), after the rows.
func TestListWatchError(t *testing.T) {
	vc := vcfake.NewSimpleClientset()
	// The fake lists without a resourceVersion; a server's list has one,
	// and the watch starts from it.
	vc.PrependReactor("list", "commands", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &busv1alpha1.CommandList{ListMeta: metav1.ListMeta{ResourceVersion: "1"},
			Items: []busv1alpha1.Command{{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}, Action: "OpenQueue"}}}, nil
	})
	w := watch.NewFakeWithChanSize(1, false)
	w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (2)"})
	vc.PrependWatchReactor("commands", func(clienttesting.Action) (bool, watch.Interface, error) { return true, w, nil })
	out, err := run(vc, "--watch", "--no-headers")
	if err == nil {
		t.Fatalf("no error; stdout:\n%s", out)
	}
	if msg := util.Message(err); msg != "watch ended: too old resource version: 1 (2)" {
		t.Errorf("error %q", msg)
	}
	if f := strings.Fields(out); len(f) < 2 || f[0] != "c1" || f[1] != "OpenQueue" {
		t.Errorf("the list was not printed first:\n%s", out)
	}
}

// TestListNegativeChunkSize: refused before any request.
func TestListNegativeChunkSize(t *testing.T) {
	vc := vcfake.NewSimpleClientset()
	out, err := run(vc, "--chunk-size", "-1")
	if _, usage := err.(util.UsageError); !usage || !strings.Contains(util.Message(err), "--chunk-size") {
		t.Fatalf("error %v", err)
	}
	if n := len(vc.Actions()); n != 0 || out != "" {
		t.Errorf("%d requests, stdout %q", n, out)
	}
}
