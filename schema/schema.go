// Package schema names the bytes of a game state: its regions (player sync,
// enemies, items, lifts, level blocks, shots, events), their element counts
// and each element's fields with their types.
//
// A state is a raw memory copy of the game's arrays, so a layout is fixed
// by the game version, and the state's size almost tells the version (two
// versions' states have 112480 bytes: the older holds the level sequence,
// the newer does not; ForVersion tells them apart). The built-in schemas,
// one per state layout of every wire version (legacy 106144, modern 112384,
// 112480 twice, 112576, 112704, 113344 bytes), are JSON files in builtin/,
// each naming the versions it applies to, in the same format a user can
// load with --schema for another version. A state of a size no schema
// knows is one raw region of bytes.
//
// The format, one JSON object:
//
//	{
//	  "name": "modern-112384",       // shown to the user
//	  "size": 112384,                 // state size in bytes; selects the schema
//	  "versions": ["modern"],         // the wire versions it applies to (optional)
//	  "doc": "…",
//	  "regions": [                    // in state order, contiguous from byte 0
//	    {"name": "psyn", "dims": [8], // an array of 8 records…
//	     "fields": [{"name": "active", "type": "int32"}, …]},
//	    {"name": "Ei", "dims": [100, 32], "type": "int32",   // …or of numbers,
//	     "labels": {"0": "type"}}     // naming some values of the last index
//	  ],
//	  "view": {…}                     // optional: which regions and fields are
//	}                                 // players, enemies, items, lifts, shots, level
//
// Types: int32, uint8, float32, fixed16 (16.16 fixed point, shown as value /
// 65536), chars (with "size": text of that many bytes). All numbers are
// little-endian (x86 memory).
package schema

import (
	"embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Type is the type of a field or of an array's elements.
type Type string

// The types a schema can use.
const (
	Int32   Type = "int32"
	Uint8   Type = "uint8"
	Float32 Type = "float32"
	Fixed16 Type = "fixed16" // 16.16 fixed point
	Chars   Type = "chars"   // text of Field.Size bytes
)

// size of one value of the type (Chars: per character).
func (t Type) size() int {
	switch t {
	case Int32, Float32, Fixed16:
		return 4
	case Uint8, Chars:
		return 1
	}
	return 0
}

// Field is one field of a record.
type Field struct {
	Name   string `json:"name"`
	Type   Type   `json:"type"`
	Size   int    `json:"size,omitempty"` // bytes, for chars
	Doc    string `json:"doc,omitempty"`
	Offset int    `json:"-"` // within the record
}

// Region is one array of a state.
type Region struct {
	Name   string            `json:"name"`
	Doc    string            `json:"doc,omitempty"`
	Dims   []int             `json:"dims"`
	Fields []Field           `json:"fields,omitempty"` // records…
	Type   Type              `json:"type,omitempty"`   // …or numbers
	Labels map[string]string `json:"labels,omitempty"` // names of values of the last index
	Offset int               `json:"-"`                // in the state
	Size   int               `json:"-"`                // bytes
	Elem   int               `json:"-"`                // bytes per element (record or number)
	labels map[int]string
	field  map[string]int
}

// Count is the number of elements (records or numbers) of the region.
func (r *Region) Count() int {
	n := 1
	for _, d := range r.Dims {
		n *= d
	}
	return n
}

// Raw reports whether the region is bytes with no fields.
func (r *Region) Raw() bool { return r.Fields == nil && r.Type == Uint8 }

// Label returns the name of value i of the last index, or "".
func (r *Region) Label(i int) string { return r.labels[i] }

// Field returns the named field of a record region, or nil.
func (r *Region) Field(name string) *Field {
	if i, ok := r.field[name]; ok {
		return &r.Fields[i]
	}
	return nil
}

// LabelIndex returns the index of the last dimension with the given label,
// or -1.
func (r *Region) LabelIndex(label string) int {
	for i, l := range r.labels {
		if l == label {
			return i
		}
	}
	return -1
}

// Index turns an element number into its indexes, one per dimension.
func (r *Region) Index(elem int) []int {
	idx := make([]int, len(r.Dims))
	for d := len(r.Dims) - 1; d >= 0; d-- {
		idx[d] = elem % r.Dims[d]
		elem /= r.Dims[d]
	}
	return idx
}

// View says which regions and fields carry the game's notions, so states
// can be shown in the game's terms.
type View struct {
	Players *struct {
		Region     string   `json:"region"`
		Active     string   `json:"active"`
		X          string   `json:"x"`
		Y          string   `json:"y"`
		Health     string   `json:"health"`
		Shape      string   `json:"shape"`
		Color      string   `json:"color"`
		LateInputs string   `json:"late_inputs,omitempty"`
		Controls   []string `json:"controls"`
	} `json:"players,omitempty"`
	Enemies *Things `json:"enemies,omitempty"`
	Items   *Things `json:"items,omitempty"`
	Lifts   *struct {
		Region string `json:"region"`
		Active string `json:"active,omitempty"`
		X      string `json:"x"`
		Y      string `json:"y"`
		Name   string `json:"name"`
	} `json:"lifts,omitempty"`
	Shots []string `json:"shots,omitempty"`
	Level *struct {
		Region   string `json:"region"`
		Block    int    `json:"block"`
		TileMask int    `json:"tile_mask,omitempty"`
	} `json:"level,omitempty"`
}

// Things are enemies or items: a region of ints whose "type" label is 0 when
// the slot is empty, and a region of numbers whose "x" and "y" labels are
// the position.
type Things struct {
	Region string `json:"region"`
	Type   string `json:"type"`
	Pos    string `json:"pos"`
}

// Schema is the layout of a state of one size.
type Schema struct {
	Name     string   `json:"name"`
	Doc      string   `json:"doc,omitempty"`
	Size     int      `json:"size"`
	Versions []string `json:"versions,omitempty"`
	Regions  []Region `json:"regions"`
	View     *View    `json:"view,omitempty"`
	region   map[string]int
}

// RawName is the name of the region that covers bytes no schema names.
const RawName = "raw"

// Region returns the named region, or nil.
func (s *Schema) Region(name string) *Region {
	if i, ok := s.region[name]; ok {
		return &s.Regions[i]
	}
	return nil
}

// Parse reads a schema from its JSON form and checks it: every field has a
// type and a size, and the regions add up to the state size (bytes left
// over become a raw region).
func Parse(data []byte) (*Schema, error) {
	var s Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := s.finish(); err != nil {
		return nil, fmt.Errorf("schema %s: %w", s.Name, err)
	}
	return &s, nil
}

// Load reads a schema file.
func Load(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s *Schema) finish() error {
	if s.Size <= 0 {
		return fmt.Errorf("size %d", s.Size)
	}
	off := 0
	s.region = map[string]int{}
	for i := range s.Regions {
		r := &s.Regions[i]
		if r.Name == "" {
			return fmt.Errorf("region %d has no name", i)
		}
		if _, dup := s.region[r.Name]; dup {
			return fmt.Errorf("two regions named %s", r.Name)
		}
		s.region[r.Name] = i
		if len(r.Dims) == 0 {
			r.Dims = []int{1}
		}
		for _, d := range r.Dims {
			if d <= 0 || d > 1<<24 {
				return fmt.Errorf("region %s: dimension %d", r.Name, d)
			}
		}
		r.field = map[string]int{}
		switch {
		case len(r.Fields) > 0:
			fo := 0
			for j := range r.Fields {
				f := &r.Fields[j]
				if f.Type == Chars {
					if f.Size <= 0 {
						return fmt.Errorf("region %s field %s: chars need a size", r.Name, f.Name)
					}
				} else if f.Size = f.Type.size(); f.Size == 0 {
					return fmt.Errorf("region %s field %s: unknown type %q", r.Name, f.Name, f.Type)
				}
				f.Offset = fo
				fo += f.Size
				r.field[f.Name] = j
			}
			r.Elem = fo
		case r.Type.size() > 0 && r.Type != Chars:
			r.Elem = r.Type.size()
		default:
			return fmt.Errorf("region %s: neither fields nor a number type (%q)", r.Name, r.Type)
		}
		r.labels = map[int]string{}
		for k, v := range r.Labels {
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= r.Dims[len(r.Dims)-1] {
				return fmt.Errorf("region %s: label index %q", r.Name, k)
			}
			r.labels[n] = v
		}
		r.Offset = off
		r.Size = r.Count() * r.Elem
		off += r.Size
	}
	if off > s.Size {
		return fmt.Errorf("regions cover %d bytes, more than the state's %d", off, s.Size)
	}
	if off < s.Size {
		s.Regions = append(s.Regions, Region{Name: RawName, Doc: "bytes no region names", Dims: []int{s.Size - off},
			Type: Uint8, Offset: off, Size: s.Size - off, Elem: 1, labels: map[int]string{}, field: map[string]int{}})
		s.region[RawName] = len(s.Regions) - 1
	}
	return nil
}

//go:embed builtin/*.json
var builtinFS embed.FS

// builtinList holds every built-in schema, in file-name order.
var builtinList = func() []*Schema {
	var out []*Schema
	ents, _ := builtinFS.ReadDir("builtin")
	for _, e := range ents {
		data, _ := builtinFS.ReadFile("builtin/" + e.Name())
		s, err := Parse(data)
		if err != nil {
			panic("built-in " + e.Name() + ": " + err.Error())
		}
		out = append(out, s)
	}
	return out
}()

// builtins is the built-in schema of each size: for a size with several
// (two game versions with the same state size), the first in file-name order.
var builtins = func() map[int]*Schema {
	m := map[int]*Schema{}
	for _, s := range builtinList {
		if _, ok := m[s.Size]; !ok {
			m[s.Size] = s
		}
	}
	return m
}()

// All returns every built-in schema, sorted by name.
func All() []*Schema {
	out := slices.Clone(builtinList)
	slices.SortFunc(out, func(a, b *Schema) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// For returns the schema for a state of the given size: the first of extra
// of that size, else a built-in one (for a size two versions share, the
// first in file-name order: pass the version to ForVersion), else a schema
// of one raw region.
func For(size int, extra ...*Schema) *Schema { return ForVersion("", size, extra...) }

// ForVersion returns the schema for a state of the given size of the named
// game version (decode.Version's name): the first of extra of that size,
// else the built-in one of that size that names the version, else one of
// that size (For), else a schema of one raw region.
func ForVersion(version string, size int, extra ...*Schema) *Schema {
	for _, s := range extra {
		if s != nil && s.Size == size {
			return s
		}
	}
	if version != "" {
		for _, s := range builtinList {
			if s.Size == size && slices.Contains(s.Versions, version) {
				return s
			}
		}
	}
	if s, ok := builtins[size]; ok {
		return s
	}
	s := &Schema{Name: fmt.Sprintf("raw-%d", size), Doc: "no schema knows this state size", Size: size}
	s.finish()
	return s
}

// Value reads one number (or text) of a state.
func Value(state []byte, off int, t Type, size int) (float64, string) {
	if off < 0 || off+max(size, t.size()) > len(state) {
		return math.NaN(), ""
	}
	switch t {
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(state[off:]))), ""
	case Uint8:
		return float64(state[off]), ""
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(state[off:]))), ""
	case Fixed16:
		return float64(int32(binary.LittleEndian.Uint32(state[off:]))) / 65536, ""
	case Chars:
		b := state[off : off+size]
		n := 0
		for n < len(b) && b[n] != 0 {
			n++
		}
		return 0, string(b[:n])
	}
	return math.NaN(), ""
}

// Get reads field name of element elem of region r.
func (s *Schema) Get(state []byte, region string, elem int, name string) (float64, bool) {
	r := s.Region(region)
	if r == nil {
		return 0, false
	}
	if f := r.Field(name); f != nil && elem < r.Count() {
		v, _ := Value(state, r.Offset+elem*r.Elem+f.Offset, f.Type, f.Size)
		return v, true
	}
	return 0, false
}

// GetLabel reads value label of row row of a number region (the last index
// being the label's).
func (s *Schema) GetLabel(state []byte, region string, row int, label string) (float64, bool) {
	r := s.Region(region)
	if r == nil || r.Fields != nil {
		return 0, false
	}
	k := r.LabelIndex(label)
	if k < 0 {
		return 0, false
	}
	last := r.Dims[len(r.Dims)-1]
	if row < 0 || row >= r.Count()/last {
		return 0, false
	}
	v, _ := Value(state, r.Offset+(row*last+k)*r.Elem, r.Type, r.Elem)
	return v, true
}
