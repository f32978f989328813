package slurm

import (
	"strings"
	"testing"
)

// TestExpandHostlistRefusesHugeLists: lists that state more names, or more
// bytes, than the bounds are refused, whatever their numbers (one that
// overflows an int included), before they cost memory.
func TestExpandHostlistRefusesHugeLists(t *testing.T) {
	// Parallel: it waits on timers or CPU, and Go starts parallel tests
	// only after the serial ones, which measure the heap, have ended.
	t.Parallel()
	long := strings.Repeat("x", 1<<10)
	for _, bad := range []string{
		"n[0-9223372036854775807]",
		"n[9223372036854775806-9223372036854775807],m[0-9223372036854775807]",
		"a[0-1023]b[0-1023]c[0-1]",
		long + "[0-99999]",
		"n[" + strings.Repeat("0", 70<<20) + "1]",
	} {
		got, err := ExpandHostlist(bad)
		if err == nil {
			t.Errorf("ExpandHostlist(%.40q…) = %d names, want an error", bad, len(got))
			continue
		}
		if !strings.Contains(err.Error(), "more than") && !strings.Contains(err.Error(), "bad range") {
			t.Errorf("ExpandHostlist(%.40q…): %v, want the bound named", bad, err)
		}
	}
	// At the bound, not past it.
	got, err := ExpandHostlist("a[0-127]b[0-1023]")
	if err != nil || len(got) != maxHostlist {
		t.Fatalf("ExpandHostlist of exactly %d names: %d, %v", maxHostlist, len(got), err)
	}
	if got[0] != "a0b0" || got[len(got)-1] != "a127b1023" {
		t.Fatalf("first and last names: %q, %q", got[0], got[len(got)-1])
	}
}

// FuzzExpandHostlist: any list either expands within the bounds or is
// refused with an error; it never panics.
func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"kvc-[0-1,3],login1", "rack[1-2]-n[01-02]", "n[08-10]", "n[0-9223372036854775807]",
		"a[0-1023]b[0-1023]c[0-1]", "n[1-", "n]1", "n[[1]]", "web-[0-1].example[2]", "x[-1]", "y[2-1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := ExpandHostlist(list)
		if err != nil {
			if got != nil {
				t.Fatalf("an error with %d names", len(got))
			}
			return
		}
		if len(got) > maxHostlist {
			t.Fatalf("%d names, more than %d", len(got), maxHostlist)
		}
		bytes := 0
		for _, n := range got {
			bytes += len(n)
			if n == "" || strings.ContainsAny(n, "[],") {
				t.Fatalf("name %q from %q", n, list)
			}
		}
		if bytes > maxHostlistBytes {
			t.Fatalf("%d bytes of names, more than %d", bytes, maxHostlistBytes)
		}
	})
}
