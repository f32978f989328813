package cli

import (
	"errors"
	"os/exec"
	"testing"
)

// TestStartedByKubectl: the display name follows how the binary was
// started; kubectl passes the PATH lookup's result as argv[0].
func TestStartedByKubectl(t *testing.T) {
	onPath := func(dir string, err error) func(string) (string, error) {
		return func(name string) (string, error) {
			if dir == "" {
				return "", exec.ErrNotFound
			}
			return dir + "/" + name, err
		}
	}
	cases := []struct {
		argv0    string
		lookPath func(string) (string, error)
		want     bool
	}{
		{"/usr/local/bin/kubectl-vc", onPath("/usr/local/bin", nil), true}, // kubectl vc
		{"bin/kubectl-vc", onPath("bin", exec.ErrDot), true},               // kubectl vc, PATH=bin:$PATH
		{"kubectl-vc", onPath("/usr/local/bin", nil), false},               // typed in a shell
		{"./bin/kubectl-vc", onPath("/usr/local/bin", nil), false},         // typed path
		{"/tmp/x/kubectl-vc", onPath("", nil), false},                      // not on PATH at all
		{"/usr/local/bin/kubectl-vc", onPath("/usr/local/bin", errors.New("x")), false},
		{"/usr/local/bin/kubectl_complete-vc", onPath("/usr/local/bin", nil), false},
		{"/usr/local/bin/vc", onPath("/usr/local/bin", nil), false},
	}
	for _, c := range cases {
		if got := StartedByKubectl(c.argv0, c.lookPath); got != c.want {
			t.Errorf("StartedByKubectl(%q) = %v, want %v", c.argv0, got, c.want)
		}
	}
}
