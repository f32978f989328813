package nodeset

import (
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// TestMessagesBounded (issue 58): a condition's and an event's message
// is cut to maxMessage bytes, at a character's start, saying how much it
// left out, so that the NodeSet's status write (32 768 characters at most
// per message in the CRD) is accepted whatever Slurm said.
func TestMessagesBounded(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	set := &slinkyv1beta1.NodeSet{}
	s := &nodeSetSync{c: &Controller{recorder: boundedRecorder{rec}}, set: set}
	long := strings.Repeat("é", 100_000) // 200 000 bytes
	s.setFalseWithWarning(conditions.SlurmReachable, "RequestFailed", "SlurmUnreachable", long)
	c := meta.FindStatusCondition(s.mergedConditions(), conditions.SlurmReachable)
	if c == nil {
		t.Fatal("no condition")
	}
	if len(c.Message) > maxMessage || !utf8.ValidString(c.Message) || !strings.HasSuffix(c.Message, "more bytes)") {
		t.Errorf("condition message: %d bytes, valid UTF-8 %v, ends %q", len(c.Message), utf8.ValidString(c.Message), c.Message[len(c.Message)-30:])
	}
	ev := <-rec.Events
	if len(ev) > maxMessage+64 {
		t.Errorf("event: %d bytes", len(ev))
	}
	s.c.recorder.Eventf(set, "Warning", "X", "%s", long)
	if ev := <-rec.Events; len(ev) > maxMessage+64 {
		t.Errorf("event through Eventf: %d bytes", len(ev))
	}
	if got := boundMessage("short"); got != "short" {
		t.Errorf("a short message changed: %q", got)
	}
}

// fakeEvents is the fake recorder a test controller's events go to,
// behind the bounding one Initialize wraps it in.
func fakeEvents(c *Controller) *record.FakeRecorder {
	if b, ok := c.recorder.(boundedRecorder); ok {
		return b.EventRecorder.(*record.FakeRecorder)
	}
	return c.recorder.(*record.FakeRecorder)
}
