package cli

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// streamFixture makes, in namespace ns, podgroups stream-0 … stream-6:
// three pages of --chunk-size 3. It returns their names.
func streamFixture(t *testing.T, ns string) []string {
	t.Helper()
	var names []string
	for i := range 7 {
		names = append(names, createPodGroup(t, ns, fmt.Sprintf("stream-%d", i)))
	}
	return names
}

func createPodGroup(t *testing.T, ns, name string) string {
	t.Helper()
	_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// checkRows fails unless lines are one header then one row of each name,
// in order.
func checkRows(t *testing.T, lines, names []string) {
	t.Helper()
	var got []string
	for _, l := range lines {
		got = append(got, strings.Fields(l)[0])
	}
	if want := append([]string{"NAME"}, names...); !slices.Equal(got, want) {
		t.Errorf("rows %v, want one header and each podgroup once: %v\n%s", got, want, strings.Join(lines, "\n"))
	}
}

// TestListStreamsPages: 'podgroup list' prints each page's rows as the
// page arrives, before the next page is answered (the proxy holds every
// later page until the first page's rows are on stdout): over 200 000
// podgroups only the pages in flight are held. One header, each row once;
// a later page that fails leaves the rows printed and ends the command
// with its error in one line; --watch goes on from the list's
// resourceVersion.
func TestListStreamsPages(t *testing.T) {
	ns := namespace(t, "list-stream")
	names := streamFixture(t, ns)
	path := "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + ns + "/podgroups"

	t.Run("first page printed before the second is answered", func(t *testing.T) {
		proxy := newHoldProxy(t, path, false)
		cmd := command(proxy.kubeconf, "podgroup", "list", "-n", ns, "--chunk-size", "3")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Reaped too, when the test ends early (Wait a second time only
		// reports that it was called).
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var seen []string
		// The first page's last row; a bound on the wait, not a timed assertion.
		deadline := time.After(time.Minute)
		for !slices.ContainsFunc(seen, func(l string) bool { return strings.HasPrefix(l, names[2]+" ") }) {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended without the first page's rows: %q\nstderr: %s", seen, stderr.String())
				}
				seen = append(seen, l)
			case <-deadline:
				proxy.Release()
				t.Fatalf("the first page's rows were not printed while the second page was held; stdout so far: %q", seen)
			}
		}
		proxy.Release()
		for l := range lines {
			seen = append(seen, l)
		}
		if err := cmd.Wait(); err != nil || stderr.Len() > 0 {
			t.Fatalf("podgroup list: %v\nstderr: %s", err, stderr.String())
		}
		checkRows(t, seen, names)
		if n := proxy.held.Load(); n != 2 {
			t.Errorf("%d pages after the first, want 2 (7 podgroups in pages of 3)", n)
		}
	})

	t.Run("a later page fails", func(t *testing.T) {
		proxy := newHoldProxy(t, path, true)
		r := runCmd(t, command(proxy.kubeconf, "podgroup", "list", "-n", ns, "--chunk-size", "3"))
		errLines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code == 0 || len(errLines) != 1 || !strings.Contains(errLines[0], "continue parameter is too old") {
			t.Errorf("want a non-zero exit and the page's error in one line:\n%s", r)
		}
		checkRows(t, strings.Split(strings.TrimSpace(r.Stdout), "\n"), names[:3])
	})

	t.Run("watch from the paged list", func(t *testing.T) {
		out := env.cli.StartWatch(t, "podgroup", "list", "-n", ns, "--chunk-size", "3", "--watch")
		out.WaitFor(t, names[len(names)-1])
		added := createPodGroup(t, ns, "stream-watched")
		out.WaitFor(t, added)
		// Nothing listed comes again: the watch starts at the list's
		// resourceVersion, not before it.
		checkRows(t, out.Seen, append(slices.Clone(names), added))
	})
}
