package main

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// regionAnatomy is what one region contributes to a dif.
type regionAnatomy struct {
	Region string         `json:"region"`
	Bytes  int            `json:"bytes"`  // bytes that differ
	Values int            `json:"values"` // values (fields, array elements) that differ
	Fields map[string]int `json:"fields"` // changed values per field name ("[k]" for unnamed array columns)
}

// anatomy says which regions and fields a dif changes: the non-zero bytes
// of dif = base − new are exactly the bytes that changed.
func anatomy(sch *schema.Schema, dif []byte) []regionAnatomy {
	if len(zeros) < len(dif) {
		return nil
	}
	changes, err := schema.Diff(sch, zeros[:len(dif)], dif)
	if err != nil {
		return nil
	}
	var out []regionAnatomy
	for _, rc := range schema.Count(sch, changes) {
		out = append(out, regionAnatomy{Region: rc.Region, Bytes: rc.Bytes, Values: rc.Changes, Fields: map[string]int{}})
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
var zeros = make([]byte, 1<<20)

// explainer computes the anatomy of every rebuilt dif.
func explainer(user *schema.Schema) func(s *replay.State, dif, state []byte) {
	return func(s *replay.State, dif, _ []byte) {
		s.Extra = anatomy(schema.For(len(dif), user), dif)
	}
}

// appendAnatomy appends the anatomy as indented text lines, the most
// changed fields of each region first.
func appendAnatomy(b []byte, an []regionAnatomy) []byte {
	for _, r := range an {
		b = fmt.Appendf(b, "        %-6s %6d B %5d values:", r.Region, r.Bytes, r.Values)
		type fc struct {
			name string
			n    int
		}
		var fs []fc
		for n, c := range r.Fields {
			fs = append(fs, fc{n, c})
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].n > fs[j].n || fs[i].n == fs[j].n && fs[i].name < fs[j].name })
		for i, f := range fs {
			if i == 8 {
				b = fmt.Appendf(b, " …+%d fields", len(fs)-8)
				break
			}
			b = fmt.Appendf(b, " %s %d", f.name, f.n)
		}
		b = append(b, '\n')
	}
	return b
}
