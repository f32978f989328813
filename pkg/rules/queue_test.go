package rules

import (
	"testing"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

func TestQueueOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", keys.DefaultQueue},
		{"research", "research"},
		{keys.DefaultQueue, keys.DefaultQueue},
	} {
		if got := QueueOf(c.in); got != c.want {
			t.Errorf("QueueOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
