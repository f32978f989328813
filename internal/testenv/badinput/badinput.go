// Package badinput is the command line's convention for input it must
// reject, which every kind's suite checks its own cases against: the
// command exits non-zero, prints exactly one line on stderr that names the
// problem (and where possible the fix), no Go error chain or stack trace,
// nothing on stdout, and leaves the server unchanged.
package badinput

import (
	"context"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Case is one run the binary must refuse: a name, the kubeconfig, the
// arguments and a substring of the error line. An unnamed struct, so that
// the suites' tables list cases without field names.
type Case = struct {
	Name       string
	Kubeconfig string
	Args       []string
	Want       string
}

// Snapshot is every queue (with its resourceVersion), podgroup, Command,
// JobFlow and JobTemplate on the server, so a failed command can be shown to have changed nothing.
func Snapshot(t testing.TB, vc versioned.Interface) string {
	t.Helper()
	ctx := context.Background()
	var parts []string
	qs, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs.Items {
		parts = append(parts, "queue/"+q.Name+"@"+q.ResourceVersion)
	}
	cs, err := vc.BusV1alpha1().Commands(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		parts = append(parts, "command/"+c.Namespace+"/"+c.Name)
	}
	pgs, err := vc.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range pgs.Items {
		parts = append(parts, "podgroup/"+pg.Namespace+"/"+pg.Name+"@"+pg.ResourceVersion)
	}
	// Volcano's flow kinds, where the server serves them.
	if fs, err := vc.FlowV1alpha1().JobFlows(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err == nil {
		for _, f := range fs.Items {
			parts = append(parts, "jobflow/"+f.Namespace+"/"+f.Name+"@"+f.ResourceVersion)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if ts, err := vc.FlowV1alpha1().JobTemplates(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err == nil {
		for _, jt := range ts.Items {
			parts = append(parts, "jobtemplate/"+jt.Namespace+"/"+jt.Name+"@"+jt.ResourceVersion)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

// Run runs each case with cli, as a subtest, and checks the convention.
func Run(t *testing.T, cli *binary.CLI, vc versioned.Interface, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := Snapshot(t, vc)
			r := cli.Run(t, tc.Kubeconfig, tc.Args...)
			after := Snapshot(t, vc)
			if r.Code == 0 {
				t.Fatalf("%v succeeded:\n%s", tc.Args, r)
			}
			lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
				t.Errorf("want one 'error:' line on stderr:\n%s", r)
			}
			if !strings.Contains(r.Stderr, tc.Want) {
				t.Errorf("stderr does not mention %q:\n%s", tc.Want, r.Stderr)
			}
			for _, bad := range []string{"goroutine ", "panic", "dial tcp", "Get \"https", "&{", "%!"} {
				if strings.Contains(r.Stderr, bad) {
					t.Errorf("stderr has %q (a Go error chain or trace):\n%s", bad, r.Stderr)
				}
			}
			if strings.TrimSpace(r.Stdout) != "" {
				t.Errorf("stdout not empty:\n%s", r.Stdout)
			}
			if before != after {
				t.Errorf("server changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
