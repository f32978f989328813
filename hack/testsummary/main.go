// Command testsummary reads the JSON logs 'make test' keeps (go test -json
// events, one file per run of go test, written by gotestsum) and says what
// failed: for each failed test, its run, package and name and the first lines
// of its failure; for a package that failed with no failed test (it did not
// build, it panicked, it timed out), the last lines it printed. It ends with
// one line of counts, and exits 1 when anything failed.
//
// It is the last thing 'make test' prints, so the tail of a failed CI run
// names the failure however many thousands of lines came before it.
//
//	go run ./hack/testsummary [-steps "verify release-check"] .test-logs
//
// -steps names steps of 'make test' that failed without a JSON log (make
// verify, say): they are listed and fail the summary too.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json's TestEvent).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events name the package here
	Test       string
	Elapsed    float64
	Output     string
}

// Limits on what the summary shows, so that it stays readable at the end
// of a long log: the full output is in the JSON files.
const (
	linesPerFailure = 8
	maxLineLength   = 300
	maxFailures     = 20
)

func main() {
	steps := flag.String("steps", "", "space-separated steps that failed without a JSON log")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: testsummary [-steps STEPS] DIR")
		os.Exit(2)
	}
	runs, err := readDir(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	s := summarize(runs)
	s.failedSteps = strings.Fields(*steps)
	s.write(os.Stdout)
	if !s.ok() {
		os.Exit(1)
	}
}

// run is one JSON log: its name (the file's, without .json) and events.
type run struct {
	name   string
	events []event
}

func readDir(dir string) ([]run, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no JSON test logs in %s", dir)
	}
	slices.Sort(files)
	var runs []run
	for _, f := range files {
		evs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run{name: strings.TrimSuffix(filepath.Base(f), ".json"), events: evs})
	}
	return runs, nil
}

func readFile(path string) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readEvents(f)
}

// readEvents decodes a JSON log line by line. A line that is not an event
// (go test can print around its JSON, e.g. when the go command itself
// fails) is kept as package-less output, so that it is not lost.
func readEvents(r io.Reader) ([]event, error) {
	var evs []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			evs = append(evs, event{Action: "output", Output: string(line) + "\n"})
			continue
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

// failure is one failed test, or a package that failed on its own.
type failure struct {
	run, pkg, test string
	elapsed        float64
	lines          []string
	unfinished     bool // started and never ended: the package died under it
}

type summary struct {
	passed, failed, skipped int
	failures                []failure
	failedSteps             []string
}

func (s summary) ok() bool {
	return len(s.failures) == 0 && len(s.failedSteps) == 0
}

type testKey struct{ pkg, test string }

func summarize(runs []run) summary {
	var s summary
	for _, r := range runs {
		s.add(r)
	}
	return s
}

func (s *summary) add(r run) {
	output := map[testKey][]string{}
	ended := map[testKey]string{}
	elapsed := map[testKey]float64{}
	var started []testKey
	pkgFailed := map[string]bool{}
	var pkgs []string
	for _, e := range r.events {
		pkg := e.Package
		if pkg == "" {
			// A build's events name the package as the go command builds
			// it, "p [p.test]": the package's own events name it "p".
			pkg, _, _ = strings.Cut(e.ImportPath, " [")
		}
		k := testKey{pkg, e.Test}
		switch e.Action {
		case "run":
			started = append(started, k)
		case "output", "build-output":
			output[k] = append(output[k], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					pkgFailed[pkg] = true
					pkgs = append(pkgs, pkg)
				}
				continue
			}
			ended[k], elapsed[k] = e.Action, e.Elapsed
		case "build-fail":
			pkgFailed[pkg] = true
			pkgs = append(pkgs, pkg)
		}
	}
	failedIn := map[string]bool{}
	for _, k := range started {
		switch ended[k] {
		case "pass":
			s.passed++
		case "skip":
			s.skipped++
		case "fail":
			s.failed++
			failedIn[k.pkg] = true
			if hasFailedSubtest(k, ended) {
				continue // its failed subtests say what failed
			}
			s.failures = append(s.failures, failure{run: r.name, pkg: k.pkg, test: k.test,
				elapsed: elapsed[k], lines: firstLines(output[k], linesPerFailure)})
		case "":
			// A test that never ended: its package panicked or timed out
			// while it ran. Counted as failed, with the package's own last
			// lines, which hold the panic or the timeout.
			s.failed++
			failedIn[k.pkg] = true
			if hasStartedSubtest(k, started, ended) {
				continue
			}
			lines := firstLines(output[k], linesPerFailure/2)
			lines = append(lines, lastLines(output[testKey{pkg: k.pkg}], linesPerFailure)...)
			s.failures = append(s.failures, failure{run: r.name, pkg: k.pkg, test: k.test, lines: lines, unfinished: true})
		}
	}
	// A package can fail with every test passed: it did not build, TestMain
	// failed, or a goroutine panicked after the last test.
	for _, pkg := range pkgs {
		if !pkgFailed[pkg] || failedIn[pkg] {
			continue
		}
		failedIn[pkg] = true
		s.failures = append(s.failures, failure{run: r.name, pkg: pkg,
			lines: lastLines(output[testKey{pkg: pkg}], linesPerFailure)})
	}
}

// hasFailedSubtest says whether a failed subtest of k is recorded.
func hasFailedSubtest(k testKey, ended map[testKey]string) bool {
	for o, a := range ended {
		if a == "fail" && o.pkg == k.pkg && strings.HasPrefix(o.test, k.test+"/") {
			return true
		}
	}
	return false
}

// hasStartedSubtest says whether a subtest of k started without ending
// (the innermost unfinished test is the one that names the hang).
func hasStartedSubtest(k testKey, started []testKey, ended map[testKey]string) bool {
	for _, o := range started {
		if o.pkg == k.pkg && strings.HasPrefix(o.test, k.test+"/") && ended[o] == "" {
			return true
		}
	}
	return false
}

// firstLines keeps a test's own words: go test's framing lines (=== RUN,
// --- FAIL and the like) say nothing the summary does not.
func firstLines(out []string, n int) []string {
	var kept []string
	for _, l := range splitLines(out) {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		kept = append(kept, clip(l))
		if len(kept) == n {
			break
		}
	}
	return kept
}

func lastLines(out []string, n int) []string {
	var kept []string
	for _, l := range splitLines(out) {
		t := strings.TrimSpace(l)
		if t == "" || t == "FAIL" || strings.HasPrefix(t, "=== ") {
			continue
		}
		kept = append(kept, clip(l))
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	return kept
}

// splitLines joins output events (a long line can come in several) and
// splits them at newlines.
func splitLines(out []string) []string {
	s := strings.TrimRight(strings.Join(out, ""), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func clip(l string) string {
	l = strings.TrimRight(l, "\r")
	if len(l) > maxLineLength {
		return l[:maxLineLength] + " …"
	}
	return l
}

func (s summary) write(w io.Writer) {
	if !s.ok() {
		fmt.Fprintf(w, "\n=== What failed (%d)\n", len(s.failures)+len(s.failedSteps))
		for i, f := range s.failures {
			if i == maxFailures {
				fmt.Fprintf(w, "… and %d more: see the JSON logs\n", len(s.failures)-maxFailures)
				break
			}
			switch {
			case f.test == "":
				fmt.Fprintf(w, "FAIL %s (package, in run %s):\n", f.pkg, f.run)
			case f.unfinished:
				fmt.Fprintf(w, "FAIL %s %s (did not finish, in run %s):\n", f.pkg, f.test, f.run)
			default:
				fmt.Fprintf(w, "FAIL %s %s (%.2fs, in run %s):\n", f.pkg, f.test, f.elapsed, f.run)
			}
			for _, l := range f.lines {
				fmt.Fprintf(w, "    %s\n", strings.TrimLeft(l, " \t"))
			}
		}
		for _, st := range s.failedSteps {
			fmt.Fprintf(w, "FAIL step %q (its output is above)\n", st)
		}
	}
	// One plain line of counts, the last line of the run; a failed step
	// counts as one failure, so that the line never says 0 failed when the
	// run did fail.
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", s.passed, s.failed+len(s.failedSteps), s.skipped)
}
