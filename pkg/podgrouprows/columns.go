// Package podgrouprows reads what counting podgroups needs (each
// podgroup's queue and phase) from server-side Tables of the PodGroup CRD's
// printer columns instead of whole objects.
//
// Why: a Table row holds a handful of cells where a podgroup is a whole
// object that the API server encodes and the client decodes: read as
// Tables, BenchmarkScale's 10x fixture of podgroups takes a fraction of an
// informer's time (docs/benchmarks.md, reads pass). Volcano's PodGroup CRD and ours both declare the columns:
// STATUS (.status.phase) and QUEUE (.spec.queue).
package podgrouprows

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Accept asks the API server for a Table, as 'kubectl get' does.
const Accept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// ErrNoColumns: the PodGroup CRD of this cluster lacks a printer column
// that counting needs, so its Tables cannot be counted.
var ErrNoColumns = errors.New("the podgroup CRD has no Name, QUEUE and STATUS printer columns")

// Columns are the positions of the cells a count reads in a PodGroup Table.
type Columns struct {
	name, queue, phase int
}

// FindColumns finds the Name, QUEUE and STATUS columns among a Table's
// column definitions (names compared without case: 'kubectl get' shows them
// upper-case whatever the CRD says).
func FindColumns(defs []metav1.TableColumnDefinition) (Columns, error) {
	c := Columns{name: -1, queue: -1, phase: -1}
	for i, d := range defs {
		switch strings.ToUpper(d.Name) {
		case "NAME":
			if c.name < 0 {
				c.name = i
			}
		case "QUEUE":
			c.queue = i
		case "STATUS":
			c.phase = i
		}
	}
	if c.name < 0 || c.queue < 0 || c.phase < 0 {
		return Columns{}, ErrNoColumns
	}
	return c, nil
}

// cells reads a podgroup's name, queue and phase from a Table row. A field
// the object lacks is a null cell: a podgroup naming no queue, or without a
// phase yet, gives "".
func (c Columns) cells(row metav1.TableRow) (name, queue, phase string, err error) {
	if len(row.Cells) <= max(c.name, c.queue, c.phase) {
		return "", "", "", fmt.Errorf("podgroup table: a row has %d cells", len(row.Cells))
	}
	name, _ = row.Cells[c.name].(string)
	queue, _ = row.Cells[c.queue].(string)
	phase, _ = row.Cells[c.phase].(string)
	return name, queue, phase, nil
}
