package filter

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/pmdump/pmdump/decode"
)

// Names returns every name a filter can use (packet names, fields and the
// fixed names such as type, dir and conv), sorted and each once, for a
// front end to complete what a user types.
func Names() []string {
	seen := make(map[string]bool, len(envNames))
	out := make([]string, 0, len(envNames))
	for _, n := range envNames {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// fieldPackets maps each decoded field's name (and its _raw and _len
// forms) to the packets that have it, in table order, each once.
var fieldPackets = func() map[string][]string {
	m := map[string][]string{}
	add := func(name, packet string) {
		for _, p := range m[name] {
			if p == packet {
				return
			}
		}
		m[name] = append(m[name], packet)
	}
	for _, e := range decode.Versions() {
		for _, l := range e.Layouts() {
			for _, f := range l.Fields {
				for _, n := range []string{f.Name, f.Name + "_raw", f.Name + "_len"} {
					add(n, l.Name)
				}
			}
		}
	}
	return m
}()

// Hint says, for a filter that matched no packet, which of the names it
// uses are fields that only some packets have, and which packets those
// are: a filter on n, sdat's entry count, may have meant num, the frame
// number. It is empty when the filter uses no such name.
func (f *Filter) Hint() string {
	var uses usesName
	tree, err := parser.Parse(f.src)
	if err != nil {
		return ""
	}
	ast.Walk(&tree.Node, &uses)
	fixed := map[string]bool{}
	for _, n := range fixedNames {
		fixed[n] = true
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(uses)) {
		ps, ok := fieldPackets[n]
		if !ok || fixed[n] {
			continue
		}
		s := fmt.Sprintf("%s is a field of %s only", n, strings.Join(ps, ", "))
		if len(ps) > 1 {
			s = fmt.Sprintf("%s is a field of %s", n, strings.Join(ps, ", "))
		}
		if n == "n" {
			s += " (the frame number in the capture is num)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
