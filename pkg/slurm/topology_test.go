package slurm

import (
	"context"
	"errors"
	"testing"
)

// TestRESTTopologyNeedsV43: slurmrestd v0.0.42 ignores topology_str in a
// node update (HTTP 200, a warning): the client sends none there and says
// why, while v0.0.43 on gets the update. (The real slurmrestd of both
// Slurms is TestNodeTopologySlurm's, in test/nodeset.)
func TestRESTTopologyNeedsV43(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		version string
		ok      bool
	}{{"v0.0.42", false}, {"v0.0.40", false}, {"v0.0.43", true}, {"v0.0.45", true}} {
		f, srv := newFake(t, tc.version)
		c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Version(ctx); err != nil {
			t.Fatal(err)
		}
		asked := f.requests.Load()
		err = c.SetNodeTopology(ctx, "kvc-0", "default:s1")
		_, rerr := c.NodeTopology(ctx, "kvc-0")
		switch {
		case !tc.ok && (!errors.Is(err, ErrTopologyUnsupported) || !errors.Is(rerr, ErrTopologyUnsupported)):
			t.Errorf("%s: set %v, read %v; want ErrTopologyUnsupported", tc.version, err, rerr)
		case !tc.ok && f.requests.Load() != asked:
			t.Errorf("%s: %d requests sent for a topology it would ignore", tc.version, f.requests.Load()-asked)
		case tc.ok && (err != nil || rerr != nil || f.updates.Load() != 1):
			t.Errorf("%s: set %v, read %v, %d updates; want one update", tc.version, err, rerr, f.updates.Load())
		}
		if tc.ok {
			if err := c.SetNodeTopology(ctx, "ghost", ""); !errors.Is(err, ErrNodeNotFound) {
				t.Errorf("%s: topology of an unknown node: %v", tc.version, err)
			}
		}
	}
}
