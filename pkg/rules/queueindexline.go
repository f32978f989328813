package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// An index entry is written as one line of text, "state|children|child".
// '|' cannot occur in a queue name (a DNS subdomain), a state or a count,
// so the policies split a line with CEL's split() and nothing needs
// escaping. The API server converts the whole param object for each
// evaluation; one string costs a fraction of a map of objects
// (docs/admission.md).
const lineSep = "|"

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

// An index object holds its entries as one text, each entry "name:line"
// followed by ';', the whole preceded by ';' and sorted by name, so that a
// policy finds a queue's entry with split(';' + name + ':', 2). Neither ':'
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
