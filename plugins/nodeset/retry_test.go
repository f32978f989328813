package nodeset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// A NodeSet failing many syncs in a row (a missing Secret, slurmrestd down)
// is still retried within the resync interval, and its first retries stay
// quick.
func TestRetryLimiterCapsAtResync(t *testing.T) {
	const resync = 30 * time.Second
	l := retryLimiter(resync)
	if d := l.When("ns/a"); d > 10*time.Millisecond {
		t.Fatalf("first retry after %v, want a few milliseconds", d)
	}
	var last time.Duration
	for i := 0; i < 40; i++ {
		last = l.When("ns/a")
		if last > resync {
			t.Fatalf("retry %d after %v, more than the resync %v", i+2, last, resync)
		}
	}
	if last != resync {
		t.Fatalf("after 41 failures the retry is %v, want the cap %v", last, resync)
	}
	// Another NodeSet has its own backoff; a success resets it.
	if d := l.When("ns/b"); d > 10*time.Millisecond {
		t.Fatalf("another NodeSet's first retry after %v", d)
	}
	l.Forget("ns/a")
	if d := l.When("ns/a"); d > 10*time.Millisecond {
		t.Fatalf("retry after a success after %v", d)
	}
}

// A failure the NodeSet's status already shows is not reported again: its
// retries would spend the object's event budget and hide the next failure.
func TestWarningOnlyWhenTheConditionChanges(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	set := &slinkyv1beta1.NodeSet{}
	s := &nodeSetSync{c: &Controller{recorder: rec}, set: set}
	warnings := func() []string {
		var out []string
		for {
			select {
			case e := <-rec.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}

	s.setFalseWithWarning(conditions.SlurmReachable, "SecretNotFound", "SlurmUnreachable", "no Secret")
	if got := warnings(); len(got) != 1 || got[0] != "Warning SlurmUnreachable no Secret" {
		t.Fatalf("first failure: %q", got)
	}
	set.Status.Conditions = s.mergedConditions()
	s.setFalseWithWarning(conditions.SlurmReachable, "SecretNotFound", "SlurmUnreachable", "no Secret")
	if got := warnings(); len(got) != 0 {
		t.Fatalf("the same failure again: %q", got)
	}
	// Another message, another reason, or False after True: each is said.
	s.setFalseWithWarning(conditions.SlurmReachable, "SecretNotFound", "SlurmUnreachable", "no Secret, still")
	s.setFalseWithWarning(conditions.SlurmReachable, "Unauthorized", "SlurmUnreachable", "no Secret")
	set.Status.Conditions = []metav1.Condition{{Type: conditions.SlurmReachable, Status: metav1.ConditionTrue, Reason: "Unauthorized", Message: "no Secret"}}
	s.setFalseWithWarning(conditions.SlurmReachable, "Unauthorized", "SlurmUnreachable", "no Secret")
	if got := warnings(); len(got) != 3 {
		t.Fatalf("three new failures, %d warnings: %q", len(got), got)
	}
	// Conditions are apart: another type's False is its own news.
	s.setFalseWithWarning(conditions.ServiceReady, "NameTaken", "ServiceNameTaken", "no Secret")
	if got := warnings(); len(got) != 1 {
		t.Fatalf("another condition: %q", got)
	}
}
