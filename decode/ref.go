package decode

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// Ref is a handle on one field of one or more packet layouts, resolved by
// name once (usually in a package-level variable, so a name that does not
// resolve stops the program, and every test of the package, at start-up).
// Reading a field through a Ref costs an index lookup by Layout.ID, not a
// search by name. A Ref is one pointer, so passing it costs nothing.
type Ref struct{ *ref }

type ref struct {
	field  string
	index  []int  // by Layout.ID: the field's index, -1 for layouts the Ref is not about
	offset []int  // by Layout.ID: the field's byte offset in the payload, -1 when not fixed
	typ    []Type // by Layout.ID: the field's wire type
	lays   []*Layout
}

// NewRef resolves the field named field in every layout of the named
// packets (of any version) that has it. It fails when a name is of no
// version or no layout of a name has the field.
func NewRef(field string, packets ...string) (Ref, error) {
	return resolve(fmt.Sprintf("field %q", field), func(l *Layout) int { return l.Field(field) }, byNames(packets))
}

// NewRoleRef resolves, in the layouts of the named packets as NewRef does,
// the field each marks with role (the first one, for a role several fields
// of a layout share). Its Name is the field's name in the first layout.
func NewRoleRef(role Role, packets ...string) (Ref, error) {
	return resolve(fmt.Sprintf("role %d", role), func(l *Layout) int { return l.FieldByRole(role) }, byNames(packets))
}

// NewKindRef resolves the named field in every layout of kind k that has
// it; it fails when none has.
func NewKindRef(k Kind, field string) (Ref, error) {
	return resolve(fmt.Sprintf("field %q", field), func(l *Layout) int { return l.Field(field) }, byKind(k))
}

// NewKindRoleRef resolves the field marked with role in every layout of
// kind k that has one; it fails when none has.
func NewKindRoleRef(k Kind, role Role) (Ref, error) {
	return resolve(fmt.Sprintf("role %d", role), func(l *Layout) int { return l.FieldByRole(role) }, byKind(k))
}

// MustRoleRef is NewRoleRef for roles known to be marked; it panics
// otherwise.
func MustRoleRef(role Role, packets ...string) Ref { return must(NewRoleRef(role, packets...)) }

// MustKindRef is NewKindRef for fields known to exist; it panics otherwise.
func MustKindRef(k Kind, field string) Ref { return must(NewKindRef(k, field)) }

// MustKindRoleRef is NewKindRoleRef for roles known to be marked; it
// panics otherwise.
func MustKindRoleRef(k Kind, role Role) Ref { return must(NewKindRoleRef(k, role)) }

func must(r Ref, err error) Ref {
	if err != nil {
		panic(err)
	}
	return r
}

// A layoutGroup is the layouts a Ref is asked about, in groups that must
// each have the field at least once (one group per packet name, or one for
// a kind).
type layoutGroup struct {
	what    string
	layouts []*Layout
}

func byNames(packets []string) []layoutGroup {
	var gs []layoutGroup
	for _, name := range packets {
		g := layoutGroup{what: fmt.Sprintf("packet %q", name)}
		if len(name) == 4 {
			g.layouts = LayoutsOf([]byte(name))
		}
		gs = append(gs, g)
	}
	return gs
}

func byKind(k Kind) []layoutGroup {
	g := layoutGroup{what: "a " + k.String() + " packet"}
	for _, l := range allLayouts {
		if l.Kind == k {
			g.layouts = append(g.layouts, l)
		}
	}
	return []layoutGroup{g}
}

// resolve makes a Ref of the field find picks in each layout of the groups;
// what names the field in errors.
func resolve(what string, find func(*Layout) int, groups []layoutGroup) (Ref, error) {
	if len(groups) == 0 {
		return Ref{}, fmt.Errorf("decode: ref to %s names no packet", what)
	}
	r := Ref{&ref{index: make([]int, len(allLayouts)), offset: make([]int, len(allLayouts)), typ: make([]Type, len(allLayouts))}}
	for i := range r.index {
		r.index[i], r.offset[i] = -1, -1
	}
	for _, g := range groups {
		if len(g.layouts) == 0 {
			return Ref{}, fmt.Errorf("decode: no version has %s", g.what)
		}
		found := false
		for _, l := range g.layouts {
			i := find(l)
			if i < 0 {
				continue
			}
			found = true
			if r.field == "" {
				r.field = l.Fields[i].Name
			}
			r.index[l.ID] = i
			r.offset[l.ID] = l.offsets[i]
			r.typ[l.ID] = l.Fields[i].Type
			r.lays = append(r.lays, l)
		}
		if !found {
			return Ref{}, fmt.Errorf("decode: no layout of %s has %s (it has %s)", g.what, what, fieldNames(g.layouts[0]))
		}
	}
	return r, nil
}

// MustRef is NewRef for fields known to exist; it panics otherwise.
func MustRef(field string, packets ...string) Ref { return must(NewRef(field, packets...)) }

func fieldNames(l *Layout) string {
	var names []string
	for _, f := range l.Fields {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "no fields"
	}
	return strings.Join(names, ", ")
}

// Name is the field's name.
func (r Ref) Name() string {
	if r.ref == nil {
		return ""
	}
	return r.field
}

// Layouts returns the layouts the Ref resolves in.
func (r Ref) Layouts() []*Layout {
	if r.ref == nil {
		return nil
	}
	return r.lays
}

// Value returns the field's decoded value in p, and false when p's layout is
// not one the Ref is about or the field was not decoded (a short or
// malformed packet, an absent optional field).
func (r Ref) Value(p *Packet) (Value, bool) {
	if r.ref == nil || p.Layout == nil || p.Layout.ID >= len(r.index) {
		return Value{}, false
	}
	i := r.index[p.Layout.ID]
	if i < 0 || i >= len(p.Values) {
		return Value{}, false
	}
	return p.Values[i], true
}

// Has reports whether p is of one of the Ref's layouts and the field was
// decoded (an optional field is absent from a packet too short for it).
func (r Ref) Has(p *Packet) bool {
	_, ok := r.Value(p)
	return ok
}

// Int returns the field's raw integer value in p; see Value.
func (r Ref) Int(p *Packet) (int64, bool) {
	v, ok := r.Value(p)
	return v.Int, ok
}

// Text returns a Str16 field's text in p; see Value.
func (r Ref) Text(p *Packet) (string, bool) {
	v, ok := r.Value(p)
	if !ok {
		return "", false
	}
	return v.Text(), true
}

// Peek reads the field's raw integer value straight from a payload of
// layout l, without decoding the packet: the value Decode would give. It
// fails when l is not one of the Ref's layouts, the field is not an integer
// at a fixed offset, or the payload is too short to hold it.
func (r Ref) Peek(l *Layout, payload []byte) (int64, bool) {
	if r.ref == nil || l == nil || l.ID >= len(r.index) || r.index[l.ID] < 0 {
		return 0, false
	}
	off := r.offset[l.ID]
	if off < 0 {
		return 0, false
	}
	t := r.typ[l.ID]
	if off+t.Size() > len(payload) {
		return 0, false
	}
	b := payload[off:]
	be := l.bigEndian
	switch t {
	case U8:
		return int64(b[0]), true
	case S8:
		return int64(int8(b[0])), true
	case U16:
		if be {
			return int64(binary.BigEndian.Uint16(b)), true
		}
		return int64(binary.LittleEndian.Uint16(b)), true
	case I32:
		if be {
			return int64(int32(binary.BigEndian.Uint32(b))), true
		}
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	}
	return 0, false
}

// missingField is called when a field is looked up by a name its layout
// does not have. Outside tests the lookup gives the zero value; under go
// test it panics, so a misspelt or wrong-era name cannot pass unnoticed.
func missingField(l *Layout, name string) {
	if testing.Testing() {
		panic(fmt.Sprintf("decode: %s has no field %q (it has %s)", l.Name, name, fieldNames(l)))
	}
}
