package decode

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/pmdump/pmdump/internal/decimal"
)

// AppendSummary appends the packet's key fields as "name=value" pairs, the
// way the one-line listing shows them.
func (p *Packet) AppendSummary(b []byte) []byte {
	if p.Layout == nil {
		return b
	}
	for k, i := range p.Layout.keys {
		if i >= len(p.Values) {
			break
		}
		b = append(b, p.Layout.keyText[k]...) // "name=", " name=" after the first
		b = appendValue(b, &p.Layout.Fields[i], &p.Values[i])
	}
	return b
}

// appendInt appends v in decimal, as strconv.AppendInt.
func appendInt(b []byte, v int64) []byte { return decimal.AppendInt(b, v) }

// appendValue appends a field's value in text form: the meant value, with
// the raw one in parentheses when they differ; control bits by name.
func appendValue(b []byte, f *Field, v *Value) []byte {
	switch f.Type {
	case F64:
		return appendFloat(b, v.Float)
	case Str16, StrN:
		return strconv.AppendQuote(b, v.Text())
	case Data, Rest:
		b = appendInt(b, int64(len(v.Bytes)))
		return append(b, " bytes"...)
	}
	if m, differs := f.Meant(v.Int); differs {
		b = appendInt(b, m)
		b = append(b, "(raw "...)
		b = appendInt(b, v.Int)
		return append(b, ')')
	}
	b = appendInt(b, v.Int)
	if f.Enum != nil && f.Enum.Show {
		if ev, ok := f.Enum.Lookup(v.Int); ok {
			b = append(b, '(')
			b = append(b, ev.Name...)
			b = append(b, ')')
		}
	}
	if f.Bits != nil && v.Int != 0 {
		b = append(b, '[')
		b = appendBits(b, f.Bits, v.Int)
		b = append(b, ']')
	}
	return b
}

func appendBits(b []byte, names []string, v int64) []byte {
	if v == MenuMove {
		return append(b, "menu/esc"...)
	}
	sep := false
	for i, n := range names {
		if v&(1<<i) != 0 {
			if sep {
				b = append(b, '|')
			}
			b = append(b, n...)
			sep = true
		}
	}
	if v>>len(names) != 0 {
		if sep {
			b = append(b, '|')
		}
		b = append(b, "0x"...)
		b = strconv.AppendInt(b, v>>len(names)<<len(names), 16)
	}
	return b
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendFloat(b, f, 'f', 1, 64)
	}
	return strconv.AppendFloat(b, f, 'g', 6, 64)
}

// AppendTree appends the full field tree: one line per field with its
// offset, wire type and value, entries of a group indented below it. Each
// line starts with indent.
func (p *Packet) AppendTree(b []byte, indent string) []byte {
	b = append(b, indent...)
	b = append(b, "[ 0] name  "...)
	b = strconv.AppendQuote(b, string(p.Name[:]))
	if p.Layout != nil {
		b = append(b, "  ("...)
		b = append(b, p.Layout.Doc...)
		b = append(b, ')')
	}
	b = append(b, '\n')
	if p.Layout == nil {
		return b
	}
	pos, entry := 4, 0
	for i := range p.Layout.Fields {
		if i >= len(p.Values) {
			break
		}
		f := &p.Layout.Fields[i]
		v := p.Values[i]
		b = appendTreeLine(b, indent, pos, f, v)
		switch f.Type {
		case Data, Rest:
			pos += len(v.Bytes)
		case StrN:
			pos += 5 + len(v.Bytes)
		case Group:
			n := int(v.Int)
			for e := 0; e < n && entry+len(f.Sub) <= len(p.Entries); e++ {
				b = append(b, indent...)
				b = append(b, "      #"...)
				b = strconv.AppendInt(b, int64(e), 10)
				for j := range f.Sub {
					b = append(b, ' ')
					b = append(b, f.Sub[j].Name...)
					b = append(b, '=')
					b = appendValue(b, &f.Sub[j], &p.Entries[entry+j])
					pos += f.Sub[j].Type.Size()
				}
				b = append(b, '\n')
				entry += len(f.Sub)
			}
		default:
			pos += f.Type.Size()
		}
	}
	return b
}

func appendTreeLine(b []byte, indent string, pos int, f *Field, v Value) []byte {
	b = append(b, indent...)
	b = append(b, '[')
	if pos < 10 {
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(pos), 10)
	b = append(b, "] "...)
	b = append(b, f.Name...)
	b = append(b, ' ')
	b = append(b, f.Type.String()...)
	b = append(b, ": "...)
	if f.Type == Group {
		b = strconv.AppendInt(b, v.Int, 10)
		b = append(b, " entries"...)
	} else {
		b = appendValue(b, f, &v)
	}
	b = append(b, "  — "...)
	b = append(b, f.Doc...)
	return append(b, '\n')
}

// AppendJSONFields appends the packet's fields as one JSON object with
// snake_case keys. Integers are numbers; a field whose meant value differs
// from its raw one gives the meant value under its name and the raw one
// under name_raw; Data and Rest fields give their length as name_len; a
// group gives an array of objects.
func (p *Packet) AppendJSONFields(b []byte) []byte {
	b = append(b, '{')
	if p.Layout == nil {
		return append(b, '}')
	}
	sep := false
	entry := 0
	for i := range p.Layout.Fields {
		if i >= len(p.Values) {
			break
		}
		f := &p.Layout.Fields[i]
		v := p.Values[i]
		if sep {
			b = append(b, ',')
		}
		sep = true
		if f.Type == Group {
			b = appendKey(b, f.Name, "")
			b = append(b, '[')
			for e := 0; e < int(v.Int) && entry+len(f.Sub) <= len(p.Entries); e++ {
				if e > 0 {
					b = append(b, ',')
				}
				b = append(b, '{')
				for j := range f.Sub {
					if j > 0 {
						b = append(b, ',')
					}
					b = appendJSONField(b, &f.Sub[j], p.Entries[entry+j])
				}
				b = append(b, '}')
				entry += len(f.Sub)
			}
			b = append(b, ']')
			continue
		}
		b = appendJSONField(b, f, v)
	}
	return append(b, '}')
}

func appendKey(b []byte, name, suffix string) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, suffix...)
	return append(b, '"', ':')
}

func appendJSONField(b []byte, f *Field, v Value) []byte {
	switch f.Type {
	case F64:
		b = appendKey(b, f.Name, "")
		return AppendJSONFloat(b, v.Float)
	case Str16, StrN:
		b = appendKey(b, f.Name, "")
		return AppendJSONString(b, v.Text())
	case Data, Rest:
		b = appendKey(b, f.Name, "_len")
		return strconv.AppendInt(b, int64(len(v.Bytes)), 10)
	}
	b = appendKey(b, f.Name, "")
	if m, differs := f.Meant(v.Int); differs {
		b = strconv.AppendInt(b, m, 10)
		b = append(b, ',')
		b = appendKey(b, f.Name, "_raw")
	}
	b = strconv.AppendInt(b, v.Int, 10)
	if f.Enum != nil && f.Enum.Show {
		if ev, ok := f.Enum.Lookup(v.Int); ok {
			b = append(b, ',')
			b = appendKey(b, f.Name, "_name")
			b = AppendJSONString(b, ev.Name)
		}
	}
	return b
}

// AppendJSONFloat appends a float as JSON (null for NaN and infinities).
func AppendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// AppendJSONString appends s as a JSON string.
func AppendJSONString(b []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	enc, _ := json.Marshal(s)
	return append(b, enc...)
}
