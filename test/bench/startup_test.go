package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// BenchmarkStartup: what a command costs before it does anything, next to
// Volcano's vcctl (VC_BENCH_VCCTL_BIN, built from volcano-sh/volcano's
// cmd/cli): 'version' without a server, and 'queue list' against a small
// cluster (10 queues), each run VC_BENCH_STARTUP_RUNS times (21 by
// default), alternating the two binaries; median wall time and median peak
// RSS (see runOnce), each binary read from disk first (fromDisk). GNU
// time, which reads the peak RSS, adds its own start to both alike.
func BenchmarkStartup(b *testing.B) {
	runs := envInt("VC_BENCH_STARTUP_RUNS", 21)
	bin := buildBinary(b)
	vcctl := os.Getenv("VC_BENCH_VCCTL_BIN")
	cp := cptest.Start(b)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		if _, err := vc.SchedulingV1beta1().Queues().Create(context.Background(), &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("small-%02d", i)}, Spec: v1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	type cmdline struct {
		name string
		argv []string
	}
	cases := [][]cmdline{
		{{"kubectl-vc-version-client", []string{bin, "version", "--client"}}},
		{{"kubectl-vc-queue-list", []string{bin, "queue", "list", "--kubeconfig=" + kubeconfig}}},
	}
	if vcctl != "" {
		// vcctl reads the kubeconfig from --kubeconfig or $KUBECONFIG too.
		cases[0] = append(cases[0], cmdline{"vcctl-version", []string{vcctl, "version"}})
		cases[1] = append(cases[1], cmdline{"vcctl-queue-list", []string{vcctl, "queue", "list", "--kubeconfig=" + kubeconfig}})
	}
	for _, group := range cases {
		for _, c := range group {
			fromDisk(b, c.argv)
		}
		walls := make([][]float64, len(group))
		rss := make([][]float64, len(group))
		for range runs {
			for i, c := range group {
				w, r := runOnce(b, c.argv)
				walls[i] = append(walls[i], w)
				rss[i] = append(rss[i], r)
			}
		}
		for i, c := range group {
			b.Run(c.name, func(b *testing.B) {
				b.ReportMetric(median(walls[i]), "ms-median")
				b.ReportMetric(slices.Min(walls[i]), "ms-min")
				b.ReportMetric(median(rss[i]), "MiB-peak-RSS-median")
			})
		}
	}
}

// fromDisk drops argv's binary from the page cache and runs argv once, so
// that every binary is measured from the page cache a read from disk
// leaves, as after an install. The kernel maps a file's pages by the
// folios the page cache holds them in: the binary this benchmark has just
// built, written by the linker, showed more resident file pages than the
// same bytes read back, which the peak RSS measured (docs/benchmarks.md).
func fromDisk(b *testing.B, argv []string) {
	f, err := os.Open(argv[0])
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatalf("fadvise %s: %v", argv[0], err)
	}
	runOnce(b, argv)
}

// runOnce runs argv to the end, output discarded, and returns its wall
// time (ms) and peak RSS (MiB; 0 without GNU time).
func runOnce(b *testing.B, argv []string) (float64, float64) {
	cmd, peak := peakRSSCommand(b, argv)
	stderr := &limitedBuffer{}
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, stderr.b)
	}
	wall := time.Since(start)
	return float64(wall.Microseconds()) / 1000, peak()
}

// peakRSSCommand is the command for argv, and a function that returns its
// peak RSS in MiB once it has run (0 without GNU time).
//
// The peak RSS comes from GNU time (/usr/bin/time -f %M), which reports
// its own child's: the rusage of a process this benchmark starts itself
// counts the benchmark's memory too, since Linux records the resident set
// of the image a process replaces at exec (here the test binary's, ~90
// MiB) in its maxrss.
func peakRSSCommand(b *testing.B, argv []string) (*exec.Cmd, func() float64) {
	if _, err := os.Stat(gnuTime); err != nil {
		return exec.Command(argv[0], argv[1:]...), func() float64 { return 0 }
	}
	out := filepath.Join(b.TempDir(), "maxrss")
	cmd := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", out}, argv...)...)
	return cmd, func() float64 {
		data, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		kib, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		if err != nil {
			b.Fatalf("GNU time's maxrss %q: %v", data, err)
		}
		return kib / 1024
	}
}

const gnuTime = "/usr/bin/time"
