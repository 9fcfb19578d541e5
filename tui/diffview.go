package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// renderDiff draws the diff beside the map with the changed blocks
// highlighted.
func (s *stateCursor) renderDiff(m *Model, r rect) []string {
	out := s.header(m, r.w)
	l := m.layout()
	ld := s.loaded
	var left, right []string
	switch {
	case ld == nil || !ld.key.diff || ld.key.line != s.line() || ld.key.i != s.i:
		left = []string{m.st.dim.Render("comparing…")}
	case ld.err != nil:
		left = []string{m.st.err.Render(ld.err.Error())}
	default:
		// Long lines (paths, errors) wrap rather than lose their ends.
		var d []string
		for _, line := range ld.diff {
			d = append(d, strings.Split(ansi.Wrap(line, l.text.w, " "), "\n")...)
		}
		s.diffScroll = clamp(s.diffScroll, 0, max(len(d)-l.text.h, 0))
		left = d[s.diffScroll:]
		right = s.mapLines(m, ld, ld.changed, l.level)
	}
	return append(out, s.panes(m, l, left, right)...)
}
