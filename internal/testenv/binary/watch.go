package binary

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// LineReader hands out the complete lines a running command prints.
type LineReader struct {
	lines chan string
	mu    sync.Mutex
	// Seen is every line handed out so far.
	Seen []string
}

// ReadLines reads r line by line until it ends.
func ReadLines(r io.Reader) *LineReader {
	lr := &LineReader{lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		close(lr.lines)
	}()
	return lr
}

// WaitFor returns the fields of the first line whose first field is
// name, failing the test if none comes within a minute (a bound on the
// poll, not a timed assertion).
func (lr *LineReader) WaitFor(t testing.TB, name string) []string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lr.lines:
			if !ok {
				t.Fatalf("output ended without a row for %s; it was:\n%s", name, strings.Join(lr.Seen, "\n"))
			}
			lr.Seen = append(lr.Seen, l)
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return f
			}
		case <-deadline:
			t.Fatalf("no row for %s; output so far:\n%s", name, strings.Join(lr.Seen, "\n"))
		}
	}
}

// StartWatch starts the binary as the admin and reads its output; the
// process is killed when the test ends (its stderr is logged if the test
// failed).
func (c *CLI) StartWatch(t testing.TB, args ...string) *LineReader {
	t.Helper()
	cmd := c.Command(c.Admin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stderr of %v:\n%s", args, stderr.String())
		}
	})
	return ReadLines(stdout)
}
