package jobflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
)

// TestCaptureDocs records the real output shown in docs/jobflow.md. It
// runs only when KUBECTL_VC_DOCS_OUT names a directory:
//
//	KUBECTL_VC_DOCS_OUT=/tmp/docs go test ./test/jobflow -run TestCaptureDocs
func TestCaptureDocs(t *testing.T) {
	out := os.Getenv("KUBECTL_VC_DOCS_OUT")
	if out == "" {
		t.Skip("set KUBECTL_VC_DOCS_OUT to capture documentation output")
	}
	flowCRDs(t)
	var b strings.Builder
	do := func(args ...string) {
		r := vc(t, args...)
		fmt.Fprintf(&b, "$ kubectl vc %s\n%s%s", strings.Join(args, " "), r.Stdout, r.Stderr)
		if r.Code != 0 {
			fmt.Fprintf(&b, "(exit %d)\n", r.Code)
		}
		b.WriteString("\n")
	}
	ns := namespace(t, "research")
	tf := writeFile(t, "templates.yaml", templateYAML("prep")+"---\n"+templateYAML("train")+"---\n"+templateYAML("eval")+"---\n"+templateYAML("report"))
	ff := writeFile(t, "pipeline.yaml", flowYAML("pipeline", "prep", "train<-prep", "eval<-train", "report<-train,prep"))
	do("jobtemplate", "create", "-n", ns, "-f", tf)
	do("jobflow", "create", "-n", ns, "-f", ff)
	do("jobflow", "create", "-n", ns, "-f", writeFile(t, "cycle.yaml", flowYAML("loop", "a<-b", "b<-a")))
	do("jobflow", "list", "-n", ns)

	// Play Volcano's jobflow controller: prep done, train running.
	jf, err := env.vc.FlowV1alpha1().JobFlows(ns).Get(context.Background(), "pipeline", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prep := playJob(t, jf, "prep", batchv1alpha1.JobCompleted)
	train := playJob(t, jf, "train", batchv1alpha1.JobRunning)
	playFlowStatus(t, ns, "pipeline", flowv1alpha1.Running, prep, train)

	do("jobflow", "list", "-n", ns, "-o", "wide")
	do("jobflow", "describe", "pipeline", "-n", ns)
	do("jobtemplate", "list", "-n", ns)
	do("job", "list", "-n", ns, "--flow", "pipeline")
	do("jobflow", "delete", "pipeline", "-n", ns, "--wait")

	// The files are in temporary directories: show their names alone.
	text := regexp.MustCompile(`/\S*/TestCaptureDocs\d+/\d+/`).ReplaceAllString(b.String(), "")
	if err := os.WriteFile(filepath.Join(out, "jobflow.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
