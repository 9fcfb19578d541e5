package schema

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
)

// Change is one value that differs between two states of the same schema.
type Change struct {
	Region           string
	Index            []int  // one index per dimension of the region
	Field            string // the field's (or label's) name; "" for an unnamed value
	Type             Type
	Offset           int // in the state
	Size             int
	Old              float64 // numbers: the values, decoded by type
	New              float64
	OldText, NewText string // chars
	OldRaw, NewRaw   []byte // the bytes
	Note             string // what it means in the game, when the schema's view says ("enemy removed")

	labelOnly bool // Field is a label of a number array, not a record field
}

// Path is the change's name as the game's code would write it:
// psyn[2].x, Ei[17][0], l[40][12].
func (c *Change) Path() string {
	var b bytes.Buffer
	b.WriteString(c.Region)
	for _, i := range c.Index {
		fmt.Fprintf(&b, "[%d]", i)
	}
	if c.Field != "" && c.Type != "" && !c.label() {
		b.WriteString(".")
		b.WriteString(c.Field)
	}
	return b.String()
}

// label reports whether Field names a value of a number array (Ei[e][0]
// "type") rather than a record's field.
func (c *Change) label() bool { return c.labelOnly }

// Diff returns every value that differs from a to b, in state order. a and
// b must both be s.Size bytes.
func Diff(s *Schema, a, b []byte) ([]Change, error) {
	if len(a) != s.Size || len(b) != s.Size {
		return nil, fmt.Errorf("states of %d and %d bytes for schema %s of %d", len(a), len(b), s.Name, s.Size)
	}
	var out []Change
	off := 0
	for off < len(a) {
		// Skip equal bytes eight at a time.
		for off+8 <= len(a) && binary.LittleEndian.Uint64(a[off:]) == binary.LittleEndian.Uint64(b[off:]) {
			off += 8
		}
		for off < len(a) && a[off] == b[off] {
			off++
		}
		if off >= len(a) {
			break
		}
		c := s.locate(off)
		if !bytes.Equal(a[c.Offset:c.Offset+c.Size], b[c.Offset:c.Offset+c.Size]) {
			s.fill(&c, a, b)
			out = append(out, c)
		}
		off = c.Offset + c.Size
	}
	return out, nil
}

// locate returns the value that holds byte off, without its values.
func (s *Schema) locate(off int) Change {
	i := sort.Search(len(s.Regions), func(i int) bool { return s.Regions[i].Offset+s.Regions[i].Size > off })
	r := &s.Regions[i]
	elem := (off - r.Offset) / r.Elem
	start := r.Offset + elem*r.Elem
	c := Change{Region: r.Name, Index: r.Index(elem)}
	if r.Fields == nil {
		c.Type, c.Offset, c.Size = r.Type, start, r.Elem
		c.Field = r.labels[c.Index[len(c.Index)-1]]
		c.labelOnly = true
		return c
	}
	in := off - start
	j := sort.Search(len(r.Fields), func(j int) bool { return r.Fields[j].Offset+r.Fields[j].Size > in })
	f := &r.Fields[j]
	c.Field, c.Type, c.Offset, c.Size = f.Name, f.Type, start+f.Offset, f.Size
	return c
}

func (s *Schema) fill(c *Change, a, b []byte) {
	c.OldRaw = bytes.Clone(a[c.Offset : c.Offset+c.Size])
	c.NewRaw = bytes.Clone(b[c.Offset : c.Offset+c.Size])
	c.Old, c.OldText = Value(a, c.Offset, c.Type, c.Size)
	c.New, c.NewText = Value(b, c.Offset, c.Type, c.Size)
	c.Note = s.note(c)
}

// note explains a change in the game's terms, where the view allows.
func (s *Schema) note(c *Change) string {
	v := s.View
	if v == nil {
		return ""
	}
	things := func(t *Things, what string) string {
		if t == nil || t.Region != c.Region || c.Field != t.Type {
			return ""
		}
		switch {
		case c.Old == 0 && c.New != 0:
			return what + " added"
		case c.Old != 0 && c.New == 0:
			return what + " removed"
		}
		return what + " type changed"
	}
	if n := things(v.Enemies, "enemy"); n != "" {
		return n
	}
	if n := things(v.Items, "item"); n != "" {
		return n
	}
	if p := v.Players; p != nil && p.Region == c.Region && c.Field == p.Active {
		if c.New != 0 {
			return "player active"
		}
		return "player inactive"
	}
	return ""
}

// RegionCount counts changes per region, in schema order.
type RegionCount struct {
	Region  string
	Changes int
	Bytes   int // bytes that differ
}

// Count counts changes and changed bytes per region.
func Count(s *Schema, changes []Change) []RegionCount {
	m := map[string]*RegionCount{}
	for _, c := range changes {
		rc := m[c.Region]
		if rc == nil {
			rc = &RegionCount{Region: c.Region}
			m[c.Region] = rc
		}
		rc.Changes++
		for i := range c.OldRaw {
			if c.OldRaw[i] != c.NewRaw[i] {
				rc.Bytes++
			}
		}
	}
	var out []RegionCount
	for _, r := range s.Regions {
		if rc := m[r.Name]; rc != nil {
			out = append(out, *rc)
		}
	}
	return out
}
