package decode

import (
	"encoding/binary"
	"fmt"
	"math"
)

// New returns an empty packet of the named layout of version v, with every
// field zero, to be filled with Set, SetMeant, SetFloat, SetBytes and
// AddEntry and then encoded.
func New(v Version, name string) (*Packet, error) {
	l := Lookup(v, []byte(name))
	if l == nil {
		return nil, fmt.Errorf("no packet %q in version %s", name, v)
	}
	p := &Packet{Layout: l, Values: make([]Value, len(l.Fields)), Version: v}
	copy(p.Name[:], name)
	return p, nil
}

// NewKind returns an empty packet of version v's layout of kind k (its
// first, for a kind several layouts share), as New does.
func NewKind(v Version, k Kind) (*Packet, error) {
	l := v.Kind(k)
	if l == nil {
		return nil, fmt.Errorf("version %s has no %s packet", v, k)
	}
	return New(v, l.Name)
}

// MustNewKind is NewKind for kinds known to exist; it panics otherwise.
func MustNewKind(v Version, k Kind) *Packet {
	p, err := NewKind(v, k)
	if err != nil {
		panic(err)
	}
	return p
}

// MustNew is New for names known to exist; it panics otherwise.
func MustNew(v Version, name string) *Packet {
	p, err := New(v, name)
	if err != nil {
		panic(err)
	}
	return p
}

func (p *Packet) slot(name string) *Value {
	i := p.Layout.Field(name)
	if i < 0 {
		panic(fmt.Sprintf("decode: %s %s has no field %q", p.Version, p.Layout.Name, name))
	}
	for len(p.Values) <= i {
		p.Values = append(p.Values, Value{})
	}
	return &p.Values[i]
}

// Set sets an integer field and returns p, so calls can be chained.
func (p *Packet) Set(name string, v int64) *Packet { p.slot(name).Int = v; return p }

// SetMeant sets an integer field to the raw value that carries the meant
// value v, as the game encodes it (see Field.Recover): the inverse of
// Field.Meant.
func (p *Packet) SetMeant(name string, v int64) *Packet {
	f := &p.Layout.Fields[p.fieldIndex(name)]
	p.slot(name).Int = f.Raw(v)
	return p
}

// HasField reports whether p's layout has the named field.
func (p *Packet) HasField(name string) bool { return p.Layout != nil && p.Layout.Field(name) >= 0 }

// SetIf sets an integer field when p's layout has it (the level sequence
// of an ack, say, which only some versions carry), and returns p.
func (p *Packet) SetIf(name string, v int64) *Packet {
	if p.HasField(name) {
		p.Set(name, v)
	}
	return p
}

// SetRole sets the integer field marked with role, when p's layout has
// one, and returns p.
func (p *Packet) SetRole(role Role, v int64) *Packet {
	if i := p.Layout.FieldByRole(role); i >= 0 {
		p.Set(p.Layout.Fields[i].Name, v)
	}
	return p
}

func (p *Packet) fieldIndex(name string) int {
	i := p.Layout.Field(name)
	if i < 0 {
		panic(fmt.Sprintf("decode: %s %s has no field %q", p.Version, p.Layout.Name, name))
	}
	return i
}

// SetFloat sets a floating-point field.
func (p *Packet) SetFloat(name string, v float64) *Packet { p.slot(name).Float = v; return p }

// SetBytes sets a Str16, StrN, Data or Rest field. For a Data field it
// also sets the field that holds its size. A Str16 value of up to 16 bytes
// is encoded as it is, NUL-padded; a longer one is cut to 15 bytes and a
// NUL, as the game cuts a host name.
func (p *Packet) SetBytes(name string, b []byte) *Packet {
	v := p.slot(name)
	v.Bytes = b
	f := &p.Layout.Fields[p.Layout.Field(name)]
	switch f.Type {
	case Data:
		p.slot(f.SizeOf).Int = int64(len(b))
	case StrN:
		v.Int = int64(len(b))
	}
	return p
}

// AddEntry appends one entry to the packet's Group field (its values in the
// order of the group's fields) and bumps the count field. The Group field's
// own value holds the number of entries, as Decode leaves it.
func (p *Packet) AddEntry(vals ...int64) *Packet {
	for _, f := range p.Layout.Fields {
		if f.Type != Group {
			continue
		}
		for j := range f.Sub {
			var v int64
			if j < len(vals) {
				v = vals[j]
			}
			p.Entries = append(p.Entries, Value{Int: v})
		}
		p.slot(f.CountOf).Int++
		p.slot(f.Name).Int++
		return p
	}
	panic("decode: packet has no entries")
}

// Drop removes the trailing optional fields (the legacy 21-byte sdak).
func (p *Packet) Drop(name string) *Packet {
	if i := p.Layout.Field(name); i >= 0 && i < len(p.Values) {
		p.Values = p.Values[:i]
	}
	return p
}

// Encode appends the wire form of p to dst. Values are written as they are,
// so a test can build inconsistent packets (a size field that lies).
func Encode(dst []byte, p *Packet) []byte {
	l := p.Layout
	var order binary.AppendByteOrder = binary.LittleEndian
	if l.bigEndian {
		order = binary.BigEndian
	}
	dst = append(dst, l.Name...)
	for i := range l.Fields {
		if i >= len(p.Values) {
			break
		}
		dst = encodeField(dst, &l.Fields[i], p.Values[i], p.Entries, order)
	}
	return dst
}

func encodeField(dst []byte, f *Field, v Value, entries []Value, order binary.AppendByteOrder) []byte {
	switch f.Type {
	case U8, S8:
		return append(dst, byte(v.Int))
	case U16:
		return order.AppendUint16(dst, uint16(v.Int))
	case I32:
		return order.AppendUint32(dst, uint32(v.Int))
	case F64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float))
	case Str16:
		// Up to 16 bytes are written as they are (a decoded field comes
		// back unchanged); longer text is cut to 15 bytes and a NUL, as
		// the game does with a host name.
		var b [16]byte
		if len(v.Bytes) <= len(b) {
			copy(b[:], v.Bytes)
		} else {
			copy(b[:15], v.Bytes)
		}
		return append(dst, b[:]...)
	case Data, Rest:
		return append(dst, v.Bytes...)
	case StrN:
		dst = order.AppendUint32(dst, uint32(len(v.Bytes)))
		dst = append(dst, v.Bytes...)
		return append(dst, 0)
	case Group:
		for k := 0; k+len(f.Sub) <= len(entries); k += len(f.Sub) {
			for j := range f.Sub {
				dst = encodeField(dst, &f.Sub[j], entries[k+j], nil, order)
			}
		}
	}
	return dst
}
