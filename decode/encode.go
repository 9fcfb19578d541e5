package decode

import (
	"encoding/binary"
	"fmt"
	"math"
)

// New returns an empty packet of the named layout, with every field zero, to
// be filled with Set, SetFloat, SetBytes and AddEntry and then encoded.
func New(era Era, name string) (*Packet, error) {
	l := Lookup(era, []byte(name))
	if l == nil {
		return nil, fmt.Errorf("no packet %q in the %s era", name, era)
	}
	p := &Packet{Layout: l, Values: make([]Value, len(l.Fields))}
	copy(p.Name[:], name)
	return p, nil
}

// MustNew is New for names known to exist; it panics otherwise.
func MustNew(era Era, name string) *Packet {
	p, err := New(era, name)
	if err != nil {
		panic(err)
	}
	return p
}

func (p *Packet) slot(name string) *Value {
	i := p.Layout.Field(name)
	if i < 0 {
		panic(fmt.Sprintf("decode: %s %s has no field %q", p.Layout.Era, p.Layout.Name, name))
	}
	for len(p.Values) <= i {
		p.Values = append(p.Values, Value{})
	}
	return &p.Values[i]
}

// Set sets an integer field and returns p, so calls can be chained.
func (p *Packet) Set(name string, v int64) *Packet { p.slot(name).Int = v; return p }

// SetFloat sets a floating-point field.
func (p *Packet) SetFloat(name string, v float64) *Packet { p.slot(name).Float = v; return p }

// SetBytes sets a Str16, Data or Rest field. For a Data field it also sets
// the field that holds its size. A Str16 value of up to 16 bytes is encoded
// as it is, NUL-padded; a longer one is cut to 15 bytes and a NUL, as the
// game cuts a host name.
func (p *Packet) SetBytes(name string, b []byte) *Packet {
	p.slot(name).Bytes = b
	f := &p.Layout.Fields[p.Layout.Field(name)]
	if f.Type == Data {
		p.slot(f.SizeOf).Int = int64(len(b))
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
	if l.Era == Legacy {
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
	case Group:
		for k := 0; k+len(f.Sub) <= len(entries); k += len(f.Sub) {
			for j := range f.Sub {
				dst = encodeField(dst, &f.Sub[j], entries[k+j], nil, order)
			}
		}
	}
	return dst
}
