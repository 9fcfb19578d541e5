package tui

import (
	"fmt"
	"strings"
)

// renderHelp is the help overlay, made from the key map: every binding,
// under the views it works in.
func (m *Model) renderHelp(r rect) []string {
	var lines []string
	lines = append(lines, m.st.title.Render("pmdump tui: keys")+m.st.dim.Render("  (esc or ? closes)"))
	for _, g := range m.keys.groups() {
		lines = append(lines, "", m.st.header.Render(g.title))
		for _, b := range g.keys {
			h := b.Help()
			lines = append(lines, "  "+m.st.key.Render(fit(h.Key, 13))+" "+h.Desc)
		}
	}
	lines = append(lines, "", "Mouse: the wheel scrolls; a click picks a tab, a packet,", "a place on the scrubber, a second of the health charts.")
	// Lay the lines out in as many columns as the body needs, when they
	// are wide enough to read; else one column that scrolls.
	if len(lines) <= r.h {
		return lines
	}
	colW := 0
	for _, l := range lines {
		colW = max(colW, len([]rune(stripped(l))))
	}
	cols := (len(lines) + r.h - 1) / r.h
	if r.w/cols >= helpColumn {
		colW = min(colW+2, r.w/cols)
		out := make([]string, r.h)
		for c := 0; c < cols; c++ {
			for i := 0; i < r.h; i++ {
				k := c*r.h + i
				if k >= len(lines) {
					break
				}
				out[i] += fit(lines[k], colW)
			}
		}
		return out
	}
	page := r.h - 1
	m.helpScroll = clamp(m.helpScroll, 0, len(lines)-page)
	out := append([]string(nil), lines[m.helpScroll:m.helpScroll+page]...)
	return append(out, m.st.dim.Render(fmt.Sprintf("↑↓ pgup pgdn scroll · lines %d-%d of %d", m.helpScroll+1, m.helpScroll+page, len(lines))))
}

// helpColumn is the narrowest column of the help in several columns.
const helpColumn = 58

// stripped is a line without its styles.
func stripped(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == 0x1b:
			in = true
		case in && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
