package engine

import (
	"strconv"

	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// RegionAnatomy is what one region of the state contributes to a dif.
type RegionAnatomy struct {
	Region string         `json:"region"`
	Bytes  int            `json:"bytes"`  // bytes that differ
	Values int            `json:"values"` // values (fields, array elements) that differ
	Fields map[string]int `json:"fields"` // changed values per field name ("[k]" for unnamed array columns)
}

// Anatomy says which regions and fields a dif changes: the non-zero bytes
// of dif = base − new are exactly the bytes that changed.
func Anatomy(sch *schema.Schema, dif []byte) []RegionAnatomy {
	if len(zeros) < len(dif) {
		return nil
	}
	changes, err := schema.Diff(sch, zeros[:len(dif)], dif)
	if err != nil {
		return nil
	}
	var out []RegionAnatomy
	for _, rc := range schema.Count(sch, changes) {
		out = append(out, RegionAnatomy{Region: rc.Region, Bytes: rc.Bytes, Values: rc.Changes, Fields: map[string]int{}})
	}
	k := 0
	for _, c := range changes {
		for out[k].Region != c.Region {
			k++
		}
		name := c.Field
		if name == "" {
			name = "[" + strconv.Itoa(c.Index[len(c.Index)-1]) + "]"
			if len(c.Index) == 1 {
				name = "[]"
			}
		}
		out[k].Fields[name]++
	}
	return out
}

// zeros is a read-only all-zero state, shared by the rebuilding goroutines.
var zeros = make([]byte, replay.MaxStateSize)

// Explainer returns a Config.Inspect that sets each rebuilt state's Extra to
// its dif's anatomy ([]RegionAnatomy), by the state's schema (user for a
// size the built-in ones do not know).
func Explainer(user *schema.Schema) func(s *replay.State, dif, state []byte) {
	return func(s *replay.State, dif, _ []byte) {
		s.Extra = Anatomy(schema.For(len(dif), user), dif)
	}
}
