package main

import (
	"fmt"
	"sort"

	"github.com/pmdump/pmdump/engine"
)

// appendAnatomy appends the anatomy as indented text lines, the most
// changed fields of each region first.
func appendAnatomy(b []byte, an []engine.RegionAnatomy) []byte {
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
