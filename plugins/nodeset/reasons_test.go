package nodeset

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// TestReasonsWrittenAreInTheTable: every condition reason the controller
// can write is an entry of pkg/rules/nodesetconditions, which the docs,
// doctor's fixes and the status merge read, so that a reason added in code
// without its entry fails here rather than reaching users undocumented. It
// reads the calls that write a reason (setCondition, setFalseWithWarning,
// and the Slinky lookup's missing(), whose reasons become SlurmReachable's)
// and the literals unreachableReason returns; a reason that is neither a
// literal nor a constant is not a call this test can read, and fails too.
func TestReasonsWrittenAreInTheTable(t *testing.T) {
	type use struct {
		typ    string
		status string // "True", "False" or "" (either)
		reason string
		at     string
	}
	var uses []use
	fset := token.NewFileSet()
	for _, dir := range []string{".", "../../pkg/slurm/slinky"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			consts := stringConsts(f)
			value := func(e ast.Expr) (string, bool) {
				switch v := e.(type) {
				case *ast.BasicLit:
					s, err := strconv.Unquote(v.Value)
					return s, err == nil
				case *ast.Ident:
					s, ok := consts[v.Name]
					return s, ok
				}
				return "", false
			}
			typeOf := func(e ast.Expr) string {
				if sel, ok := e.(*ast.SelectorExpr); ok {
					return sel.Sel.Name
				}
				return ""
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if n.Name.Name != "unreachableReason" {
						return true
					}
					ast.Inspect(n.Body, func(m ast.Node) bool {
						if r, ok := m.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
							if s, ok := value(r.Results[0]); ok {
								uses = append(uses, use{conditions.SlurmReachable, "False", s, fset.Position(r.Pos()).String()})
							}
						}
						return true
					})
				case *ast.CallExpr:
					var fn string
					switch f := n.Fun.(type) {
					case *ast.Ident:
						fn = f.Name
					case *ast.SelectorExpr:
						fn = f.Sel.Name
					}
					at := fset.Position(n.Pos()).String()
					var u use
					var arg ast.Expr
					switch {
					case fn == "setCondition" && len(n.Args) == 4:
						u = use{typ: typeOf(n.Args[0]), at: at}
						if b, ok := n.Args[1].(*ast.Ident); ok && (b.Name == "true" || b.Name == "false") {
							u.status = map[string]string{"true": "True", "false": "False"}[b.Name]
						}
						arg = n.Args[2]
					case fn == "setFalseWithWarning" && len(n.Args) == 4:
						u, arg = use{typ: typeOf(n.Args[0]), status: "False", at: at}, n.Args[1]
					case fn == "missing" && len(n.Args) >= 2:
						u, arg = use{typ: conditions.SlurmReachable, status: "False", at: at}, n.Args[0]
					default:
						return true
					}
					s, ok := value(arg)
					if !ok {
						// The helpers themselves pass their parameter on.
						if id, isIdent := arg.(*ast.Ident); isIdent && (id.Name == "reason" || id.Name == "ok") {
							return true
						}
						t.Errorf("%s: %s with a reason this test cannot read (a literal or a constant of the file)", at, fn)
						return true
					}
					u.reason = s
					uses = append(uses, u)
				}
				return true
			})
		}
	}
	if len(uses) < 20 {
		t.Fatalf("found only %d reasons written: the calls were not read", len(uses))
	}
	for _, u := range uses {
		if !inTable(u.typ, u.status, u.reason) {
			t.Errorf("%s: condition %q reason %q (%s) is not in pkg/rules/nodesetconditions' table", u.at, u.typ, u.reason, u.status)
		}
	}
}

// stringConsts are the file's string constants by name.
func stringConsts(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[n.Name] = constant.StringVal(constant.MakeFromLiteral(lit.Value, lit.Kind, 0))
					}
				}
			}
		}
	}
	return out
}

func inTable(typ, status, reason string) bool {
	for _, c := range conditions.Table {
		if typ != "" && c.Type != typ {
			continue
		}
		var rs []conditions.Reason
		if status != "False" {
			rs = append(rs, c.True...)
		}
		if status != "True" {
			rs = append(rs, c.False...)
		}
		for _, r := range rs {
			if r.Name == reason {
				return true
			}
		}
	}
	return false
}
