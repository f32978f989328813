package nodesetconditions

import (
	"fmt"
	"strings"
)

// The markers around the part of docs/nodeset.md made from the table.
const (
	BeginMarker = "<!-- BEGIN generated from pkg/rules/nodesetconditions by 'make docs': edit the table there -->"
	EndMarker   = "<!-- END generated from pkg/rules/nodesetconditions -->"
)

// Markdown is the table as docs/nodeset.md lists it, markers included: a
// section per condition (what it says, which step of the sync owns it) and
// a row per reason, True ones first. A fix's namespace and name read
// <namespace> and <name>.
func Markdown() string {
	var b strings.Builder
	b.WriteString(BeginMarker + "\n")
	for _, c := range Table {
		fmt.Fprintf(&b, "\n### %s\n\nTrue when %s. Written by the sync's step: %s.\n\n", c.Type, c.Says, c.Owner)
		b.WriteString("| status | reason | means | what to do |\n|---|---|---|---|\n")
		for _, r := range c.True {
			fmt.Fprintf(&b, "| True | `%s` | %s | nothing |\n", r.Name, cell(r.Means))
		}
		for _, r := range c.False {
			fix := r.Fix
			if strings.Contains(fix, "%[") {
				fix = fmt.Sprintf(fix, "<namespace>", "<name>")
			}
			// A fix is plain text (doctor prints it): its <words> are no HTML.
			fix = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(fix)
			fmt.Fprintf(&b, "| False | `%s` | %s | %s |\n", r.Name, cell(r.Means), cell(fix))
		}
	}
	b.WriteString("\n" + EndMarker + "\n")
	return b.String()
}

// cell keeps a text inside its table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ReplaceIn returns doc with the part between the markers (included) made
// anew from the table; an error when doc lacks the markers.
func ReplaceIn(doc string) (string, error) {
	begin := strings.Index(doc, BeginMarker)
	end := strings.Index(doc, EndMarker)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("no %q ... %q in the document", BeginMarker, EndMarker)
	}
	return doc[:begin] + Markdown() + strings.TrimPrefix(doc[end+len(EndMarker):], "\n"), nil
}
