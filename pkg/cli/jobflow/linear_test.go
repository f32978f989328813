package jobflow

import (
	"fmt"
	"strings"
	"testing"
)

// drawn is the bytes Draw and the step table make of a flow.
func drawn(steps ...string) (int, []string) {
	s := Steps(Input{Flow: flow(steps...)})
	lines := append(Draw(s), stepRows(s)...)
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n, lines
}

// TestDrawLinear (issue 58): a chain twice as long draws about twice the
// bytes, not four times: levels past maxIndent are drawn at its
// indentation, marked with their level; a step waiting on many steps
// names maxListed of them and counts the rest.
func TestDrawLinear(t *testing.T) {
	chain := func(n int) []string {
		steps := []string{"s0"}
		for i := 1; i < n; i++ {
			steps = append(steps, fmt.Sprintf("s%d<-s%d", i, i-1))
		}
		return steps
	}
	small, _ := drawn(chain(2000)...)
	large, lines := drawn(chain(4000)...)
	if large > small*5/2 {
		t.Errorf("a chain of 2000 steps draws %d bytes, of 4000 %d: not linear", small, large)
	}
	last := lines[3999]
	if !strings.Contains(last, "s3999 [level 3999]") || strings.Index(last, "s3999") > 3*maxIndent+8 {
		t.Errorf("the last step of the chain: %q", last)
	}
	// One step after 1000 others: its lists are bounded.
	steps := []string{}
	var deps []string
	for i := range 1000 {
		steps = append(steps, fmt.Sprintf("d%d", i))
		deps = append(deps, fmt.Sprintf("d%d", i))
	}
	steps = append(steps, "last<-"+strings.Join(deps, ","))
	_, lines = drawn(steps...)
	for _, l := range lines {
		if len(l) > 400 {
			t.Errorf("a line of %d bytes: %.200s…", len(l), l)
		}
	}
	if !strings.Contains(strings.Join(lines, "\n"), "… and 995 more") {
		t.Errorf("the long lists do not count what they leave out")
	}
}
