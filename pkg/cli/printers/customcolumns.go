package printers

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// CustomColumns prints -o custom-columns=HEADER:JSONPATH,... . It is ours
// rather than kubectl's because kubectl's lives in a package that drags in
// most of kubectl.
type CustomColumns struct {
	headers   []string
	paths     []*jsonpath.JSONPath
	noHeaders bool
}

// NewCustomColumns parses a spec such as "NAME:.metadata.name,STATE:.status.state".
func NewCustomColumns(spec string, noHeaders bool) (*CustomColumns, error) {
	if spec == "" {
		return nil, util.UsageErrorf("custom-columns needs a spec: -o custom-columns=NAME:.metadata.name,STATE:.status.state")
	}
	p := &CustomColumns{noHeaders: noHeaders}
	for _, part := range strings.Split(spec, ",") {
		header, expr, ok := strings.Cut(part, ":")
		if !ok || header == "" || expr == "" {
			return nil, util.UsageErrorf("invalid custom-columns entry %q: write HEADER:JSONPATH, e.g. NAME:.metadata.name", part)
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if !strings.HasPrefix(expr, "{") {
			expr = "{" + expr + "}"
		}
		if err := jp.Parse(expr); err != nil {
			return nil, util.UsageErrorf("invalid custom-columns path %q: %s", expr, util.Message(err))
		}
		p.headers = append(p.headers, header)
		p.paths = append(p.paths, jp)
	}
	return p, nil
}

// PrintObj prints one row per object of obj (or obj itself).
func (p *CustomColumns) PrintObj(obj runtime.Object, out io.Writer) error {
	w := printers.GetNewTabWriter(out)
	defer w.Flush()
	if !p.noHeaders {
		fmt.Fprintln(w, strings.Join(p.headers, "\t"))
	}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return err
		}
	}
	for _, item := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
		if err != nil {
			return err
		}
		cells := make([]string, len(p.paths))
		for i, jp := range p.paths {
			values, err := jp.FindResults(m)
			if err != nil {
				return err
			}
			var parts []string
			for _, vs := range values {
				for _, v := range vs {
					parts = append(parts, cell(v))
				}
			}
			cells[i] = "<none>"
			if len(parts) > 0 {
				cells[i] = strings.Join(parts, ",")
			}
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return nil
}

func cell(v reflect.Value) string {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "<none>"
		}
		v = v.Elem()
	}
	var b bytes.Buffer
	fmt.Fprint(&b, v.Interface())
	return b.String()
}
