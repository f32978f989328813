package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// An index entry is written as one line of text, fields separated by '|':
//
//	states, children, jobs: state|children|child
//	hierarchy:        parent|capability|deserved|guarantee|childCapability|childDeserved|childGuarantee
//
// with a resource list as "cpu=4,memory=16Gi" and the children's largest
// amounts as "cpu=6=child-a,memory=8Gi=child-b", each sorted by resource.
// None of '|', ',' and '=' can occur in a queue name (a DNS subdomain), a
// resource name (a qualified name) or a quantity, so the policies split a
// line with CEL's split() and nothing needs escaping. The API server
// converts the whole param object for each evaluation; a map of short
// strings costs a fraction of a map of objects (docs/admission.md).

const (
	lineSep = "|"
	listSep = ","
	pairSep = "="
)

// QueueIndexLines writes each entry of QueueIndexes as its line: per
// index, per queue name.
func QueueIndexLines(queues map[string]map[string]admissionv1alpha1.QueueIndexEntry) map[string]map[string]string {
	out := make(map[string]map[string]string, len(queues))
	for name, entries := range queues {
		m := make(map[string]string, len(entries))
		for q, e := range entries {
			m[q] = QueueIndexLine(name, e)
		}
		out[name] = m
	}
	return out
}

// QueueIndexLine writes one entry of the named index as its line.
func QueueIndexLine(index string, e admissionv1alpha1.QueueIndexEntry) string {
	if index == admissionv1alpha1.QueueIndexHierarchy {
		return strings.Join([]string{e.Parent, amountsLine(e.Capability), amountsLine(e.Deserved), amountsLine(e.Guarantee),
			boundsLine(e.ChildCapability), boundsLine(e.ChildDeserved), boundsLine(e.ChildGuarantee)}, lineSep)
	}
	children := ""
	if e.Children > 0 {
		children = strconv.Itoa(int(e.Children))
	}
	return strings.Join([]string{e.State, children, e.Child}, lineSep)
}

// ParseQueueIndexLine reads a line of the named index back (doctor and the
// tests read the indexes with it).
func ParseQueueIndexLine(index, line string) (admissionv1alpha1.QueueIndexEntry, error) {
	f := strings.Split(line, lineSep)
	var e admissionv1alpha1.QueueIndexEntry
	var err error
	if index == admissionv1alpha1.QueueIndexHierarchy {
		if len(f) != 7 {
			return e, fmt.Errorf("hierarchy entry %q: %d fields, want 7", line, len(f))
		}
		e.Parent = f[0]
		for i, dst := range []*map[string]string{&e.Capability, &e.Deserved, &e.Guarantee} {
			if *dst, err = parseAmounts(f[1+i]); err != nil {
				return e, fmt.Errorf("hierarchy entry %q: %w", line, err)
			}
		}
		for i, dst := range []*map[string]admissionv1alpha1.QueueIndexBound{&e.ChildCapability, &e.ChildDeserved, &e.ChildGuarantee} {
			if *dst, err = parseBounds(f[4+i]); err != nil {
				return e, fmt.Errorf("hierarchy entry %q: %w", line, err)
			}
		}
		return e, nil
	}
	if len(f) != 3 {
		return e, fmt.Errorf("%s entry %q: %d fields, want 3", index, line, len(f))
	}
	e.State, e.Child = f[0], f[2]
	if f[1] != "" {
		n, err := strconv.ParseInt(f[1], 10, 32)
		if err != nil || n < 1 {
			return e, fmt.Errorf("%s entry %q: children %q is not a positive count", index, line, f[1])
		}
		e.Children = int32(n)
	}
	return e, nil
}

// separated reports a name that a line could not hold: the Queue CRD does
// not check that its resource lists' keys are resource names, and a key
// holding a separator names no resource the scheduler counts, so it bounds
// nothing and is left out of the index.
func separated(name string) bool {
	return strings.ContainsAny(name, lineSep+listSep+pairSep+entrySep+nameSep)
}

func amountsLine(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for r, a := range m {
		if separated(r) || separated(a) {
			continue
		}
		parts = append(parts, r+pairSep+a)
	}
	sort.Strings(parts)
	return strings.Join(parts, listSep)
}

func boundsLine(m map[string]admissionv1alpha1.QueueIndexBound) string {
	parts := make([]string, 0, len(m))
	for r, b := range m {
		if separated(r) || separated(b.Amount) {
			continue
		}
		parts = append(parts, r+pairSep+b.Amount+pairSep+b.Child)
	}
	sort.Strings(parts)
	return strings.Join(parts, listSep)
}

func parseAmounts(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, listSep) {
		r, a, ok := strings.Cut(kv, pairSep)
		if !ok || r == "" || a == "" || strings.Contains(a, pairSep) {
			return nil, fmt.Errorf("amount %q is not resource=amount", kv)
		}
		out[r] = a
	}
	return out, nil
}

func parseBounds(s string) (map[string]admissionv1alpha1.QueueIndexBound, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]admissionv1alpha1.QueueIndexBound{}
	for _, kv := range strings.Split(s, listSep) {
		f := strings.Split(kv, pairSep)
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("bound %q is not resource=amount=child", kv)
		}
		out[f[0]] = admissionv1alpha1.QueueIndexBound{Amount: f[1], Child: f[2]}
	}
	return out, nil
}

// An index object holds its entries as one text, each entry "name:line"
// followed by ';', the whole preceded by ';' and sorted by name, so that a
// policy finds a queue's entry with indexOf(';' + name + ':'). Neither ':'
// nor ';' can occur in a queue name or a line.
const (
	entrySep = ";"
	nameSep  = ":"
)

// QueueIndexEntriesText is what each QueueIndex's spec.entries must hold
// for these queues, per index name.
func QueueIndexEntriesText(queues []*v1beta1.Queue) map[string]string {
	out := map[string]string{}
	for name, lines := range QueueIndexLines(QueueIndexes(queues)) {
		out[name] = QueueIndexText(lines)
	}
	return out
}

// QueueIndexText joins the lines of an index into its text; no entry is
// the empty text.
func QueueIndexText(lines map[string]string) string {
	if len(lines) == 0 {
		return ""
	}
	names := make([]string, 0, len(lines))
	for q := range lines {
		names = append(names, q)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(entrySep)
	for _, q := range names {
		b.WriteString(q)
		b.WriteString(nameSep)
		b.WriteString(lines[q])
		b.WriteString(entrySep)
	}
	return b.String()
}

// ParseQueueIndexText splits an index's text back into its lines.
func ParseQueueIndexText(text string) (map[string]string, error) {
	out := map[string]string{}
	if text == "" {
		return out, nil
	}
	if !strings.HasPrefix(text, entrySep) || !strings.HasSuffix(text, entrySep) {
		return nil, fmt.Errorf("index text does not start and end with %q", entrySep)
	}
	for _, e := range strings.Split(text[1:len(text)-1], entrySep) {
		q, line, ok := strings.Cut(e, nameSep)
		if !ok || q == "" {
			return nil, fmt.Errorf("index entry %q is not name:line", e)
		}
		if _, dup := out[q]; dup {
			return nil, fmt.Errorf("index names %s twice", q)
		}
		out[q] = line
	}
	return out, nil
}
