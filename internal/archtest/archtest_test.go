package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// versionNames are the identifiers of package decode that stand for one
// version (comparing with them is asking which version, not what it can do).
var versionNames = map[string]bool{"Legacy": true, "Modern": true, "Newest": true, "MustParseVersion": true, "ParseVersion": true}

// TestNoVersionOrNameIdentity fails when code outside package decode (tests
// aside) compares a version with a named one (== decode.Legacy, a switch
// with case decode.Modern) or a packet name with a literal name (== "stdf",
// case "stak"): such code is what a new version would silently get wrong.
// Code asks the version (decode.Version.Has, Info, LevelSeqOn…) and the
// layout (Kind, roles) instead. internal/gameclient is left out on purpose:
// it is the tests' independent oracle, which reads the bytes by its own
// description of the wire (its wire.go), not by decode's.
func TestNoVersionOrNameIdentity(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "decode":
				if path != root {
					return filepath.SkipDir
				}
			}
			if filepath.ToSlash(path) == filepath.ToSlash(filepath.Join(root, "internal", "gameclient")) {
				return filepath.SkipDir // the independent oracle
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, b := range violations(fset, f) {
			t.Error(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// violations lists where file f compares or switches on a named version or
// a literal packet name.
func violations(fset *token.FileSet, f *ast.File) []string {
	packetNames := map[string]bool{}
	for _, l := range decode.AllLayouts() {
		packetNames[l.Name] = true
	}
	var bad []string
	report := func(n ast.Node, what string) {
		bad = append(bad, fset.Position(n.Pos()).String()+": "+what)
	}
	isVersion := func(e ast.Expr) bool {
		if c, ok := e.(*ast.CallExpr); ok {
			e = c.Fun
		}
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := s.X.(*ast.Ident)
		return ok && x.Name == "decode" && versionNames[s.Sel.Name]
	}
	isName := func(e ast.Expr) (string, bool) {
		l, ok := e.(*ast.BasicLit)
		if !ok || l.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(l.Value)
		return s, err == nil && packetNames[s]
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			if isVersion(n.X) || isVersion(n.Y) {
				report(n, "compares with a named version")
			}
			if s, ok := isName(n.X); ok {
				report(n, "compares with the packet name "+s)
			} else if s, ok := isName(n.Y); ok {
				report(n, "compares with the packet name "+s)
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if isVersion(e) {
					report(e, "switches on a named version")
				}
				if s, ok := isName(e); ok {
					report(e, "switches on the packet name "+s)
				}
			}
		}
		return true
	})
	return bad
}

// TestTheRuleCanFail runs the rule's check on code that breaks it three
// times and on code that keeps it.
func TestTheRuleCanFail(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want int
	}{
		{`package x
import "github.com/pmdump/pmdump/decode"
func f(v decode.Version, name string) bool {
	switch name {
	case "stdf":
	}
	return v == decode.Legacy || name == "stak"
}
`, 3},
		{`package x
import "github.com/pmdump/pmdump/decode"
func f(v decode.Version, l *decode.Layout) bool {
	switch l.Kind {
	case decode.KindDifPiece:
	}
	return v.Has(decode.KindHandshake) || v == decode.VersionUnknown || l.Name == "other"
}
`, 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", tt.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := violations(fset, f); len(got) != tt.want {
			t.Errorf("%d violations, want %d: %q", len(got), tt.want, got)
		}
	}
}
