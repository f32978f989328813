package serve

import (
	"context"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
)

// serve's soft memory limit (GOMEMLIMIT) follows its container's memory
// limit. Go's collector otherwise knows nothing of the limit: at GOGC=50
// the heap may grow to 1.5 times the live heap before a collection, and a
// cluster whose caches grew past two thirds of the limit would get serve
// OOM-killed by the kernel where collecting sooner would have kept it
// running. With the limit, the collector works harder as the heap nears
// it instead.
const (
	// memoryLimitEnv holds the container's memory limit in bytes, set by
	// the Deployment from the Downward API (resourceFieldRef
	// limits.memory): read first, since it does not depend on the cgroup
	// version the node runs.
	memoryLimitEnv = "MEMORY_LIMIT"
	// cgroupMemoryMax is the limit of serve's cgroup (v2) where the
	// variable is not set: "max" when there is none.
	cgroupMemoryMax = "/sys/fs/cgroup/memory.max"
	// memoryLimitFraction of the container's limit is the Go runtime's:
	// the rest is for what the runtime does not count (the binary's pages
	// are file-backed and reclaimable, but thread stacks, cgo-free as serve
	// is, and fragmentation are not).
	memoryLimitFraction = 0.9
)

// setMemoryLimit sets the Go runtime's soft memory limit from the
// container's, unless GOMEMLIMIT is set (the runtime then applied it), and
// says so in ctx's log.
func setMemoryLimit(ctx context.Context) {
	logger := klog.FromContext(ctx)
	limit, from := memoryLimit(logger, os.LookupEnv, os.ReadFile)
	if limit <= 0 {
		return
	}
	debug.SetMemoryLimit(limit)
	logger.Info("Go memory limit set from the container's", "limitBytes", limit, "from", from, "fraction", memoryLimitFraction)
}

// memoryLimit returns the soft memory limit for a container limit found
// in the environment or the cgroup, and where it was found; 0 when
// GOMEMLIMIT is set or no limit is found.
func memoryLimit(logger klog.Logger, lookup func(string) (string, bool), read func(string) ([]byte, error)) (int64, string) {
	if _, set := lookup("GOMEMLIMIT"); set {
		return 0, ""
	}
	if v, ok := lookup(memoryLimitEnv); ok && v != "" {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
			return int64(float64(n) * memoryLimitFraction), memoryLimitEnv
		}
		logger.Info("ignoring "+memoryLimitEnv+": not a number of bytes", "value", v)
	}
	b, err := read(cgroupMemoryMax)
	if err != nil {
		return 0, ""
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 { // "max": no limit
		return 0, ""
	}
	return int64(float64(n) * memoryLimitFraction), cgroupMemoryMax
}
