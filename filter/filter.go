// Package filter compiles display filters (-Y) and matches game packets
// against them.
//
// Filters are expressions of the expr language (github.com/expr-lang/expr):
// comparisons (== != < <= > >=), ranges (frame in 100..200), and/or/not
// (also && || !), string matching (type matches "^s"), parentheses. The
// names a filter can use are:
//
//	type       the 4-character packet name ("stdf")
//	stdf, cdat, …  true for packets of that name (any name of either era)
//	dir        "c2s" or "s2c"; c2s and s2c are also booleans
//	era        "legacy", "modern" or "unknown"
//	player     the packet's player (from its player field or its conversation), nil if unknown
//	client     the client endpoint of the conversation ("127.0.0.1:24786")
//	conv       the conversation's number (as pmdump stats lists them)
//	num        the packet's frame number in the capture
//	len        the payload length in bytes
//	frame      the game frame the packet refers to (cdat frame, stdf dst, stak ack …)
//	malformed, unknown   booleans
//	any decoded field by its snake_case name (src, dst, seq, slsn, c_sync …),
//	           with its meant value (legacy negatives recovered); name_raw is the raw one
//	sport, dport, saddr, daddr   UDP ports and IP addresses
//
// A name a packet does not have is nil; a comparison with nil is false,
// != included. A name no packet can have is an error.
package filter

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
)

// Filter is a compiled display filter.
type Filter struct {
	src  string
	prog *vm.Program
	env  map[string]any
}

// names of every packet of every era, offered as booleans.
var packetNames = func() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range decode.Eras {
		for _, l := range decode.Layouts(e) {
			if !seen[l.Name] {
				seen[l.Name] = true
				out = append(out, l.Name)
			}
		}
	}
	return out
}()

// checkNames rejects names no packet can have (a typo like "stfd" would
// otherwise match nothing, silently).
func checkNames(src string) error {
	tree, err := parser.Parse(src)
	if err != nil {
		return fmt.Errorf("filter %q: %w", src, err)
	}
	var v nameCollector
	ast.Walk(&tree.Node, &v)
	known := map[string]bool{}
	for _, n := range envNames {
		known[n] = true
	}
	for _, n := range v.idents {
		if !known[n] && !v.callees[n] {
			return fmt.Errorf("filter %q: unknown name %q (see pmdump read --help for the names)", src, n)
		}
	}
	return nil
}

type nameCollector struct {
	idents  []string
	callees map[string]bool
}

func (c *nameCollector) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		c.idents = append(c.idents, n.Value)
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			if c.callees == nil {
				c.callees = map[string]bool{}
			}
			c.callees[id.Value] = true
		}
	}
}

// nilSafe makes a != b false when either side is nil (a field the packet
// does not have), as every other comparison with nil is: "src != 0" does
// not match a cdat, which has no src.
type nilSafe struct{}

func (nilSafe) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BinaryNode)
	if !ok || b.Operator != "!=" {
		return
	}
	notNil := func(x ast.Node) ast.Node {
		return &ast.BinaryNode{Operator: "!=", Left: x, Right: &ast.NilNode{}}
	}
	ast.Patch(node, &ast.BinaryNode{Operator: "&&",
		Left:  &ast.BinaryNode{Operator: "&&", Left: notNil(b.Left), Right: notNil(b.Right)},
		Right: &ast.BinaryNode{Operator: "==", Left: &ast.BoolNode{Value: false}, Right: &ast.BinaryNode{Operator: "==", Left: b.Left, Right: b.Right}}})
}

// envNames is every name Match can define.
var envNames = func() []string {
	names := []string{"type", "dir", "c2s", "s2c", "era", "player", "client", "conv", "num", "len", "malformed",
		"unknown", "sport", "dport", "saddr", "daddr", "frame"}
	names = append(names, packetNames...)
	for _, e := range decode.Eras {
		for _, l := range decode.Layouts(e) {
			for _, f := range l.Fields {
				names = append(names, f.Name, f.Name+"_raw", f.Name+"_len")
			}
		}
	}
	return names
}()

// Compile compiles a filter expression.
func Compile(src string) (*Filter, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil, fmt.Errorf("empty filter")
	}
	f := &Filter{src: src, env: map[string]any{}}
	if err := checkNames(src); err != nil {
		return nil, err
	}
	opts := []expr.Option{expr.AllowUndefinedVariables(), expr.AsBool(), expr.Patch(nilSafe{})}
	// The expression language has built-in functions named like some of
	// ours (len, type, count): ours win.
	for _, n := range envNames {
		opts = append(opts, expr.DisableBuiltin(n))
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", src, err)
	}
	f.prog = prog
	return f, nil
}

// String returns the filter's source text.
func (f *Filter) String() string { return f.src }

// Match reports whether a record matches the filter. A runtime error (such
// as comparing a missing field with a number) is a non-match.
func (f *Filter) Match(r *session.Record) bool {
	env := f.env
	clear(env)
	p := &r.Packet
	name := p.NameString()
	for _, n := range packetNames {
		env[n] = n == name
	}
	env["type"] = name
	env["dir"] = r.Dir.String()
	env["c2s"] = r.Dir == decode.C2S
	env["s2c"] = r.Dir == decode.S2C
	env["era"] = r.Era.String()
	if r.Player >= 0 {
		env["player"] = r.Player
	}
	if r.Conv != nil {
		env["client"] = r.Conv.Client.String()
		env["conv"] = r.Conv.ID
	}
	env["num"] = r.N
	env["len"] = len(p.Raw)
	env["malformed"] = r.Kind == session.Malformed
	env["unknown"] = r.Kind == session.Unknown
	env["sport"] = int(r.Src.Port())
	env["dport"] = int(r.Dst.Port())
	env["saddr"] = r.Src.Addr().String()
	env["daddr"] = r.Dst.Addr().String()
	if fr, ok := p.Frame(); ok {
		env["frame"] = fr
	}
	if l := p.Layout; l != nil {
		for i := range l.Fields {
			if i >= len(p.Values) {
				break
			}
			fd := &l.Fields[i]
			v := p.Values[i]
			switch fd.Type {
			case decode.F64:
				env[fd.Name] = v.Float
			case decode.Str16:
				env[fd.Name] = v.Text()
			case decode.Data, decode.Rest:
				env[fd.Name+"_len"] = len(v.Bytes)
			default:
				m, differs := fd.Meant(v.Int)
				env[fd.Name] = m
				if differs {
					env[fd.Name+"_raw"] = v.Int
				}
			}
		}
	}
	out, err := expr.Run(f.prog, env)
	if err != nil {
		return false
	}
	b, _ := out.(bool)
	return b
}
