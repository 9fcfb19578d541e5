package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// helpModel is the help overlay: every binding, under the views it works
// in (the groups of the views' keys), laid out in as many columns as the
// body needs when they are wide enough to read, else in one column that
// scrolls.
type helpModel struct {
	groups []group
	scroll int
}

func (h *helpModel) update(c *env, msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	keys := &c.keys
	switch {
	case key.Matches(k, keys.Up):
		h.scroll--
	case key.Matches(k, keys.Down):
		h.scroll++
	case key.Matches(k, keys.PageUp):
		h.scroll -= 10
	case key.Matches(k, keys.PageDown):
		h.scroll += 10
	}
	return nil
}

// lines is the help's text, a line a binding.
func (h *helpModel) lines(c *env) []string {
	var lines []string
	lines = append(lines, c.st.title.Render("pmdump tui: keys")+c.st.dim.Render("  (esc or ? closes)"))
	for _, g := range h.groups {
		lines = append(lines, "", c.st.header.Render(g.title))
		for _, b := range g.keys {
			hb := b.Help()
			lines = append(lines, "  "+c.st.key.Render(fit(hb.Key, 13))+" "+hb.Desc)
		}
	}
	return append(lines, "", "Mouse: the wheel scrolls; a click picks a tab, a packet,", "a place on the scrubber, a second of the health charts.")
}

// columns is how many columns the help is laid out in, 0 when it scrolls
// in one.
func (h *helpModel) columns(r rect, n int) int {
	if n <= r.h {
		return 1
	}
	cols := (n + r.h - 1) / r.h
	if r.w/cols >= helpColumn {
		return cols
	}
	return 0
}

// fit keeps the scroll of a help in one column within its lines.
func (h *helpModel) fit(c *env) {
	r := c.lay.body
	n := len(h.lines(c))
	if h.columns(r, n) == 0 {
		h.scroll = clamp(h.scroll, 0, n-(r.h-1))
	}
}

func (h *helpModel) render(c *env) []string {
	r := c.lay.body
	lines := h.lines(c)
	switch cols := h.columns(r, len(lines)); cols {
	case 1:
		return lines
	case 0:
		page := r.h - 1
		scroll := clamp(h.scroll, 0, len(lines)-page)
		out := append([]string(nil), lines[scroll:scroll+page]...)
		return append(out, c.st.dim.Render(fmt.Sprintf("↑↓ pgup pgdn scroll · lines %d-%d of %d", scroll+1, scroll+page, len(lines))))
	default:
		colW := 0
		for _, l := range lines {
			colW = max(colW, len([]rune(stripped(l))))
		}
		colW = min(colW+2, r.w/cols)
		out := make([]string, r.h)
		for col := 0; col < cols; col++ {
			for i := 0; i < r.h; i++ {
				k := col*r.h + i
				if k >= len(lines) {
					break
				}
				out[i] += fit(lines[k], colW)
			}
		}
		return out
	}
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
