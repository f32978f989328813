package cli

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCompletionAsKubectl: -n completes namespaces, --context the
// kubeconfig's contexts, -o the command's formats, enum flags their
// values whatever the case typed; 'queue close' offers only queues that can
// be closed and 'queue open' only those that are not Open.
func TestCompletionAsKubectl(t *testing.T) {
	deleteQueuesAfter(t, "conv-open", "conv-closed")
	mustVC(t, "queue", "create", "conv-open")
	mustVC(t, "queue", "create", "conv-closed")
	q, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), "conv-closed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status.State = schedulingv1beta1.QueueStateClosed
	if _, err := env.vc.SchedulingV1beta1().Queues().UpdateStatus(context.Background(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"queue", "close", "conv-"}, []string{"conv-open"}, []string{"conv-closed"}},
		{[]string{"queue", "close", "r"}, nil, []string{"root"}},
		{[]string{"queue", "open", "conv-"}, []string{"conv-closed"}, []string{"conv-open"}},
		{[]string{"queue", "list", "-n", "kube-"}, []string{"kube-system", "kube-public"}, []string{"default"}},
		{[]string{"queue", "list", "--context", ""}, []string{env.cp.Kubeconfig().CurrentContext}, nil},
		{[]string{"queue", "list", "-o", ""}, []string{"wide", "json", "yaml", "name", "custom-columns"}, nil},
		{[]string{"queue", "close", "x", "-o", "j"}, []string{"json", "jsonpath"}, []string{"yaml"}},
		{[]string{"doctor", "-o", ""}, []string{"json", "yaml"}, nil},
		{[]string{"pg", "list", "--phase", "pend"}, []string{"Pending"}, []string{"Running"}},
	} {
		r := mustVC(t, append([]string{"__complete"}, tc.args...)...)
		names, directive := completions(r.Stdout)
		for _, w := range tc.want {
			if !contains(names, w) {
				t.Errorf("%v: %q not offered: %v", tc.args, w, names)
			}
		}
		for _, n := range tc.not {
			if contains(names, n) {
				t.Errorf("%v: %q offered: %v", tc.args, n, names)
			}
		}
		if directive != ":4" { // no file names
			t.Errorf("%v: directive %s, want :4 (no files)", tc.args, directive)
		}
	}
}

// TestOneBehaviourForEveryKind: what kubectl accepts for every kind is
// accepted for every kind here too, and refusals say what to give.
func TestOneBehaviourForEveryKind(t *testing.T) {
	deleteQueuesAfter(t, "conv-one")
	mustVC(t, "queue", "create", "conv-one")
	// -A on a cluster-scoped kind is accepted and ignored, as kubectl does.
	if r := mustVC(t, "queue", "list", "-A", "-o", "name"); !strings.Contains(r.Stdout, "queue.scheduling.volcano.sh/conv-one\n") {
		t.Errorf("queue list -A:\n%s", r)
	}
	// Enum values in any case.
	mustVC(t, "pg", "list", "-A", "--phase", "pending")
	mustVC(t, "job", "list", "-A", "--phase", "RUNNING")
	mustVC(t, "queue", "create", "conv-two", "--state", "closed", "--dry-run=client")
	// delete -o name, as kubectl delete.
	if r := mustVC(t, "queue", "delete", "conv-one", "--dry-run=server", "-o", "name"); r.Stdout != "queue.scheduling.volcano.sh/conv-one\n" {
		t.Errorf("queue delete -o name:\n%s", r)
	}
	// -o name prints the object's name alone on either dry run, as
	// kubectl's -o name does.
	for _, args := range [][]string{
		{"queue", "create", "conv-dry"},
		{"queue", "close", "conv-one"},
		{"queue", "update", "conv-one", "--weight", "3"},
	} {
		client := mustVC(t, append(args, "--dry-run=client", "-o", "name")...).Stdout
		server := mustVC(t, append(args, "--dry-run=server", "-o", "name")...).Stdout
		// A Command's name is generated: the client shows the prefix the
		// server completes.
		if !strings.HasPrefix(server, strings.TrimSuffix(client, "\n")) || strings.Contains(client+server, "dry run") || strings.Count(client, "\n") != 1 ||
			!strings.HasPrefix(client, "queue.scheduling.volcano.sh/") && !strings.HasPrefix(client, "command.bus.volcano.sh/") {
			t.Errorf("%v -o name: client dry run %q, server dry run %q", args, client, server)
		}
	}
	// Missing and extra names: what to give, not cobra's arg counts.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nodeset", "describe"}, "name the NodeSet to describe, e.g. 'kubectl vc nodeset describe compute'"},
		{[]string{"nodeset", "scale", "a", "b", "--replicas", "1"}, "give one NodeSet name, got 2 (a b)"},
		{[]string{"queue", "describe"}, "name the queue to describe, e.g. 'kubectl vc queue describe team-a'"},
		{[]string{"nodeset", "cordon"}, "name the NodeSet pod(s) to cordon, e.g. 'kubectl vc nodeset cordon compute-0'"},
		{[]string{"queue", "clsoe", "a"}, `unknown command "clsoe" for "kubectl-vc queue"; did you mean "close"?`},
		{[]string{"podgroups", "lsit"}, `unknown command "lsit" for "kubectl-vc podgroup"; did you mean "list"?`},
		{[]string{"pg", "list", "--phase", "sleeping"}, `unknown --phase "sleeping": use one of Pending, Running`},
		// Not found names the namespace, in every namespaced kind.
		{[]string{"pg", "describe", "nope", "-n", "default"}, `podgroup "nope" not found in namespace "default"`},
		{[]string{"pg", "list", "nope", "-n", "default"}, `podgroup "nope" not found in namespace "default"`},
		{[]string{"nodeset", "describe", "nope", "-n", "default"}, `nodeset "nope" not found in namespace "default"`},
		{[]string{"nodeset", "history", "nope", "-n", "default"}, `nodeset "nope" not found in namespace "default"`},
		{[]string{"nodeset", "scale", "nope", "--replicas", "2", "-n", "default"}, `nodeset "nope" not found in namespace "default"`},
	} {
		r := vc(t, tc.args...)
		if r.Code == 0 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: want exit 1, no output, one line with %q; got\n%s", tc.args, tc.want, r)
		}
	}
}

// TestHelpListsGlobalFlagsOnce: a command's help lists its own flags and
// points to 'options', which lists the global ones, as kubectl's help does.
func TestHelpListsGlobalFlagsOnce(t *testing.T) {
	help := mustVC(t, "queue", "close", "--help").Stdout
	if strings.Contains(help, "--kubeconfig string") || strings.Contains(help, "Global Flags") ||
		!strings.Contains(help, "--wait") || !strings.Contains(help, `Use "kubectl-vc options" for the flags every command takes`) {
		t.Errorf("queue close --help:\n%s", help)
	}
	if opts := mustVC(t, "options").Stdout; !strings.Contains(opts, "--kubeconfig") || !strings.Contains(opts, "--context") || !strings.Contains(opts, "--namespace") {
		t.Errorf("options:\n%s", opts)
	}
}
