// Package filter compiles display filters (-Y) and matches game packets
// against them.
//
// Filters are expressions of the expr language (github.com/expr-lang/expr):
// comparisons (== != < <= > >=), ranges (frame in 100..200), and/or/not
// (also && || !), string matching (type matches "^s"), parentheses, and
// any/all/none/one over a list with a predicate on its
// elements (any(entries, .data2 == 71)). The names a filter can use are:
//
//	type       the 4-character packet name, as text: type == "stdf"; this
//	           form works for every name, also those that start with a digit
//	stdf, cdat, …  true for packets of that name (any name of either era)
//	_1234, _5678   the same for the names that start with a digit (a bare
//	           1234 or 5678 used as a condition means them too)
//	dir        "c2s" or "s2c"; c2s and s2c are also booleans
//	era, version   the conversation's wire version: "legacy", "modern",
//	           "2026-07" … (pmdump versions) or "unknown"
//	player     the packet's player (from its player field or its conversation), nil if unknown
//	client     the client endpoint of the conversation ("127.0.0.1:24786")
//	conv       the conversation's number (as pmdump stats lists them)
//	num        the packet's frame number in the capture (num in read --json)
//	len        the payload length in bytes
//	frame      the game frame the packet refers to (cdat frame, stdf dst, stak ack …)
//	malformed, unknown   booleans
//	any decoded field by its snake_case name (src, dst, seq, slsn, c_sync …),
//	           with its meant value (legacy negatives recovered); name_raw is the raw one;
//	           name_name the name of an enumerated field's value (srrf result_name == "saved")
//	entries    a legacy sdat's game moves, a list whose elements have .frame,
//	           .type, .data1 and .data2: any(entries, .type == 1 and .data2 == 71)
//	           finds a dropped player; on a packet without entries such a
//	           condition is false, negated or not
//	sport, dport, saddr, daddr   UDP ports and IP addresses
//
// A name a packet does not have is nil; a comparison with nil is false,
// != included. A name no packet can have is an error, and so is a
// comparison that can never hold because its sides are of different kinds:
// type == stdf (stdf is a condition, not text: write type == "stdf"),
// type == 1234 (write type == "1234"). "not x == y" means not (x == y).
package filter

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/pmdump/pmdump/decode"
)

// Help is the description of the filter language for a command's --help
// (plain text, lines of at most 80 columns, ending in a newline).
func Help() string { return help }

const help = `Display filter (-Y) names: type (the packet name as text: type == "stdf",
the general form, which works for every name), every packet name as a
condition (stdf, cdat, …; the names that start with a digit as _1234 and
_5678, or a bare 1234 or 5678 where a condition is expected), dir (c2s/s2c;
c2s and s2c are conditions too), era or version (legacy, modern, 2026-07 …:
pmdump versions), player, client, conv (the conversation's
number in pmdump stats), num (the frame number in the capture), len (payload
bytes), frame (the game frame a packet refers to), malformed, unknown, sport,
dport, saddr, daddr, and every decoded field by its name (src, dst, seq,
count, slsn, move, c_sync …; name_raw is a legacy field's raw value,
name_name the name of an enumerated value: srrf and result_name == "saved"). A
legacy sdat's entries are a list with .frame .type .data1 .data2:
"any(entries, .type == 1 and .data2 == 71)" finds a dropped player (on
other packets such a condition is false, negated too).
Operators: == != < <= > >= and or not (&& || !), "x in 100..200", matches,
parentheses; any/all/none/one(list, predicate). A name a packet does not
have is nil: comparisons with it are false (!= too). A name no packet has is
an error, and so is a comparison of a condition with text (type == stdf:
write type == "stdf") or of text with a number (type == 1234). "not x == y"
means not (x == y).
`

// Filter is a compiled display filter.
type Filter struct {
	src  string
	prog *vm.Program
	env  map[string]any
	// What the compiled expression uses, so that Match defines only
	// those names: the fixed names, the packet names (as conditions) and,
	// per field name, which of its forms (fieldPlain, fieldRaw, fieldLen).
	fixed   [numFixed]bool
	packets []usedPacket
	fields  map[string]uint8
	// The conversation every match is of (see Conv).
	conv    int
	hasConv bool
}

// usesName collects the identifiers of a filter.
type usesName map[string]bool

func (u *usesName) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok {
		if *u == nil {
			*u = usesName{}
		}
		(*u)[id.Value] = true
	}
}

// names of every packet of every era, offered as booleans.
var packetNames = func() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range decode.Versions() {
		for _, l := range e.Layouts() {
			if !seen[l.Name] {
				seen[l.Name] = true
				out = append(out, l.Name)
			}
		}
	}
	return out
}()

// boolName is the name of a packet's boolean: the packet name itself, or
// with a leading underscore when it starts with a digit (1234 is a number
// in an expression; _1234 is a name).
func boolName(packet string) string {
	if packet != "" && packet[0] >= '0' && packet[0] <= '9' {
		return "_" + packet
	}
	return packet
}

// boolNames are the names whose value is true or false; textNames those
// whose value is text.
var boolNames, textNames = func() (map[string]bool, map[string]bool) {
	b := map[string]bool{"c2s": true, "s2c": true, "malformed": true, "unknown": true}
	for _, n := range packetNames {
		b[boolName(n)] = true
	}
	t := map[string]bool{"type": true, "dir": true, "era": true, "version": true, "client": true, "saddr": true, "daddr": true}
	for _, e := range decode.Versions() {
		for _, l := range e.Layouts() {
			for _, f := range l.Fields {
				if f.Type.Text() {
					t[f.Name] = true
				}
				if f.Enum != nil {
					t[f.Name+"_name"] = true
				}
			}
		}
	}
	return b, t
}()

// packetNumber returns the packet name a number literal stands for (1234,
// 5678), or "".
func packetNumber(n ast.Node) string {
	i, ok := n.(*ast.IntegerNode)
	if !ok {
		return ""
	}
	s := fmt.Sprint(i.Value)
	for _, p := range packetNames {
		if p == s {
			return p
		}
	}
	return ""
}

// check rejects names no packet can have (a typo like "stfd" would
// otherwise match nothing, silently) and comparisons that can never hold.
func check(src string) (*parser.Tree, error) {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", src, err)
	}
	v := nameCollector{known: map[string]bool{}}
	for _, n := range envNames {
		v.known[n] = true
	}
	ast.Walk(&tree.Node, &v)
	if v.err != nil {
		return nil, fmt.Errorf("filter %q: %w", src, v.err)
	}
	for _, n := range v.idents {
		if !v.known[n] && !v.callees[n] {
			return nil, fmt.Errorf("filter %q: unknown name %q (see pmdump read --help for the names)", src, n)
		}
	}
	if _, ok := tree.Node.(*ast.IntegerNode); ok && packetNumber(tree.Node) == "" {
		return nil, fmt.Errorf("filter %q: a number is not a condition (did you mean frame == %s?)", src, src)
	}
	return tree, nil
}

type nameCollector struct {
	known   map[string]bool
	idents  []string
	callees map[string]bool
	err     error // the first comparison that can never hold
}

// comparisons are the operators that compare their two sides.
var comparisons = map[string]bool{"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"in": true, "matches": true, "contains": true, "startsWith": true, "endsWith": true}

// logical are the operators whose operands are conditions.
var logical = map[string]bool{"and": true, "or": true, "&&": true, "||": true}

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
	case *ast.BinaryNode:
		if c.err == nil && comparisons[n.Operator] {
			c.err = mismatch(n)
		}
		if c.err == nil && logical[n.Operator] {
			c.err = notCondition(n.Left)
			if c.err == nil {
				c.err = notCondition(n.Right)
			}
		}
	case *ast.UnaryNode:
		if c.err == nil && (n.Operator == "not" || n.Operator == "!") {
			c.err = notCondition(n.Node)
		}
	}
}

// notCondition rejects a number used as a condition, unless it is a
// packet name (1234 or 5678).
func notCondition(n ast.Node) error {
	switch x := n.(type) {
	case *ast.IntegerNode:
		if packetNumber(n) == "" {
			return fmt.Errorf("%d is a number, not a condition (did you mean frame == %d?)", x.Value, x.Value)
		}
	case *ast.FloatNode:
		return fmt.Errorf("%v is a number, not a condition", x.Value)
	}
	return nil
}

// mismatch rejects a comparison of a condition with text (type == stdf)
// or of text with a number (type == 1234): it could never hold.
func mismatch(b *ast.BinaryNode) error {
	name := func(n ast.Node) string {
		if id, ok := n.(*ast.IdentifierNode); ok {
			return id.Value
		}
		return ""
	}
	for _, sides := range [2][2]ast.Node{{b.Left, b.Right}, {b.Right, b.Left}} {
		x, y := sides[0], sides[1]
		xn, yn := name(x), name(y)
		_, yText := y.(*ast.StringNode)
		switch {
		case boolNames[xn] && (textNames[yn] || yText):
			packet := strings.TrimPrefix(xn, "_")
			if yn == "type" {
				return fmt.Errorf("%s is a condition (true for %s packets), not the text %q: write type %s %q, or %s alone", xn, packet, packet, b.Operator, packet, xn)
			}
			return fmt.Errorf("%s is a condition (true or false), not text: it can never be %s %s", xn, b.Operator, exprText(y))
		case textNames[xn]:
			switch v := y.(type) {
			case *ast.IntegerNode:
				return fmt.Errorf("%s is text, not a number: write %s %s \"%d\"", xn, xn, b.Operator, v.Value)
			case *ast.FloatNode:
				return fmt.Errorf("%s is text, not a number: write %s %s \"%v\"", xn, xn, b.Operator, v.Value)
			}
		}
	}
	return nil
}

func exprText(n ast.Node) string {
	if s, ok := n.(*ast.StringNode); ok {
		return fmt.Sprintf("%q", s.Value)
	}
	return n.String()
}

// packetNumbers turns a number used as a condition into the packet name it
// stands for: "1234 or 5678" is "_1234 or _5678".
type packetNumbers struct{}

func (packetNumbers) Visit(node *ast.Node) {
	fix := func(n *ast.Node) {
		if p := packetNumber(*n); p != "" {
			ast.Patch(n, &ast.IdentifierNode{Value: boolName(p)})
		}
	}
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		if logical[n.Operator] {
			fix(&n.Left)
			fix(&n.Right)
		}
	case *ast.UnaryNode:
		if n.Operator == "not" || n.Operator == "!" {
			fix(&n.Node)
		}
	}
}

// notBindsLoosely makes "not x == y" mean not (x == y), as it reads, not
// (not x) == y (expr binds not tighter than comparisons, which makes
// "not frame == 5" an error on a number and so never true). For conditions
// both readings agree.
type notBindsLoosely struct{}

func (notBindsLoosely) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BinaryNode)
	if !ok || !comparisons[b.Operator] {
		return
	}
	u, ok := b.Left.(*ast.UnaryNode)
	if !ok || (u.Operator != "not" && u.Operator != "!") {
		return
	}
	ast.Patch(node, &ast.UnaryNode{Operator: u.Operator, Node: &ast.BinaryNode{Operator: b.Operator, Left: u.Node, Right: b.Right}})
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
	names := append([]string(nil), fixedNames[:]...)
	for _, n := range packetNames {
		names = append(names, boolName(n))
	}
	for _, e := range decode.Versions() {
		for _, l := range e.Layouts() {
			for _, f := range l.Fields {
				names = append(names, f.Name, f.Name+"_raw", f.Name+"_len")
				if f.Enum != nil {
					names = append(names, f.Name+"_name")
				}
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
	tree, err := check(src)
	if err != nil {
		return nil, err
	}
	code := src
	if p := packetNumber(tree.Node); p != "" {
		code = boolName(p) // the whole filter is "1234"
	}
	opts := []expr.Option{expr.AllowUndefinedVariables(), expr.AsBool(),
		expr.Patch(packetNumbers{}), expr.Patch(notBindsLoosely{}), expr.Patch(nilSafe{})}
	// The expression language has built-in functions named like some of
	// ours (len, type, count): ours win.
	for _, n := range envNames {
		opts = append(opts, expr.DisableBuiltin(n))
	}
	prog, err := expr.Compile(code, opts...)
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", src, err)
	}
	f.prog = prog
	f.use(prog.Node())
	return f, nil
}

// String returns the filter's source text.
func (f *Filter) String() string { return f.src }
