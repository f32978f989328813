package queue

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// tablewriterTable is printTable as it was written with
// github.com/olekukonko/tablewriter, which the binary no longer links.
func tablewriterTable(header []string, rows [][]string) (string, error) {
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithPadding(tw.Padding{Right: "  ", Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithEastAsian(tw.Off),
	)
	if header != nil {
		table.Header(header)
	}
	for _, r := range rows {
		if err := table.Append(r); err != nil {
			return "", err
		}
	}
	if err := table.Render(); err != nil {
		return "", err
	}
	var b strings.Builder
	for line := range strings.Lines(buf.String()) {
		b.WriteString(strings.TrimRight(line, " \n"))
		b.WriteString("\n")
	}
	return b.String(), nil
}

// TestPrintTableAsTablewriter: printTable (text/tabwriter) prints what
// tablewriter configured as kubectl's tables printed, for the cells 'queue
// tree' and 'queue top' print: names, numbers, quantities, percentages,
// empty cells and the tree's glyphs with their leading spaces, with and
// without a header.
func TestPrintTableAsTablewriter(t *testing.T) {
	words := []string{"", "0", "12", "Open", "Closed", "team-a", "team-a-batch-nightly", "cpu", "nvidia.com/gpu",
		"1500m", "64Gi", "37%", "<none>", "-", "lost (parent \"gone\" missing)", "loop-a (in a parent cycle)"}
	glyphs := []string{"", "├── ", "└── ", "│   ├── ", "    └── ", "│   │   └── "}
	rnd := rand.New(rand.NewPCG(1, 2))
	tables := []struct {
		header []string
		rows   [][]string
	}{
		{[]string{"QUEUE", "STATE"}, nil},
		{nil, nil},
		{nil, [][]string{{"a", "b"}}},
	}
	for range 300 {
		cols := 1 + rnd.IntN(8)
		var header []string
		if rnd.IntN(4) > 0 {
			for c := range cols {
				header = append(header, strings.ToUpper(words[1+rnd.IntN(len(words)-1)])+string(rune('A'+c)))
			}
		}
		rows := make([][]string, rnd.IntN(12))
		for i := range rows {
			rows[i] = make([]string, cols)
			for c := range cols {
				rows[i][c] = words[rnd.IntN(len(words))]
			}
			rows[i][0] = glyphs[rnd.IntN(len(glyphs))] + rows[i][0]
		}
		tables = append(tables, struct {
			header []string
			rows   [][]string
		}{header, rows})
	}
	for _, tc := range tables {
		want, err := tablewriterTable(tc.header, tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := printTable(&got, tc.header, tc.rows); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Fatalf("header %q rows %q: printTable\n%s\ntablewriter\n%s", tc.header, tc.rows, got.String(), want)
		}
	}
}
