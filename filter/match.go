package filter

import (
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
)

// usedPacket is a packet name a filter uses as a condition, under the name
// it is used by (_1234 for 1234).
type usedPacket struct{ name, cond string }

// The forms of a field name a filter may use.
const (
	fieldPlain uint8 = 1 << iota // name: the meant value (an entries list for a group)
	fieldRaw                     // name_raw
	fieldLen                     // name_len
	fieldName                    // name_name: an enumerated field's value's name
)

// fixedNames are the names every packet has (frame: those that refer to a
// game frame), whatever its fields.
var fixedNames = [numFixed]string{nType: "type", nDir: "dir", nC2S: "c2s", nS2C: "s2c", nEra: "era", nPlayer: "player",
	nClient: "client", nConv: "conv", nNum: "num", nLen: "len", nMalformed: "malformed", nUnknown: "unknown",
	nSport: "sport", nDport: "dport", nSaddr: "saddr", nDaddr: "daddr", nFrame: "frame", nVersion: "version"}

// The indices of fixedNames.
const (
	nType = iota
	nDir
	nC2S
	nS2C
	nEra
	nPlayer
	nClient
	nConv
	nNum
	nLen
	nMalformed
	nUnknown
	nSport
	nDport
	nSaddr
	nDaddr
	nFrame
	nVersion
	numFixed
)

// Conv returns the conversation every packet the filter matches is of,
// when the filter says so at its top ("conv == 3 and …"): a scan can pass
// over the others without decoding them.
func (f *Filter) Conv() (int, bool) { return f.conv, f.hasConv }

// onlyConv finds a conv == N condition that node (the compiled
// expression) cannot be true without.
func onlyConv(node ast.Node) (int, bool) {
	b, ok := node.(*ast.BinaryNode)
	if !ok {
		return 0, false
	}
	switch b.Operator {
	case "and", "&&":
		if n, ok := onlyConv(b.Left); ok {
			return n, true
		}
		return onlyConv(b.Right)
	case "==":
		id, ok := b.Left.(*ast.IdentifierNode)
		v, isInt := b.Right.(*ast.IntegerNode)
		if !ok || !isInt {
			id, ok = b.Right.(*ast.IdentifierNode)
			v, isInt = b.Left.(*ast.IntegerNode)
		}
		if ok && isInt && id.Value == "conv" {
			return v.Value, true
		}
	}
	return 0, false
}

// use notes the names the compiled expression (node) uses.
func (f *Filter) use(node ast.Node) {
	f.conv, f.hasConv = onlyConv(node)
	var uses usesName
	ast.Walk(&node, &uses)
	for i, n := range fixedNames {
		f.fixed[i] = uses[n]
	}
	for _, n := range packetNames {
		if c := boolName(n); uses[c] {
			f.packets = append(f.packets, usedPacket{name: n, cond: c})
		}
	}
	for n := range uses {
		if f.fields == nil {
			f.fields = map[string]uint8{}
		}
		f.fields[n] |= fieldPlain
		if b, ok := strings.CutSuffix(n, "_raw"); ok {
			f.fields[b] |= fieldRaw
		}
		if b, ok := strings.CutSuffix(n, "_len"); ok {
			f.fields[b] |= fieldLen
		}
		if b, ok := strings.CutSuffix(n, "_name"); ok {
			f.fields[b] |= fieldName
		}
	}
}

// Match reports whether a record matches the filter. A runtime error (such
// as comparing a missing field with a number) is a non-match.
func (f *Filter) Match(r *session.Record) bool {
	env := f.env
	clear(env)
	p := &r.Packet
	name := p.NameString()
	for _, n := range f.packets {
		env[n.cond] = n.name == name
	}
	// Only the names the filter uses are defined (a scan matches millions
	// of packets); the others would be nil all the same.
	u := &f.fixed
	if u[nType] {
		env["type"] = name
	}
	if u[nDir] {
		env["dir"] = r.Dir.String()
	}
	if u[nC2S] {
		env["c2s"] = r.Dir == decode.C2S
	}
	if u[nS2C] {
		env["s2c"] = r.Dir == decode.S2C
	}
	if u[nEra] {
		env["era"] = r.Version.String()
	}
	if u[nVersion] {
		env["version"] = r.Version.String()
	}
	if u[nPlayer] && r.Player >= 0 {
		env["player"] = r.Player
	}
	if r.Conv != nil {
		if u[nClient] {
			env["client"] = r.Conv.Client.String()
		}
		if u[nConv] {
			env["conv"] = r.Conv.ID
		}
	}
	if u[nNum] {
		env["num"] = r.N
	}
	if u[nLen] {
		env["len"] = len(p.Raw)
	}
	if u[nMalformed] {
		env["malformed"] = r.Kind == session.Malformed
	}
	if u[nUnknown] {
		env["unknown"] = r.Kind == session.Unknown
	}
	if u[nSport] {
		env["sport"] = int(r.Src.Port())
	}
	if u[nDport] {
		env["dport"] = int(r.Dst.Port())
	}
	if u[nSaddr] {
		env["saddr"] = r.Src.Addr().String()
	}
	if u[nDaddr] {
		env["daddr"] = r.Dst.Addr().String()
	}
	if u[nFrame] {
		if fr, ok := p.Frame(); ok {
			env["frame"] = fr
		}
	}
	if l := p.Layout; l != nil && len(f.fields) > 0 {
		for i := range l.Fields {
			if i >= len(p.Values) {
				break
			}
			fd := &l.Fields[i]
			use := f.fields[fd.Name]
			if use == 0 {
				continue
			}
			v := p.Values[i]
			switch fd.Type {
			case decode.F64:
				if use&fieldPlain != 0 {
					env[fd.Name] = v.Float
				}
			case decode.Str16, decode.StrN:
				if use&fieldPlain != 0 {
					env[fd.Name] = v.Text()
				}
			case decode.Data, decode.Rest:
				if use&fieldLen != 0 {
					env[fd.Name+"_len"] = len(v.Bytes)
				}
			case decode.Group:
				if use&fieldPlain != 0 {
					env[fd.Name] = entryList(fd, p.Entries)
				}
			default:
				m, differs := fd.Meant(v.Int)
				if use&fieldPlain != 0 {
					env[fd.Name] = m
				}
				if differs && use&fieldRaw != 0 {
					env[fd.Name+"_raw"] = v.Int
				}
				if use&fieldName != 0 && fd.Enum != nil {
					if ev, ok := fd.Enum.Lookup(m); ok {
						env[fd.Name+"_name"] = ev.Name
					}
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

// entryList is a Group field's entries as a list of maps, one per entry,
// keyed by the entry fields' names (meant values).
func entryList(fd *decode.Field, flat []decode.Value) []any {
	per := len(fd.Sub)
	if per == 0 {
		return nil
	}
	out := make([]any, 0, len(flat)/per)
	for i := 0; i+per <= len(flat); i += per {
		e := make(map[string]any, per)
		for j := range fd.Sub {
			sf := &fd.Sub[j]
			v := flat[i+j]
			switch sf.Type {
			case decode.F64:
				e[sf.Name] = v.Float
			case decode.Str16, decode.StrN:
				e[sf.Name] = v.Text()
			default:
				e[sf.Name], _ = sf.Meant(v.Int)
			}
		}
		out = append(out, e)
	}
	return out
}
