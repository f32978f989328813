package cli

import (
	"strings"
	"testing"
)

func TestPodGroupListDescribe(t *testing.T) {
	makePodGroups(t)
	r := mustVC(t, "pg", "list", "-n", "e2e-pg")
	if got := strings.Fields(strings.Split(r.stdout, "\n")[0]); strings.Join(got, " ") != "NAME PHASE MINMEMBER RUNNING QUEUE AGE" {
		t.Errorf("header: %q", got)
	}
	if !strings.Contains(r.stdout, "eval") || !strings.Contains(r.stdout, "train") {
		t.Errorf("list:\n%s", r.stdout)
	}
	r = mustVC(t, "podgroups", "get", "-A", "--queue", "q-pg", "--no-headers")
	if f := strings.Fields(r.stdout); len(f) != 7 || f[0] != "e2e-pg" || f[1] != "train" || f[2] != "Running" || f[3] != "2" || f[5] != "q-pg" {
		t.Errorf("-A --queue: %q", r.stdout)
	}
	r = mustVC(t, "podgroup", "list", "-n", "e2e-pg", "--phase", "Pending", "-o", "name")
	if strings.TrimSpace(r.stdout) != "podgroup.scheduling.volcano.sh/eval" {
		t.Errorf("--phase Pending -o name: %q", r.stdout)
	}
	r = mustVC(t, "podgroup", "describe", "train", "-n", "e2e-pg")
	for _, want := range []string{"Queue:", "q-pg", "Min Member:", "Priority Class:", "high", "Phase:", "Running",
		"Pods:", "train-0", "node-7", "Events:", "Scheduled", "all 2 members bound"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "train-0  Running  node-7") {
		t.Errorf("member pod line lacks phase and node:\n%s", r.stdout)
	}
}
