package levelmap

import "github.com/pmdump/pmdump/schema"

// Changed marks the blocks of the map that changes between two states
// touch, for a diff to highlight on the map: a block of the level whose
// value changed, and the block where a player, enemy or item whose record
// changed stands in the state the map was read from. It sets marks (one per
// cell, Cells' order; allocated when nil) and returns them; nil when the
// schema names no level. Changes to other regions mark nothing.
func (m *Map) Changed(marks []bool, s *schema.Schema, ch []schema.Change) []bool {
	if s == nil || s.View == nil || s.View.Level == nil {
		return marks
	}
	if marks == nil {
		marks = make([]bool, len(m.Cells))
	}
	v := s.View
	// the regions of the things drawn over the level
	thing := map[string]Thing{}
	if v.Players != nil {
		thing[v.Players.Region] = Player
	}
	for _, t := range []struct {
		th *schema.Things
		k  Thing
	}{{v.Enemies, Enemy}, {v.Items, Item}} {
		if t.th != nil {
			thing[t.th.Region], thing[t.th.Pos] = t.k, t.k
		}
	}
	for _, c := range ch {
		if k, ok := thing[c.Region]; ok && len(c.Index) > 0 {
			for _, a := range m.Actors {
				if a.Thing == k && a.Index == c.Index[0] {
					m.mark(marks, a.X, a.Y)
				}
			}
		}
		if c.Region == v.Level.Region && len(c.Index) == 2 {
			m.mark(marks, c.Index[0], c.Index[1])
		}
	}
	return marks
}

// mark sets the mark of block (x, y) when it is on the map.
func (m *Map) mark(marks []bool, x, y int) {
	if x >= 0 && y >= 0 && x < m.W && y < m.H {
		marks[y*m.W+x] = true
	}
}
