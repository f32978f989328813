package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goTestJSON runs go test -json on a scratch module holding the given
// files, and returns what it printed: the real events the summary reads.
func goTestJSON(t *testing.T, files map[string]string, args ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module scratch\n\ngo 1.22\n"
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", append(append([]string{"test", "-json", "-count=1"}, args...), "./...")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return out
}

// summaryOf summarizes a go test -json output and returns the summary and
// what it prints.
func summaryOf(t *testing.T, out []byte) (summary, string) {
	t.Helper()
	evs, err := readEvents(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	s := summarize([]run{{name: "suites", events: evs}})
	var b strings.Builder
	s.write(&b)
	t.Logf("summary:\n%s", b.String())
	return s, b.String()
}

const suite = `package a

import "testing"

func TestPasses(t *testing.T) {}

func TestSkips(t *testing.T) { t.Skip("not here") }

func TestFails(t *testing.T) {
	t.Log("a line before")
	t.Fatal("timed out waiting for queue q Closing")
}

func TestParent(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Error("want 2, got 3") })
	t.Log("the parent's own log")
}
`

func TestSummaryNamesEachFailedTest(t *testing.T) {
	out := goTestJSON(t, map[string]string{"a/a_test.go": suite})
	s, got := summaryOf(t, out)
	for _, want := range []string{
		"FAIL scratch/a TestFails (",
		"a_test.go:10: a line before",
		"a_test.go:11: timed out waiting for queue q Closing",
		"FAIL scratch/a TestParent/bad (",
		"want 2, got 3",
		// TestPasses, TestParent/ok; TestFails, TestParent, TestParent/bad.
		"tests: 2 passed, 3 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	// The parent failed only through its subtest: naming it again would
	// list one failure twice.
	if strings.Contains(got, "TestParent (") {
		t.Error("the summary names TestParent, whose failure is its subtest's")
	}
	if !strings.HasSuffix(got, "tests: 2 passed, 3 failed, 1 skipped\n") {
		t.Error("the counts are not the last line")
	}
	if s.ok() {
		t.Error("a summary with failures is ok")
	}
}

func TestSummaryOfPackagesThatDieOrDoNotBuild(t *testing.T) {
	out := goTestJSON(t, map[string]string{
		"panics/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestPanics(t *testing.T) { var m map[string]int; m[\"x\"] = 1 }\n",
		"broken/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { undefined() }\n",
		"fine/f_test.go":   "package f\n\nimport \"testing\"\n\nfunc TestFine(t *testing.T) {}\n",
	})
	s, got := summaryOf(t, out)
	for _, want := range []string{
		"FAIL scratch/panics TestPanics",
		"assignment to entry in nil map",
		"FAIL scratch/broken (package",
		"undefined: undefined",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	if strings.Contains(got, "scratch/fine") {
		t.Error("the summary names a package that passed")
	}
	if s.ok() {
		t.Error("a run with a panic and a build failure is ok")
	}
}

func TestSummaryAllPassed(t *testing.T) {
	out := goTestJSON(t, map[string]string{"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"})
	s, got := summaryOf(t, out)
	if got != "tests: 1 passed, 0 failed, 0 skipped\n" || !s.ok() {
		t.Fatalf("summary of a passing run: %q (ok %t)", got, s.ok())
	}
	s.failedSteps = []string{"verify"}
	var b strings.Builder
	s.write(&b)
	if got := b.String(); !strings.Contains(got, `FAIL step "verify"`) || !strings.HasSuffix(got, "tests: 1 passed, 1 failed, 0 skipped\n") || s.ok() {
		t.Fatalf("summary with a failed step: %q (ok %t)", got, s.ok())
	}
}

// TestSummaryOfATimeout: a package killed by go test's -timeout names the
// test that was running and the panic that says so.
func TestSummaryOfATimeout(t *testing.T) {
	out := goTestJSON(t, map[string]string{"slow/s_test.go": "package s\n\nimport (\"testing\"; \"time\")\n\nfunc TestSlow(t *testing.T) { t.Run(\"inner\", func(t *testing.T) { time.Sleep(time.Minute) }) }\n"}, "-timeout=2s")
	s, got := summaryOf(t, out)
	if !strings.Contains(got, "TestSlow/inner") || !strings.Contains(got, "test timed out after 2s") {
		t.Errorf("the summary of a timeout does not name the running test and the timeout")
	}
	if s.ok() {
		t.Error("a timed-out run is ok")
	}
}
