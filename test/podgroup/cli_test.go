package podgroup

import (
	"strings"
	"testing"
)

func TestPodGroupListDescribe(t *testing.T) {
	makePodGroups(t)
	r := mustVC(t, "pg", "list", "-n", "e2e-pg")
	if got := strings.Fields(strings.Split(r.Stdout, "\n")[0]); strings.Join(got, " ") != "NAME PHASE MINMEMBER RUNNING QUEUE AGE" {
		t.Errorf("header: %q", got)
	}
	if !strings.Contains(r.Stdout, "eval") || !strings.Contains(r.Stdout, "train") {
		t.Errorf("list:\n%s", r.Stdout)
	}
	r = mustVC(t, "podgroups", "get", "-A", "--queue", "q-pg", "--no-headers")
	if f := strings.Fields(r.Stdout); len(f) != 7 || f[0] != "e2e-pg" || f[1] != "train" || f[2] != "Running" || f[3] != "2" || f[5] != "q-pg" {
		t.Errorf("-A --queue: %q", r.Stdout)
	}
	r = mustVC(t, "podgroup", "list", "-n", "e2e-pg", "--phase", "Pending", "-o", "name")
	if strings.TrimSpace(r.Stdout) != "podgroup.scheduling.volcano.sh/eval" {
		t.Errorf("--phase Pending -o name: %q", r.Stdout)
	}
	r = mustVC(t, "podgroup", "describe", "train", "-n", "e2e-pg")
	for _, want := range []string{"Queue:", "q-pg", "Min Member:", "Priority Class:", "high", "Phase:", "Running",
		"Pods:", "train-0", "node-7", "Events:", "Scheduled", "all 2 members bound"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "train-0  Running  node-7") {
		t.Errorf("member pod line lacks phase and node:\n%s", r.Stdout)
	}
}
