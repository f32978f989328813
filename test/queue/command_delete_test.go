package queue

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
)

// TestCommandDelete: a stuck Command can be deleted with the plugin, as
// doctor says to: by name (all looked up before any delete), every one for
// a queue across namespaces (--all --queue -A), every one for a Volcano Job
// (--all --job); bad input is refused before any request, and --all that
// finds nothing says so.
func TestCommandDelete(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	ensureNamespace(t, kube, "cd-research")
	a := createQueue(t, vc, "cd-a", "root")
	b := createQueue(t, vc, "cd-b", "root")
	a1 := command(t, vc, a, busv1alpha1.OpenQueueAction)
	a2 := command(t, vc, a, busv1alpha1.CloseQueueAction)
	b1 := command(t, vc, b, busv1alpha1.CloseQueueAction)
	jobRef := metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "train", UID: "0b1c"}
	j1, err := vc.BusV1alpha1().Commands("cd-research").Create(ctx, &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "train-abortjob-"}, Action: busv1alpha1.AbortJobAction, TargetObject: &jobRef,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(c *busv1alpha1.Command) bool {
		_, err := vc.BusV1alpha1().Commands(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		return err == nil
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"command", "delete"}, "name the Command(s) to delete"},
		{[]string{"command", "delete", "--queue", "cd-a"}, "--queue and --job pick Commands for --all"},
		{[]string{"command", "delete", a1.Name, "--all"}, "give Command names or --all, not both"},
		{[]string{"command", "delete", "--all", "--queue", "cd-a", "--job", "train"}, "give --queue or --job, not both"},
		{[]string{"command", "delete", a1.Name, b1.Name, "nope", "-n", "default"}, `Command "nope" not found in namespace default: nothing was deleted`},
	} {
		stdout, stderr, ok := run(t, kubeconfig, tc.args...)
		failsWith(t, stdout, stderr, ok, []string{tc.want})
	}
	if !exists(a1) || !exists(b1) {
		t.Fatal("refused deletes deleted Commands")
	}

	out := cli(t, "command", "delete", "--all", "--queue", "cd-a", "-A", "--wait")
	if want := "command.bus.volcano.sh/" + a1.Name + " deleted\ncommand.bus.volcano.sh/" + a2.Name + " deleted\n"; out != want {
		t.Errorf("delete --all --queue:\n%s\nwant\n%s", out, want)
	}
	if exists(a1) || exists(a2) || !exists(b1) || !exists(j1) {
		t.Errorf("--all --queue cd-a deleted the wrong Commands")
	}

	out = cli(t, "command", "delete", "--all", "--job", "train", "-n", "cd-research", "-o", "name")
	if out != "command.bus.volcano.sh/"+j1.Name+"\n" || exists(j1) {
		t.Errorf("delete --all --job: %q", out)
	}

	stdout, stderr, ok := run(t, kubeconfig, "command", "delete", "--all", "--queue", "cd-a", "-A")
	if !ok || stdout != "" || strings.TrimSpace(stderr) != "No pending Commands for queue cd-a found." {
		t.Errorf("--all finding nothing: ok %v stdout %q stderr %q", ok, stdout, stderr)
	}

	out = cli(t, "command", "delete", b1.Name, "-n", "default", "--dry-run=server")
	if !strings.Contains(out, b1.Name+" deleted (server dry run)") || !exists(b1) {
		t.Errorf("dry run: %q", out)
	}
	cli(t, "command", "delete", b1.Name, "-n", "default")
	if exists(b1) {
		t.Error("delete by name left the Command")
	}
}
