package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// diffView is view 4: the diff from state A to the cursor's state, or
// between every client at its frame, beside the map with the changed
// blocks highlighted.
type diffView struct {
	cur  *stateCursor
	pane *panes
	// the diff's lines wrapped to the text pane, and what they were
	// wrapped from
	wrapped []string
	from    *stateMsg
	width   int
}

func (v *diffView) update(c *env, msg tea.Msg) tea.Cmd {
	if cmd, ok := v.pane.update(c, msg); ok {
		return cmd
	}
	k, _ := msg.(tea.KeyPressMsg)
	p, keys := v.pane, &c.keys
	switch {
	case key.Matches(k, keys.Up):
		p.scroll = max(p.scroll-1, 0)
	case key.Matches(k, keys.Down):
		p.scroll++
	case key.Matches(k, keys.PageUp):
		p.scroll = max(p.scroll-10, 0)
	case key.Matches(k, keys.PageDown):
		p.scroll += 10
	}
	return nil
}

func (v *diffView) help(k *keyMap) []group {
	return []group{k.scrubKeys(), k.paneKeys(), k.diffKeys()}
}

// shown is the loaded diff when it is the one the cursor is on, else nil.
func (v *diffView) shown() *stateMsg {
	s := v.cur
	if ld := s.loaded; ld != nil && ld.key.diff && ld.key.line == s.line() && ld.key.i == s.i {
		return ld
	}
	return nil
}

// fit wraps the diff's long lines (paths, errors) to the text pane rather
// than lose their ends, keeps the scroll within them, and centres the map.
func (v *diffView) fit(c *env) {
	ld := v.shown()
	if ld == nil || ld.err != nil {
		return
	}
	if ld != v.from || c.lay.text.w != v.width {
		v.wrapped = v.wrapped[:0]
		for _, line := range ld.diff {
			v.wrapped = append(v.wrapped, strings.Split(ansi.Wrap(line, c.lay.text.w, " "), "\n")...)
		}
		v.from, v.width = ld, c.lay.text.w
	}
	v.pane.scroll = clamp(v.pane.scroll, 0, max(len(v.wrapped)-c.lay.text.h, 0))
	v.pane.fitMap(c, ld)
}

func (v *diffView) render(c *env) []string {
	out := v.cur.header(c, c.lay.body.w)
	if v.cur.awaitingOther() {
		return out // another client's diff would be shown
	}
	ld := v.shown()
	var left, right []string
	switch {
	case ld == nil:
		left = []string{c.st.dim.Render("comparing…")}
	case ld.err != nil:
		left = errLines(c, ld.err)
	case ld != v.from || c.lay.text.w != v.width:
		left = []string{c.st.dim.Render("comparing…")} // not fitted yet
	default:
		left = v.wrapped[min(v.pane.scroll, len(v.wrapped)):]
		right = v.pane.mapLines(c, ld, ld.changed)
	}
	return append(out, v.pane.join(c, left, right)...)
}
