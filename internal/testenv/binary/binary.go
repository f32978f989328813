// Package binary runs the built kubectl-vc as a user runs it, in an
// environment that reads nothing of the machine's own configuration, and
// keeps what it printed: one run (Run), a package's binary with its
// kubeconfigs (CLI), the output of a command that keeps running (a
// --watch: LineReader, SyncBuffer), and the requests it makes
// (RecordingProxy).
package binary

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Result is what one run of the binary produced.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// Env is this process's environment without KUBECONFIG and with HOME set
// to home, so that no kubeconfig or cache of the machine is used.
func Env(home string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+home)
}

// Command prepares bin with --kubeconfig and the arguments, in Env(home).
func Command(bin, home, kubeconfig string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = Env(home)
	return cmd
}

// Run runs cmd to its end. A non-zero exit is a result; a binary that
// could not be started fails the test.
func Run(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errOut.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return r
}
