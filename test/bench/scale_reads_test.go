package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
)

// readPasses is the "reads" pass of BenchmarkScale: the ways a client can
// read every podgroup of the fixture, each timed on its own, with the CPU
// the API server and this process spent on it. A cold start cannot be
// correct before its podgroups are read, so the fastest way here is the
// floor of that half of a cold start; it tells whether serve (an
// informer, as every controller reads) leaves time on the table.
//
//   - informer: one shared informer synced (client-go lists with
//     WatchListClient: the initial events of a watch, from the watch cache);
//   - informer-by-namespace: one informer per namespace, in parallel;
//   - list-cache: one LIST with resourceVersion=0 (served from the cache);
//   - list-cache-by-namespace: one such LIST per namespace, in parallel;
//   - list-paged: LIST pages of 500, as kubectl reads;
//   - table-paged: the same pages as server-side Tables without the
//     objects (includeObject=None): the CRD's printer columns alone, which
//     hold a podgroup's phase and queue (Volcano's CRD and ours);
//   - table-cache: one such Table with resourceVersion=0;
//   - table-cache-metadata: the same with each row's metadata
//     (includeObject=Metadata: namespace, name, resourceVersion, but also
//     labels, annotations, owners and managed fields);
//   - table-cache-by-namespace: one table-cache per namespace, in parallel
//     (a row without its object has no namespace: asking per namespace is
//     how a reader learns it).
//
// VC_BENCH_READS (a regular expression) picks the ways by name.
func readPasses(b *testing.B, f *scaleFixture, apiserverPid int, record func(string, float64, float64)) {
	ctx := context.Background()
	nsList := make([]string, scaleNamespaces)
	for i := range nsList {
		nsList[i] = fmt.Sprintf("team-%02d", i)
	}
	vc := f.vc.(*versioned.Clientset)
	informer := func(ns string) int {
		opts := []vcinformers.SharedInformerOption{}
		if ns != "" {
			opts = append(opts, vcinformers.WithNamespace(ns))
		}
		fac := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, opts...)
		inf := fac.Scheduling().V1beta1().PodGroups().Informer()
		stop := make(chan struct{})
		fac.Start(stop)
		cache.WaitForCacheSync(stop, inf.HasSynced)
		n := len(inf.GetStore().ListKeys())
		close(stop)
		fac.Shutdown()
		return n
	}
	list := func(ns string, opts metav1.ListOptions) int {
		n := 0
		for {
			l, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			n += len(l.Items)
			if l.Continue == "" {
				return n
			}
			opts.Continue = l.Continue
		}
	}
	tableIn := func(ns string, include metav1.IncludeObjectPolicy, opts metav1.ListOptions) int {
		n := 0
		for {
			req := vc.SchedulingV1beta1().RESTClient().Get().Namespace(ns).Resource("podgroups").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
				Param("includeObject", string(include)).VersionedParams(&opts, metav1.ParameterCodec)
			raw, err := req.DoRaw(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var t metav1.Table
			if err := json.Unmarshal(raw, &t); err != nil {
				b.Fatal(err)
			}
			n += len(t.Rows)
			if t.Continue == "" {
				return n
			}
			opts.Continue = t.Continue
		}
	}
	table := func(opts metav1.ListOptions) int { return tableIn("", metav1.IncludeNone, opts) }
	byNamespace := func(read func(ns string) int) int {
		var mu sync.Mutex
		total := 0
		var wg sync.WaitGroup
		for _, ns := range nsList {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := read(ns)
				mu.Lock()
				total += n
				mu.Unlock()
			}()
		}
		wg.Wait()
		return total
	}
	ways := []struct {
		name string
		read func() int
	}{
		{"informer", func() int { return informer("") }},
		{"informer-by-namespace", func() int { return byNamespace(informer) }},
		{"list-cache", func() int { return list("", metav1.ListOptions{ResourceVersion: "0"}) }},
		{"list-cache-by-namespace", func() int {
			return byNamespace(func(ns string) int { return list(ns, metav1.ListOptions{ResourceVersion: "0"}) })
		}},
		{"list-paged", func() int { return list("", metav1.ListOptions{Limit: 500}) }},
		{"table-paged", func() int { return table(metav1.ListOptions{Limit: 500}) }},
		{"table-cache", func() int { return table(metav1.ListOptions{ResourceVersion: "0"}) }},
		{"table-cache-metadata", func() int {
			return tableIn("", metav1.IncludeMetadata, metav1.ListOptions{ResourceVersion: "0"})
		}},
		{"table-cache-by-namespace", func() int {
			return byNamespace(func(ns string) int {
				return tableIn(ns, metav1.IncludeNone, metav1.ListOptions{ResourceVersion: "0"})
			})
		}},
	}
	if re := os.Getenv("VC_BENCH_READS"); re != "" {
		pick := regexp.MustCompile(re)
		ways = slices.DeleteFunc(ways, func(w struct {
			name string
			read func() int
		}) bool {
			return !pick.MatchString(w.name)
		})
	}
	want := int(20000 * f.k)
	for r := range benchRounds() {
		for _, w := range ways {
			b.Run(fmt.Sprintf("reads/%s", w.name), func(b *testing.B) {
				apiBefore, selfBefore := procCPU(apiserverPid), selfCPU()
				start := time.Now()
				n := w.read()
				elapsed := time.Since(start)
				api, self := procCPU(apiserverPid)-apiBefore, selfCPU()-selfBefore
				if n != want {
					b.Fatalf("%s read %d podgroups, want %d", w.name, n, want)
				}
				b.ReportMetric(elapsed.Seconds(), "s-read")
				b.ReportMetric(api.Seconds(), "s-apiserver-cpu")
				b.ReportMetric(self.Seconds(), "s-client-cpu")
				b.Logf("%gx round %d: %s read %d podgroups in %v (API server CPU %v, client CPU %v)",
					f.k, r, w.name, n, elapsed.Round(time.Millisecond), api.Round(time.Millisecond), self.Round(time.Millisecond))
				record("reads/"+w.name+" s-read", f.k, elapsed.Seconds())
			})
		}
	}
}

// procCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it
	// start after its closing parenthesis.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
