package tui

import (
	tea "charm.land/bubbletea/v2"
)

// stateView is view 3: the state at the cursor in the game's terms
// beside the level map.
type stateView struct {
	cur  *stateCursor
	pane *panes
}

func (v *stateView) update(c *env, msg tea.Msg) tea.Cmd {
	cmd, _ := v.pane.update(c, msg)
	return cmd
}

func (v *stateView) fit(c *env) {
	if ld := v.cur.loaded; ld != nil && ld.err == nil {
		v.pane.fitMap(c, ld)
	}
}

func (v *stateView) help(k *keyMap) []group { return []group{k.scrubKeys(), k.paneKeys()} }

func (v *stateView) render(c *env) []string {
	s := v.cur
	out := s.header(c, c.lay.body.w)
	if s.awaitingOther() {
		return out // another client's state would be shown
	}
	var left, right []string
	ld := s.loaded
	if ld == nil || ld.key.line != s.line() || ld.key.i != s.i {
		left = []string{c.st.dim.Render("rebuilding the state…")}
	}
	if ld != nil && ld.err != nil {
		left = errLines(c, ld.err)
	} else if ld != nil {
		if left == nil {
			left = ld.text
		}
		right = v.pane.mapLines(c, ld, nil)
	}
	return append(out, v.pane.join(c, left, right)...)
}
