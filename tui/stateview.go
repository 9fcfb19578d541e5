package tui

import "github.com/pmdump/pmdump/levelmap"

// renderState draws the state in the game's terms beside the level map.
func (s *stateCursor) renderState(m *Model, r rect) []string {
	out := s.header(m, r.w)
	l := m.layout()
	var left, right []string
	ld := s.loaded
	if ld == nil || ld.key.line != s.line() || ld.key.i != s.i {
		left = []string{m.st.dim.Render("rebuilding the state…")}
	}
	if ld != nil && ld.err != nil {
		left = []string{m.st.err.Render(ld.err.Error())}
	} else if ld != nil {
		if left == nil {
			left = ld.text
		}
		right = s.mapLines(m, ld, nil, l.level)
	}
	return append(out, s.panes(m, l, left, right)...)
}

// mapLines draws the loaded state's map centred on the client's player.
func (s *stateCursor) mapLines(m *Model, ld *stateMsg, changed []bool, r rect) []string {
	if ld.lmap == nil {
		return []string{m.st.dim.Render("no level map: the schema " + ld.sch.Name + " names no level")}
	}
	cx, cy := 50, 50
	for _, a := range ld.lmap.Actors {
		if a.Thing == levelmap.Player && a.Index == int(ld.ent.Player) {
			cx, cy = a.X, a.Y
		}
	}
	// Panned (ctrl+arrows) as far as the level goes: the view's centre
	// stays where the view shows only the level, and a pan starts from
	// where the view is, so every press that can move it does.
	per := 1
	if m.opts.Color {
		per = 2 // two blocks a cell, one above the other
	}
	centre := func(c, size, view int) int {
		lo := view / 2
		return clamp(c, lo, max(lo, size-view+view/2))
	}
	s.playerX, s.playerY = cx, cy
	s.viewX, s.viewY = centre(cx+s.panX, ld.lmap.W, r.w), centre(cy+s.panY, ld.lmap.H, r.h*per)
	return renderMap(ld.lmap, changed, r.w, r.h, s.viewX, s.viewY, m.opts.Color)
}

// panes puts the text and the map side by side, or one of them (M) in a
// narrow window.
func (s *stateCursor) panes(m *Model, l layout, left, right []string) []string {
	var out []string
	for i := 0; i < l.text.h; i++ {
		var a, b string
		if i < len(left) {
			a = left[i]
		}
		if i < len(right) {
			b = right[i]
		}
		switch {
		case l.wide:
			out = append(out, fit(a, l.text.w)+" "+b)
		case s.mapOnly:
			out = append(out, b)
		default:
			out = append(out, a)
		}
	}
	return out
}
