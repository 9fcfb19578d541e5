package wireshark

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/decode"
)

// The fast paths: for every layout without a group, a decoder written out
// as straight-line Lua (each field read at its offset, no table walked),
// and for every layout a summary that formats its key fields with one
// string.format. A fast decoder gives up (returns nil) on any payload that
// does not fit, and the runtime's table-driven decoder then decodes it and
// words the error: the fast path only ever decodes what decodes without
// one, so it never changes a result, only its cost.

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
	for _, era := range decode.Eras {
		for _, l := range decode.Layouts(era) {
			fmt.Fprintf(b, "do\nlocal l = LAYOUTS[%s][%s]\n", luaString(era.String()), luaString(l.Name))
			if canFast(l) {
				if err := writeFastDecode(b, l); err != nil {
					return err
				}
			}
			writeFastSummary(b, l)
			b.WriteString("end\n")
		}
	}
	return nil
}

// fastDecoder builds one layout's fast decoder.
type fastDecoder struct {
	b         *strings.Builder
	l         *decode.Layout
	be        bool
	at        offset
	havePos   bool
	v, p, n   []string // Lua expressions of each decoded field's value, position and length
	pieceVars [3]int   // indexes of seq, count, start, or -1
}

func writeFastDecode(b *strings.Builder, l *decode.Layout) error {
	d := &fastDecoder{b: b, l: l, be: l.Era == decode.Legacy, at: offset{k: 4}, pieceVars: [3]int{-1, -1, -1}}
	if seq, count, start, ok := l.PieceFields(); ok {
		d.pieceVars = [3]int{seq, count, start}
	}
	b.WriteString("l.fast = function(s, len)\n")
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
	fmt.Fprintf(d.b, "%sreturn {%s}, {%s}, {%s}\n", in, strings.Join(d.v, ", "), strings.Join(d.p, ", "), strings.Join(d.n, ", "))
}

func (d *fastDecoder) field(i int) error {
	f := &d.l.Fields[i]
	v := "v" + strconv.Itoa(i+1)
	at := d.at.lua()
	idx := d.at.plus(1).lua() // 1-based index of the field's first byte
	p := at
	if d.at.variable {
		p = "p" + strconv.Itoa(i+1)
		fmt.Fprintf(d.b, "\tlocal %s = %s\n", p, at)
	}
	n := strconv.Itoa(f.Type.Size())
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
		fmt.Fprintf(d.b, "\ta, b, c, e = byte(s, %s, %s)\n", idx, d.at.plus(4).lua())
		if d.be {
			fmt.Fprintf(d.b, "\tlocal %s = ((a * 256 + b) * 256 + c) * 256 + e\n", v)
		} else {
			fmt.Fprintf(d.b, "\tlocal %s = ((e * 256 + c) * 256 + b) * 256 + a\n", v)
		}
		fmt.Fprintf(d.b, "\tif %s >= 2147483648 then\n\t\t%s = %s - 4294967296\n\tend\n", v, v, v)
	case decode.F64:
		fmt.Fprintf(d.b, "\tlocal %s = read_f64(s, %s)\n", v, at)
	case decode.Str16:
		fmt.Fprintf(d.b, "\tlocal %s = text(sub(s, %s, %s))\n", v, idx, d.at.plus(16).lua())
	case decode.Data:
		j := d.l.Field(f.SizeOf)
		if j < 0 || j >= i {
			return fmt.Errorf("%s %s.%s: size field %s does not precede it", d.l.Era, d.l.Name, f.Name, f.SizeOf)
		}
		fmt.Fprintf(d.b, "\tlocal %s = v%d\n\tif %s < 0 or %s > len - %s then\n\t\treturn nil\n\tend\n", v, j+1, v, v, parens(at))
		d.setPos(fmt.Sprintf("%s + %s", at, v))
		n = v
	case decode.Rest:
		fmt.Fprintf(d.b, "\tlocal %s = len - %s\n", v, parens(at))
		d.setPos("len")
		n = v
	default:
		return fmt.Errorf("%s %s.%s: no fast decoding for %s", d.l.Era, d.l.Name, f.Name, f.Type)
	}
	if f.Type.Size() > 0 {
		d.at = d.at.plus(f.Type.Size())
	}
	d.v, d.p, d.n = append(d.v, v), append(d.p, p), append(d.n, n)
	return nil
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
		case (f.Type == decode.U8 || f.Type == decode.S8 || f.Type == decode.U16 || f.Type == decode.I32) && f.Recover == decode.AsIs && f.Bits == nil:
			format = append(format, f.Name+"=%d")
			args = append(args, v)
		default:
			format = append(format, f.Name+"=%s")
			args = append(args, fmt.Sprintf("value_text(fields[%d], %s, n[%d])", i+1, v, i+1))
		}
	}
	b.WriteString("local fields = l.fields\nl.summary = function(v, n)\n")
	for _, i := range checks {
		fmt.Fprintf(b, "\tif v[%d] == nil then\n\t\treturn nil\n\tend\n", i)
	}
	if len(format) == 0 {
		b.WriteString("\treturn \"\"\nend\n")
		return
	}
	fmt.Fprintf(b, "\treturn format(%s, %s)\nend\n", luaString(strings.Join(format, " ")), strings.Join(args, ", "))
}
