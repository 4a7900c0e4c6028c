package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoFormSwitches checks that the workbench knows no filter form's inside: no type switch
// case and no type assertion names a concrete type of package filters (*filters.ZPK, …) in
// its code. It goes through filters.Fielder, PoleMover and ZeroHolder instead; tests may look
// inside.
func TestNoFormSwitches(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	concrete := func(e ast.Expr) (string, bool) {
		star, ok := e.(*ast.StarExpr)
		if !ok {
			return "", false
		}
		sel, ok := star.X.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		pkg, ok := sel.X.(*ast.Ident)
		return "*filters." + sel.Sel.Name, ok && pkg.Name == "filters"
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				if typ, ok := concrete(n.Type); ok {
					t.Errorf("%s: type assertion to %s", fset.Position(n.Pos()), typ)
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if typ, ok := concrete(e); ok {
						t.Errorf("%s: case %s", fset.Position(e.Pos()), typ)
					}
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files: the test runs in the wrong directory", checked)
	}
}
