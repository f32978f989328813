package slurm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxHostlist and maxHostlistBytes bound how many names one hostlist may
// expand to, and their length in all, so that a malformed or hostile range
// ("n[0-9223372036854775807]", or a long prefix repeated a million times)
// is refused before it costs memory: what an expansion allocates never
// passes them, whatever numbers the list states. A list names nodes of one
// cluster, so it is held to the nodes an answer may list (maxNodes) and 64
// bytes a name (a hostname is at most 63 characters): the million names
// allowed before took a large share of serve's 256 MiB budget (test/hostile;
// docs/security.md, the bounds table).
const (
	maxHostlist      = maxNodes
	maxHostlistBytes = maxNodes * 64
)

// errHostlistTooLarge is wrapped by the errors of lists past the budget.
var errHostlistTooLarge = errors.New("too many names")

// maxDigits is the widest number a range may give, zero padding included.
const maxDigits = 20

// budget is what an expansion may still produce.
type budget struct{ names, bytes int }

// take charges n names of the given total length, or says the list is too
// large.
func (b *budget) take(n, bytes int) error {
	if n > b.names || bytes > b.bytes {
		return fmt.Errorf("%w: more than %d names or %d bytes", errHostlistTooLarge, maxHostlist, maxHostlistBytes)
	}
	b.names -= n
	b.bytes -= bytes
	return nil
}

// ExpandHostlist expands a Slurm hostlist such as "kvc-[0-1,3],login1" or
// "rack[1-2]-n[01-02]" into node names, in order. Zero-padded ranges keep
// their width ("n[08-10]" is n08, n09, n10). Slurm's REST API reports the
// nodes of a job this way and has no filter by node, so a client expands
// them itself.
func ExpandHostlist(list string) ([]string, error) {
	return expandHostlist(list, &budget{names: maxHostlist, bytes: maxHostlistBytes})
}

// expandHostlist expands list, charging its names to left: one budget
// may be shared by many lists.
func expandHostlist(list string, left *budget) ([]string, error) {
	var out []string
	for _, part := range splitTop(list) {
		if part == "" {
			continue
		}
		names, err := expandOne(part, left)
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", list, err)
		}
		out = append(out, names...)
	}
	return out, nil
}

// splitTop splits at the commas outside brackets.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// expandOne expands one host expression, bracket by bracket from the left,
// charging every name it makes to left. The names of the brackets to the
// right (tails) are made once, then charged as part of each name.
func expandOne(expr string, left *budget) ([]string, error) {
	open := strings.IndexByte(expr, '[')
	if open < 0 {
		if strings.ContainsRune(expr, ']') {
			return nil, fmt.Errorf("unbalanced ']' in %q", expr)
		}
		if err := left.take(1, len(expr)); err != nil {
			return nil, err
		}
		return []string{expr}, nil
	}
	closing := strings.IndexByte(expr[open:], ']')
	if closing < 0 {
		return nil, fmt.Errorf("unbalanced '[' in %q", expr)
	}
	closing += open
	prefix, ranges, rest := expr[:open], expr[open+1:closing], expr[closing+1:]
	if strings.ContainsRune(ranges, '[') {
		return nil, fmt.Errorf("nested '[' in %q", expr)
	}
	if strings.ContainsRune(prefix, ']') {
		return nil, fmt.Errorf("unbalanced ']' in %q", expr)
	}
	tails, err := expandOne(rest, left)
	if err != nil {
		return nil, err
	}
	tailBytes := 0
	for _, t := range tails {
		tailBytes += len(t)
	}
	// The tails were bounded while they were made; from here on they count
	// as part of each name made with them.
	left.names += len(tails)
	left.bytes += tailBytes
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, width, err := parseRange(r)
		if err != nil {
			return nil, err
		}
		// Charged one number at a time: hi-lo+1 may not even fit an int.
		for n := lo; ; n++ {
			num := fmt.Sprintf("%0*d", width, n)
			if err := left.take(len(tails), len(tails)*(len(prefix)+len(num))+tailBytes); err != nil {
				return nil, err
			}
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
			if n == hi {
				break
			}
		}
	}
	return out, nil
}

// parseRange reads "3" or "08-10"; width is the zero-padded width to keep.
func parseRange(r string) (lo, hi, width int, err error) {
	r = strings.TrimSpace(r)
	a, b, isRange := strings.Cut(r, "-")
	// Wider than any int, zero-padded or not, is no node number.
	if len(a) > maxDigits || len(b) > maxDigits {
		return 0, 0, 0, fmt.Errorf("bad range %q", r)
	}
	if lo, err = strconv.Atoi(a); err != nil || lo < 0 {
		return 0, 0, 0, fmt.Errorf("bad range %q", r)
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(b); err != nil || hi < lo {
			return 0, 0, 0, fmt.Errorf("bad range %q", r)
		}
	}
	if len(a) > 1 && a[0] == '0' {
		width = len(a)
	}
	return lo, hi, width, nil
}
