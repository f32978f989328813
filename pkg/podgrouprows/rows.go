package podgrouprows

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Request asks rc (the scheduling group's REST client) for a Table of the
// podgroups in namespace ns ("" for all) with include of each row's object,
// limit rows (0: all) from continue token cont, at resourceVersion rv.
func Request(rc rest.Interface, ns string, include metav1.IncludeObjectPolicy, limit int64, cont, rv string) *rest.Request {
	req := rc.Get().Namespace(ns).Resource("podgroups").SetHeader("Accept", Accept).
		Param("includeObject", string(include))
	if limit > 0 {
		req = req.Param("limit", strconv.FormatInt(limit, 10))
	}
	if cont != "" {
		req = req.Param("continue", cont)
	}
	if rv != "" {
		req = req.Param("resourceVersion", rv)
	}
	return req
}

// Read sends req and decodes the Table it answers row by row (Rows).
func Read(ctx context.Context, req *rest.Request, ns string, fn func(Row) error) (metav1.ListMeta, Columns, error) {
	body, err := req.Stream(ctx)
	if err != nil {
		return metav1.ListMeta{}, Columns{}, err
	}
	defer body.Close()
	return Rows(body, ns, fn)
}

// Rows decodes a Table of podgroups from r one row at a time and calls fn
// with each Row: namespace and name (ns and the Name cell, or the row's
// metadata when it has some), queue and phase. It returns the
// Table's list metadata (resourceVersion, continue token) and its columns.
//
// Why one row at a time: the Table of a cluster's podgroups is read in one
// request (pages are served from etcd, not the watch cache, several times
// slower at 10x), and decoded whole it would hold every row's cells at once.
//
// The API server writes a Table's fields in their declared order (kind,
// apiVersion, metadata, columnDefinitions, rows), so the columns are known
// before the first row; rows before columns are refused (ErrNoColumns).
// Anything but a Table is errNotTable.
func Rows(r io.Reader, ns string, fn func(Row) error) (metav1.ListMeta, Columns, error) {
	meta, cols, err := rows(r, ns, fn)
	if err != nil || cols == nil {
		if err == nil {
			// No columns at all: not a Table of a CRD with printer columns.
			err = ErrNoColumns
		}
		return metav1.ListMeta{}, Columns{}, err
	}
	return meta, *cols, nil
}

func rows(r io.Reader, ns string, fn func(Row) error) (metav1.ListMeta, *Columns, error) {
	var meta metav1.ListMeta
	in := interner{}
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return meta, nil, err
	}
	var cols *Columns
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return meta, nil, fmt.Errorf("podgroup table: %w", err)
		}
		switch tok {
		case "kind":
			var kind string
			if err := dec.Decode(&kind); err != nil {
				return meta, nil, fmt.Errorf("podgroup table: %w", err)
			}
			if kind != "Table" {
				return meta, nil, fmt.Errorf("%w (%q)", errNotTable, kind)
			}
		case "metadata":
			if err := dec.Decode(&meta); err != nil {
				return meta, nil, fmt.Errorf("podgroup table: %w", err)
			}
		case "columnDefinitions":
			var defs []metav1.TableColumnDefinition
			if err := dec.Decode(&defs); err != nil {
				return meta, nil, fmt.Errorf("podgroup table: %w", err)
			}
			c, err := FindColumns(defs)
			if err != nil {
				return meta, nil, err
			}
			cols = &c
		case "rows":
			if err := expectDelim(dec, '['); err != nil {
				return meta, nil, err
			}
			for dec.More() {
				if cols == nil {
					return meta, nil, ErrNoColumns
				}
				var row metav1.TableRow
				if err := dec.Decode(&row); err != nil {
					return meta, nil, fmt.Errorf("podgroup table: %w", err)
				}
				r, err := cols.row(row, ns, in)
				if err != nil {
					return meta, nil, err
				}
				if err := fn(r); err != nil {
					return meta, nil, err
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return meta, nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return meta, nil, fmt.Errorf("podgroup table: %w", err)
			}
		}
	}
	return meta, cols, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("podgroup table: %w", err)
	}
	if tok != d {
		return fmt.Errorf("%w: %v where %v was expected", errNotTable, tok, d)
	}
	return nil
}
