package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHostlist bounds how many names one hostlist may expand to, so that a
// malformed or hostile range ("n[0-999999999]") cannot exhaust memory.
const maxHostlist = 1 << 20

// ExpandHostlist expands a Slurm hostlist such as "kvc-[0-1,3],login1" or
// "rack[1-2]-n[01-02]" into node names, in order. Zero-padded ranges keep
// their width ("n[08-10]" is n08, n09, n10). Slurm's REST API reports the
// nodes of a job this way and has no filter by node, so a client expands
// them itself.
func ExpandHostlist(list string) ([]string, error) {
	var out []string
	for _, part := range splitTop(list) {
		if part == "" {
			continue
		}
		names, err := expandOne(part, len(out))
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

// expandOne expands one host expression, bracket by bracket from the left.
func expandOne(expr string, have int) ([]string, error) {
	open := strings.IndexByte(expr, '[')
	if open < 0 {
		if strings.ContainsRune(expr, ']') {
			return nil, fmt.Errorf("unbalanced ']' in %q", expr)
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
	tails, err := expandOne(rest, have)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, width, err := parseRange(r)
		if err != nil {
			return nil, err
		}
		if (hi-lo+1)*len(tails)+len(out)+have > maxHostlist {
			return nil, fmt.Errorf("more than %d names", maxHostlist)
		}
		for n := lo; n <= hi; n++ {
			num := fmt.Sprintf("%0*d", width, n)
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
		}
	}
	return out, nil
}

// parseRange reads "3" or "08-10"; width is the zero-padded width to keep.
func parseRange(r string) (lo, hi, width int, err error) {
	r = strings.TrimSpace(r)
	a, b, isRange := strings.Cut(r, "-")
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
