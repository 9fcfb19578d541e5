package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Value is the decoded value of one field.
type Value struct {
	Int   int64   // integer types: the raw value as on the wire
	Float float64 // F64
	Bytes []byte  // Str16, Data, Rest: the bytes (they alias the payload)
}

// Packet is one decoded game packet. Decode fills a Packet in place and
// reuses its slices, so a caller that decodes many packets can keep one.
type Packet struct {
	Name    [4]byte
	Layout  *Layout // nil for an unknown name
	Values  []Value // one per Layout.Fields entry; absent optional fields are not included
	Entries []Value // the Group field's entries, flattened: len(Sub) values per entry
	Raw     []byte  // the whole payload (aliases the input)
	Err     error   // why the packet is malformed, nil when it decoded cleanly
	// Version is the version it was decoded as.
	Version Version
}

// NameString is the packet's name as a string.
func (p *Packet) NameString() string { return string(p.Name[:]) }

// Kind is the kind of the packet's layout, or KindUnknown.
func (p *Packet) Kind() Kind {
	if p.Layout == nil {
		return KindUnknown
	}
	return p.Layout.Kind
}

// Dir is the direction the packet's name travels in.
func (p *Packet) Dir() Dir {
	if p.Layout == nil {
		return DirUnknown
	}
	return p.Layout.Dir
}

// Int returns the raw integer value of the named field, or 0 when the
// packet has no layout or the field was not decoded. A name the packet's
// layout does not have is a programming error: under go test it panics
// (outside tests it gives 0). Code that reads a field often should resolve
// it once with MustRef instead.
func (p *Packet) Int(name string) int64 {
	if p.Layout == nil {
		return 0
	}
	i := p.Layout.Field(name)
	if i < 0 {
		missingField(p.Layout, name)
		return 0
	}
	if i >= len(p.Values) {
		return 0
	}
	return p.Values[i].Int
}

// Has reports whether the named field was decoded.
func (p *Packet) Has(name string) bool {
	if p.Layout == nil {
		return false
	}
	i := p.Layout.Field(name)
	return i >= 0 && i < len(p.Values)
}

// Player returns the player number the packet carries, if it carries one.
func (p *Packet) Player() (int, bool) {
	if p.Layout == nil || p.Layout.player < 0 || p.Layout.player >= len(p.Values) {
		return 0, false
	}
	return int(p.Values[p.Layout.player].Int), true
}

// Frame returns the game frame the packet refers to, if any.
func (p *Packet) Frame() (int64, bool) {
	if p.Layout == nil || p.Layout.frame < 0 || p.Layout.frame >= len(p.Values) {
		return 0, false
	}
	return p.Values[p.Layout.frame].Int, true
}

// Payload returns the packet's Data field (a stdf, sfil or snfo piece).
func (p *Packet) Payload() []byte {
	if p.Layout == nil {
		return nil
	}
	for i, f := range p.Layout.Fields {
		if (f.Type == Data || f.Type == Rest) && i < len(p.Values) {
			return p.Values[i].Bytes
		}
	}
	return nil
}

// Meant returns the value the game meant for field f with raw value v, and
// whether it differs from the raw one.
func (f *Field) Meant(v int64) (int64, bool) {
	switch f.Recover {
	case Negative:
		if v == 0 {
			return 0, false
		}
		return RecoverNegative(uint32(v)), true
	case Minus1000:
		return v - 1000, true
	}
	return v, false
}

// Raw returns the raw value that carries the meant value v, as the game
// encodes it: the inverse of Meant.
func (f *Field) Raw(v int64) int64 {
	switch f.Recover {
	case Negative:
		if v == 0 {
			return 0
		}
		return int64(EncodeNegative(v))
	case Minus1000:
		return v + 1000
	}
	return v
}

// Errors returned (wrapped) by Decode.
var (
	ErrShort   = errors.New("packet shorter than its layout")
	ErrLong    = errors.New("packet longer than its layout")
	ErrOverrun = errors.New("field overruns the payload")
	ErrInvalid = errors.New("invalid field value")
	ErrUnknown = errors.New("unknown packet name")
)

// Decode decodes payload as a packet of version v into p. The payload
// must start with the 4-byte name. On failure p.Err is set to the error it
// returns and p holds whatever fields could be decoded. A name the version
// does not have gives ErrUnknown with p.Layout nil.
func Decode(p *Packet, payload []byte, v Version) error {
	p.Version = v
	p.Layout = nil
	p.Values = p.Values[:0]
	p.Entries = p.Entries[:0]
	p.Raw = payload
	p.Err = nil
	p.Name = [4]byte{}
	if len(payload) < 4 {
		copy(p.Name[:], payload)
		p.Err = fmt.Errorf("%d-byte payload has no packet name: %w", len(payload), ErrShort)
		return p.Err
	}
	copy(p.Name[:], payload)
	l := Lookup(v, payload)
	if l == nil {
		p.Err = fmt.Errorf("%q in version %s: %w", payload[:4], v, ErrUnknown)
		return p.Err
	}
	p.Layout = l
	p.Err = decodeFields(p, l, payload)
	return p.Err
}

func decodeFields(p *Packet, l *Layout, b []byte) error {
	be := l.bigEndian
	// A short packet (cut by a snap length, or malformed) still gets the
	// fields that fit decoded, then reports that it is short.
	var short error
	if len(b) < l.minLen {
		short = fmt.Errorf("%s: %d bytes, layout needs %d: %w", l.Name, len(b), l.minLen, ErrShort)
	}
	if l.maxLen >= 0 && len(b) > l.maxLen {
		return fmt.Errorf("%s: %d bytes, layout has at most %d: %w", l.Name, len(b), l.maxLen, ErrLong)
	}
	if cap(p.Values) < len(l.Fields) {
		p.Values = make([]Value, 0, len(l.Fields)+4)
	}
	pos := 4
	for i := range l.Fields {
		f := &l.Fields[i]
		if f.Optional && pos == len(b) {
			break
		}
		// Each value is written in place: a Value returned and then
		// copied costs a stall per field on the hot path.
		p.Values = append(p.Values, Value{})
		v := &p.Values[len(p.Values)-1]
		// Fast path for the fixed-size numbers most fields are.
		if pos+4 <= len(b) {
			switch f.Type {
			case U8:
				v.Int = int64(b[pos])
				pos++
				continue
			case I32:
				var u uint32
				if be {
					u = binary.BigEndian.Uint32(b[pos:])
				} else {
					u = binary.LittleEndian.Uint32(b[pos:])
				}
				v.Int = int64(int32(u))
				pos += 4
				continue
			}
		}
		n, err := decodeField(p, f, b, pos, be, v)
		if err != nil {
			p.Values = p.Values[:len(p.Values)-1]
			if short != nil {
				return short
			}
			return fmt.Errorf("%s field %s at offset %d: %w", l.Name, f.Name, pos, err)
		}
		pos += n
	}
	if short != nil {
		return short
	}
	if pos != len(b) {
		return fmt.Errorf("%s: %d bytes left after the last field: %w", l.Name, len(b)-pos, ErrLong)
	}
	if l.pieces() {
		if err := pieceCheck(p); err != nil {
			return fmt.Errorf("%s: %v: %w", l.Name, err, ErrInvalid)
		}
	}
	return nil
}

// decodeField decodes field f at pos into v, which must be zero, and
// returns the bytes it took.
func decodeField(p *Packet, f *Field, b []byte, pos int, be bool, v *Value) (int, error) {
	rest := len(b) - pos
	switch f.Type {
	case U8:
		if rest < 1 {
			break
		}
		v.Int = int64(b[pos])
		return 1, nil
	case S8:
		if rest < 1 {
			break
		}
		v.Int = int64(int8(b[pos]))
		return 1, nil
	case U16:
		if rest < 2 {
			break
		}
		if be {
			v.Int = int64(binary.BigEndian.Uint16(b[pos:]))
		} else {
			v.Int = int64(binary.LittleEndian.Uint16(b[pos:]))
		}
		return 2, nil
	case I32:
		if rest < 4 {
			break
		}
		if be {
			v.Int = int64(int32(binary.BigEndian.Uint32(b[pos:])))
		} else {
			v.Int = int64(int32(binary.LittleEndian.Uint32(b[pos:])))
		}
		return 4, nil
	case F64:
		if rest < 8 {
			break
		}
		v.Float = math.Float64frombits(binary.LittleEndian.Uint64(b[pos:]))
		return 8, nil
	case Str16:
		if rest < 16 {
			break
		}
		v.Bytes = b[pos : pos+16]
		return 16, nil
	case Data:
		n := p.Values[f.ref].Int
		if n < 0 || n > int64(rest) {
			return 0, fmt.Errorf("size %d but %d bytes follow: %w", n, rest, ErrOverrun)
		}
		v.Bytes = b[pos : pos+int(n)]
		return int(n), nil
	case Rest:
		v.Bytes = b[pos:]
		return rest, nil
	case StrN:
		if rest < 4 {
			break
		}
		var n int64
		if be {
			n = int64(int32(binary.BigEndian.Uint32(b[pos:])))
		} else {
			n = int64(int32(binary.LittleEndian.Uint32(b[pos:])))
		}
		if n < 0 || n+5 > int64(rest) {
			return 0, fmt.Errorf("text of %d bytes but %d bytes follow its length: %w", n, rest-4, ErrOverrun)
		}
		if b[pos+4+int(n)] != 0 {
			return 0, fmt.Errorf("text of %d bytes is not followed by a NUL: %w", n, ErrInvalid)
		}
		v.Int = n
		v.Bytes = b[pos+4 : pos+4+int(n)]
		return int(n) + 5, nil
	case Group:
		n := int(p.Values[f.ref].Int)
		per := 0
		for _, s := range f.Sub {
			per += s.Type.Size()
		}
		if n*per > rest {
			return 0, fmt.Errorf("%d entries of %d bytes but %d bytes follow: %w", n, per, rest, ErrOverrun)
		}
		q := pos
		for e := 0; e < n; e++ {
			for si := range f.Sub {
				p.Entries = append(p.Entries, Value{})
				sn, _ := decodeField(p, &f.Sub[si], b, q, be, &p.Entries[len(p.Entries)-1])
				q += sn
			}
		}
		v.Int = int64(n)
		return q - pos, nil
	}
	return 0, fmt.Errorf("needs %d bytes, %d left: %w", f.Type.Size(), rest, ErrShort)
}

// Text returns a Str16 or StrN value as text, cut at the first NUL.
func (v Value) Text() string {
	b := v.Bytes
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
