package cli

import (
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
)

// TestHelpNormalized checks that every command's Long and Example went
// through kubectl's normalizers (templates.LongDesc and templates.Examples),
// which leave normalized text unchanged, and that none is missing.
func TestHelpNormalized(t *testing.T) {
	root := NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), Commands()...)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if c.Long == "" {
			t.Errorf("%s: no Long", path)
		}
		if c.Example == "" && c.HasParent() {
			t.Errorf("%s: no Example", path)
		}
		if got := templates.LongDesc(c.Long); got != c.Long {
			t.Errorf("%s: Long is not normalized, want templates.LongDesc:\n%q\nnormalized:\n%q", path, c.Long, got)
		}
		if got := templates.Examples(c.Example); got != c.Example {
			t.Errorf("%s: Example is not normalized, want templates.Examples:\n%q\nnormalized:\n%q", path, c.Example, got)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
