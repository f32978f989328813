package slurm

import (
	"strings"
	"testing"
)

// FuzzSinfoJSON: sinfo --json's answer, as every Slurm since 22.05 prints
// it (state a string with flags apart, or a list), whatever the bytes:
// no panic; each node kept under its own name; a base state always,
// lower case, and flags upper case, with DRAIN read from either form.
func FuzzSinfoJSON(f *testing.F) {
	for _, seed := range []string{
		`{"nodes":[{"name":"kvc-0","state":"idle","state_flags":["DRAIN"],"reason":"r"}]}`,
		`{"nodes":[{"name":"kvc-1","state":["ALLOCATED","DRAIN"],"reason":{"reason":"x"}},{"name":"kvc-2","state":["MIXED"]}]}`,
		`{"nodes":[{"name":"a","state":[1,null,{"x":[]}],"reason":7}],"meta":{"plugin":{}}}`,
		`{"nodes":[{"name":"a","state":""},{"name":"a","state":[]}]}`,
		`{"nodes":null}`,
		`{"nodes":[{"state":"DOWN","state_flags":["not_responding"]}]}`,
		`[]`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := decodeSinfo(data)
		if err != nil {
			return
		}
		for name, s := range nodes {
			if s.Name != name {
				t.Fatalf("node %q kept as %q", s.Name, name)
			}
			if s.Base == "" || s.Base != strings.ToLower(s.Base) {
				t.Fatalf("node %q: base state %q", name, s.Base)
			}
			for _, fl := range s.Flags {
				if fl != strings.ToUpper(fl) {
					t.Fatalf("node %q: flag %q", name, fl)
				}
			}
			if s.Drained() && s.Busy() {
				t.Fatalf("node %q both drained and busy: %+v", name, s)
			}
		}
	})
}
