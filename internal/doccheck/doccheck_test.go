// Package doccheck holds the repository's own checks, run by go test: every
// exported name of critsec's library packages has a doc comment (staticcheck
// checks the form of those that exist, ST1020-ST1022; this checks that they
// exist), and the tracked files hold no executable, no file over 1 MiB
// outside docs/img and no words about how the work was organised
// (tree_test.go), and every relative link of the Markdown docs reaches a
// file and a heading that exist (links_test.go).
package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExportedNamesDocumented walks the module's non-test Go files outside
// cmd/ (commands export nothing) and reports every exported function,
// method (of an exported type), type, constant and variable without a doc
// comment. A constant or variable in a group is documented by the group's
// comment or its own.
func TestExportedNamesDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var missing []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "cmd" || name == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			missing = append(missing, undocumented(fset, decl)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("%s has no doc comment", m)
	}
}

func undocumented(fset *token.FileSet, decl ast.Decl) []string {
	at := func(n ast.Node, what string) string {
		p := fset.Position(n.Pos())
		return p.Filename[len("../../"):] + ":" + strconv.Itoa(p.Line) + ": " + what
	}
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || d.Doc != nil {
			return nil
		}
		if d.Recv != nil {
			recv := receiverType(d.Recv.List[0].Type)
			if !ast.IsExported(recv) {
				return nil
			}
			return []string{at(d, "method "+recv+"."+d.Name.Name)}
		}
		return []string{at(d, "func "+d.Name.Name)}
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
					out = append(out, at(s, "type "+s.Name.Name))
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
						out = append(out, at(n, d.Tok.String()+" "+n.Name))
					}
				}
			}
		}
		return out
	}
	return nil
}

func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
