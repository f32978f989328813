package jobflow

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeleteFromFile: 'delete -f FILE' (vcctl's delete -f) deletes the
// objects the file holds; a file holding another kind, or names given
// beside it, deletes nothing.
func TestDeleteFromFile(t *testing.T) {
	flowCRDs(t)
	ns := namespace(t, "flow-delete-file")
	templates := writeFile(t, "ab.yaml", templateYAML("a")+"---\n"+templateYAML("b"))
	flow := writeFile(t, "f.yaml", flowYAML("pipe", "a", "b<-a"))
	mustVC(t, "jobtemplate", "create", "-n", ns, "-f", templates)
	mustVC(t, "jobflow", "create", "-n", ns, "-f", flow)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"jobflow", "delete", "-n", ns, "-f", templates}, `holds kind "JobTemplate" of apiVersion "flow.volcano.sh/v1alpha1", not a flow.volcano.sh/v1alpha1 JobFlow`},
		{[]string{"jobtemplate", "delete", "-n", ns, "-f", templates, "a"}, "give names or -f FILE, not both"},
		{[]string{"jobtemplate", "delete", "-n", "elsewhere", "-f", writeFile(t, "x.yaml", "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata:\n  name: a\n  namespace: "+ns+"\n")}, `is in namespace "` + ns + `", not "elsewhere" (-n)`},
	} {
		r := vc(t, tc.args...)
		if r.Code == 0 || r.Stdout != "" || !containsLine(r.Stderr, tc.want) {
			t.Errorf("%v: want exit 1, no output, one line with %q; got\n%s", tc.args, tc.want, r)
		}
	}
	if l, _ := env.vc.FlowV1alpha1().JobTemplates(ns).List(context.Background(), metav1.ListOptions{}); len(l.Items) != 2 {
		t.Fatalf("a refused delete -f deleted templates: %d left", len(l.Items))
	}

	if r := mustVC(t, "jobflow", "delete", "-n", ns, "-f", flow, "--wait"); r.Stdout != "jobflow.flow.volcano.sh/pipe deleted\n" {
		t.Errorf("jobflow delete -f:\n%s", r)
	}
	if r := mustVC(t, "jobtemplate", "delete", "-n", ns, "--file", templates, "-o", "name"); r.Stdout != "jobtemplate.flow.volcano.sh/a\njobtemplate.flow.volcano.sh/b\n" {
		t.Errorf("jobtemplate delete --file:\n%s", r)
	}
	if l, _ := env.vc.FlowV1alpha1().JobTemplates(ns).List(context.Background(), metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d templates left after delete -f", len(l.Items))
	}
}

// containsLine reports whether stderr is one line holding want.
func containsLine(stderr, want string) bool {
	return strings.Count(stderr, "\n") == 1 && strings.Contains(stderr, want)
}

// TestDescribeOutput: vcctl's 'describe -o yaml|json' prints the object
// itself; another -o is refused before any request.
func TestDescribeOutput(t *testing.T) {
	flowCRDs(t)
	ns := namespace(t, "flow-describe-o")
	mustVC(t, "jobtemplate", "create", "-n", ns, "-f", writeFile(t, "a.yaml", templateYAML("a")))
	mustVC(t, "jobflow", "create", "-n", ns, "-f", writeFile(t, "f.yaml", flowYAML("pipe", "a")))
	if r := mustVC(t, "jobflow", "describe", "pipe", "-n", ns, "-o", "yaml"); !strings.Contains(r.Stdout, "kind: JobFlow\n") || !strings.Contains(r.Stdout, "name: pipe\n") {
		t.Errorf("jobflow describe -o yaml:\n%s", r)
	}
	if r := mustVC(t, "jobtemplate", "describe", "-N", "a", "-n", ns, "-o", "json"); !strings.Contains(r.Stdout, `"kind": "JobTemplate"`) {
		t.Errorf("jobtemplate describe -o json:\n%s", r)
	}
	if r := vc(t, "jobflow", "describe", "pipe", "-n", ns, "-o", "wide"); r.Code == 0 || !containsLine(r.Stderr, `unknown output format "wide": use one of json, yaml`) {
		t.Errorf("jobflow describe -o wide:\n%s", r)
	}
}
