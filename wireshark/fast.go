package wireshark

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/decode"
)

// The fast paths: for every layout without a group, two decoders written
// out as straight-line Lua (each field read at its offset, no table
// walked): fast gives every field's value, position and length, for the
// tree; quick checks the payload the same way but reads only the values a
// summary line needs (key fields, fields with a role, sizes and counts),
// for dissections without a tree. And for every layout a summary that
// formats its key fields with one string.format. A fast or quick decoder
// gives up (returns nil) on any payload that does not fit, and the
// runtime's table-driven decoder then decodes it and words the error: the
// fast paths only ever decode what decodes without one, so they never
// change a result, only its cost.

// offset is a payload offset: pos+k once a field of variable size has been
// read (pos is then a Lua local), k before.
type offset struct {
	variable bool
	k        int
}

func (o offset) plus(n int) offset { return offset{o.variable, o.k + n} }

// lua is the offset as a Lua expression.
func (o offset) lua() string {
	switch {
	case !o.variable:
		return strconv.Itoa(o.k)
	case o.k == 0:
		return "pos"
	}
	return "pos + " + strconv.Itoa(o.k)
}

// canFast tells whether a layout gets a fast decoder: no group, and every
// piece field before the first optional one.
func canFast(l *decode.Layout) bool {
	opt := len(l.Fields)
	for i, f := range l.Fields {
		if f.Type == decode.Group {
			return false
		}
		if f.Optional && i < opt {
			opt = i
		}
	}
	if seq, count, start, ok := l.PieceFields(); ok {
		return seq < opt && count < opt && start < opt
	}
	return true
}

// writeFast writes the fast decoder and the fast summary of every layout.
func writeFast(b *strings.Builder) error {
	b.WriteString("\n-- Fast paths (generated): straight-line decoders and summaries per layout.\n")
	for _, l := range decode.AllLayouts() {
		fmt.Fprintf(b, "do\nlocal l = %s\n", layoutRef(l))
		if canFast(l) {
			if err := writeFastDecode(b, l, false); err != nil {
				return err
			}
			if constData(l) {
				if err := writeFastDecode(b, l, true); err != nil {
					return err
				}
			}
		}
		writeFastSummary(b, l)
		b.WriteString("end\n")
	}
	return nil
}

// constData tells whether a piece layout's data is at a constant offset
// (the runtime finds it there after a quick decoding), or whether the
// layout has no pieces.
func constData(l *decode.Layout) bool {
	if _, _, _, ok := l.PieceFields(); !ok {
		return true
	}
	_, data := pieceData(l)
	return data >= 0 && constOffset(l, data) >= 0
}

// constOffset is field i's offset when no field before it varies in size,
// else -1.
func constOffset(l *decode.Layout, i int) int {
	off := 4
	for _, f := range l.Fields[:i] {
		if f.Type.Size() == 0 || f.Optional {
			return -1
		}
		off += f.Type.Size()
	}
	return off
}

// needed tells whether a quick decoding reads field i of a layout: a key
// field, a field with a role, or one that gives another's size or count.
func needed(l *decode.Layout, i int) bool {
	f := &l.Fields[i]
	if f.Key || f.Role != decode.RoleNone || f.Type.Size() == 0 {
		return true
	}
	for _, g := range l.Fields {
		if g.SizeOf == f.Name || g.CountOf == f.Name {
			return true
		}
	}
	return false
}

// fastDecoder builds one layout's fast or quick decoder.
type fastDecoder struct {
	b         *strings.Builder
	l         *decode.Layout
	be        bool
	quick     bool
	at        offset
	havePos   bool
	v, p, n   []string // Lua expressions of each decoded field's value, position and length
	pieceVars [3]int   // indexes of seq, count, start, or -1
}

func writeFastDecode(b *strings.Builder, l *decode.Layout, quick bool) error {
	d := &fastDecoder{b: b, l: l, be: l.BigEndian(), quick: quick, at: offset{k: 4}, pieceVars: [3]int{-1, -1, -1}}
	if seq, count, start, ok := l.PieceFields(); ok {
		d.pieceVars = [3]int{seq, count, start}
	}
	if quick {
		b.WriteString("l.quick = function(s, len)\n")
	} else {
		b.WriteString("l.fast = function(s, len)\n")
	}
	fmt.Fprintf(b, "\tif len < %d", l.MinLen())
	if l.MaxLen() >= 0 {
		fmt.Fprintf(b, " or len > %d", l.MaxLen())
	}
	b.WriteString(" then\n\t\treturn nil\n\tend\n\tlocal a, b, c, e\n")
	for i := range l.Fields {
		if i == 0 || l.Fields[i-1].Type.Size() == 0 || l.Fields[i].Optional {
			d.checkRun(i)
		}
		if err := d.field(i); err != nil {
			return err
		}
	}
	if d.at.variable || d.at.k != l.MinLen() || d.at.k != l.MaxLen() {
		fmt.Fprintf(b, "\tif %s ~= len then\n\t\treturn nil\n\tend\n", d.at.lua())
	}
	d.ret("\t")
	b.WriteString("end\n")
	return nil
}

// checkRun makes sure the run of fixed-size fields from field i on is in
// the payload; an optional field absent at the payload's end ends the
// decoding there.
func (d *fastDecoder) checkRun(i int) {
	if d.l.Fields[i].Optional {
		fmt.Fprintf(d.b, "\tif %s == len then\n", d.at.lua())
		d.ret("\t\t")
		d.b.WriteString("\tend\n")
	}
	size := 0
	for j := i; j < len(d.l.Fields); j++ {
		s := d.l.Fields[j].Type.Size()
		if s == 0 || j > i && d.l.Fields[j].Optional {
			break
		}
		size += s
	}
	if size > 0 && (d.at.variable || d.at.k+size > d.l.MinLen()) {
		fmt.Fprintf(d.b, "\tif len < %s then\n\t\treturn nil\n\tend\n", d.at.plus(size).lua())
	}
}

// ret returns the fields decoded so far, after the piece checks; in is
// the indentation.
func (d *fastDecoder) ret(in string) {
	if d.pieceVars[0] >= 0 {
		seq, count, start := d.v[d.pieceVars[0]], d.v[d.pieceVars[1]], d.v[d.pieceVars[2]]
		fmt.Fprintf(d.b, "%sif %s == 0 or %s >= %s or %s < 0 then\n%s\treturn nil\n%send\n", in, count, seq, count, start, in, in)
	}
	if d.quick {
		fmt.Fprintf(d.b, "%sreturn {%s}\n", in, strings.Join(d.v, ", "))
		return
	}
	fmt.Fprintf(d.b, "%sreturn {%s}, {%s}, {%s}\n", in, strings.Join(d.v, ", "), strings.Join(d.p, ", "), strings.Join(d.n, ", "))
}

func (d *fastDecoder) field(i int) error {
	f := &d.l.Fields[i]
	v := "v" + strconv.Itoa(i+1)
	at := d.at.lua()
	idx := d.at.plus(1).lua() // 1-based index of the field's first byte
	p := at
	if d.at.variable && !d.quick {
		p = "p" + strconv.Itoa(i+1)
		fmt.Fprintf(d.b, "\tlocal %s = %s\n", p, at)
	}
	n := strconv.Itoa(f.Type.Size())
	if d.quick && !needed(d.l, i) {
		d.at = d.at.plus(f.Type.Size()) // fixed size: needed() holds every variable-size one
		d.v, d.p, d.n = append(d.v, "nil"), append(d.p, p), append(d.n, n)
		return nil
	}
	switch f.Type {
	case decode.U8:
		fmt.Fprintf(d.b, "\tlocal %s = byte(s, %s)\n", v, idx)
	case decode.S8:
		fmt.Fprintf(d.b, "\tlocal %s = byte(s, %s)\n\tif %s >= 128 then\n\t\t%s = %s - 256\n\tend\n", v, idx, v, v, v)
	case decode.U16:
		fmt.Fprintf(d.b, "\ta, b = byte(s, %s, %s)\n", idx, d.at.plus(2).lua())
		if d.be {
			fmt.Fprintf(d.b, "\tlocal %s = a * 256 + b\n", v)
		} else {
			fmt.Fprintf(d.b, "\tlocal %s = b * 256 + a\n", v)
		}
	case decode.I32:
		d.readInt32(v, idx, d.at.plus(4).lua())
	case decode.F64:
		fmt.Fprintf(d.b, "\tlocal %s = read_f64(s, %s)\n", v, at)
	case decode.Str16:
		fmt.Fprintf(d.b, "\tlocal %s = text(sub(s, %s, %s))\n", v, idx, d.at.plus(16).lua())
	case decode.Data:
		j := d.l.Field(f.SizeOf)
		if j < 0 || j >= i {
			return fmt.Errorf("%s %s.%s: size field %s does not precede it", d.l.First(), d.l.Name, f.Name, f.SizeOf)
		}
		fmt.Fprintf(d.b, "\tlocal %s = v%d\n\tif %s < 0 or %s > len - %s then\n\t\treturn nil\n\tend\n", v, j+1, v, v, parens(at))
		d.setPos(fmt.Sprintf("%s + %s", at, v))
		n = v
	case decode.Rest:
		fmt.Fprintf(d.b, "\tlocal %s = len - %s\n", v, parens(at))
		d.setPos("len")
		n = v
	case decode.StrN:
		// an int32 length k, k bytes of text, a NUL
		k := "k" + strconv.Itoa(i+1)
		if d.at.variable || d.at.k+5 > d.l.MinLen() {
			fmt.Fprintf(d.b, "\tif len < %s then\n\t\treturn nil\n\tend\n", d.at.plus(5).lua())
		}
		d.readInt32(k, idx, d.at.plus(4).lua())
		fmt.Fprintf(d.b, "\tif %s < 0 or %s > len - %s or byte(s, %s + %s) ~= 0 then\n\t\treturn nil\n\tend\n",
			k, k, parens(d.at.plus(5).lua()), d.at.plus(5).lua(), k)
		fmt.Fprintf(d.b, "\tlocal %s = text(sub(s, %s, %s + %s))\n", v, d.at.plus(5).lua(), d.at.plus(4).lua(), k)
		d.setPos(fmt.Sprintf("%s + %s", d.at.plus(5).lua(), k))
		n = k + " + 5"
	default:
		return fmt.Errorf("%s %s.%s: no fast decoding for %s", d.l.First(), d.l.Name, f.Name, f.Type)
	}
	if f.Type.Size() > 0 {
		d.at = d.at.plus(f.Type.Size())
	}
	d.v, d.p, d.n = append(d.v, v), append(d.p, p), append(d.n, n)
	return nil
}

// readInt32 reads the int32 at the 1-based indexes from..to into a new local.
func (d *fastDecoder) readInt32(v, from, to string) {
	fmt.Fprintf(d.b, "\ta, b, c, e = byte(s, %s, %s)\n", from, to)
	if d.be {
		fmt.Fprintf(d.b, "\tlocal %s = ((a * 256 + b) * 256 + c) * 256 + e\n", v)
	} else {
		fmt.Fprintf(d.b, "\tlocal %s = ((e * 256 + c) * 256 + b) * 256 + a\n", v)
	}
	fmt.Fprintf(d.b, "\tif %s >= 2147483648 then\n\t\t%s = %s - 4294967296\n\tend\n", v, v, v)
}

// setPos moves the offset to a value known only when decoding.
func (d *fastDecoder) setPos(expr string) {
	if d.havePos {
		fmt.Fprintf(d.b, "\tpos = %s\n", expr)
	} else {
		fmt.Fprintf(d.b, "\tlocal pos = %s\n", expr)
		d.havePos = true
	}
	d.at = offset{variable: true}
}

func parens(expr string) string {
	if strings.ContainsAny(expr, "+-") {
		return "(" + expr + ")"
	}
	return expr
}

// writeFastSummary writes a layout's summary: its key fields as
// "name=value" with one string.format, plain integers as %d. It gives up
// (nil) when a key field is missing, for the generic summary.
func writeFastSummary(b *strings.Builder, l *decode.Layout) {
	var format, args []string
	var checks []int
	optional := false
	for i := range l.Fields {
		f := &l.Fields[i]
		optional = optional || f.Optional
		if !f.Key {
			continue
		}
		if optional {
			checks = append(checks, i+1)
		}
		v := "v[" + strconv.Itoa(i+1) + "]"
		switch {
		case (f.Type == decode.U8 || f.Type == decode.S8 || f.Type == decode.U16 || f.Type == decode.I32) && f.Recover == decode.AsIs && f.Bits == nil && !showEnum(f):
			format = append(format, f.Name+"=%d")
			args = append(args, v)
		default:
			format = append(format, f.Name+"=%s")
			// the value of a data or rest field is its length
			args = append(args, fmt.Sprintf("value_text(fields[%d], %s, %s)", i+1, v, v))
		}
	}
	b.WriteString("local fields = l.fields\nl.summary = function(v)\n")
	for _, i := range checks {
		fmt.Fprintf(b, "\tif v[%d] == nil then\n\t\treturn nil\n\tend\n", i)
	}
	if len(format) == 0 {
		b.WriteString("\treturn \"\"\nend\n")
		return
	}
	fmt.Fprintf(b, "\treturn format(%s, %s)\nend\n", luaString(strings.Join(format, " ")), strings.Join(args, ", "))
}
