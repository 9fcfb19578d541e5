package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
	"github.com/pmdump/pmdump/levelmap"
)

// panes are the text and map panes of the state and diff views, which
// share what the user made of them: the map alone (M), the map's pan and
// the diff's scroll.
type panes struct {
	mapOnly    bool
	panX, panY int // the map's view moved from the player by this many blocks
	// the centre of the map shown, and the player's block it is drawn
	// for: a pan starts from where the view is
	viewX, viewY, playerX, playerY int
	scroll                         int // the diff's first line shown
}

// update handles what the state and diff views share: the scrubber's
// keys, the panes' keys, the mouse on the scrubber; it says whether the
// message was one of them.
func (p *panes) update(c *env, msg tea.Msg) (tea.Cmd, bool) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return c.cursor.onMouse(c, msg), true
	}
	if cmd, ok := c.cursor.onKey(c, k); ok {
		return cmd, true
	}
	return p.onKey(c, k)
}

// onKey handles the keys of the state and diff views (the map, A and B);
// it says whether the key was one of them.
func (p *panes) onKey(c *env, k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := &c.keys
	switch {
	case key.Matches(k, keys.MapOnly):
		p.mapOnly = !p.mapOnly
	case key.Matches(k, keys.PanLeft):
		p.panX = p.viewX - p.playerX - 20
	case key.Matches(k, keys.PanRight):
		p.panX = p.viewX - p.playerX + 20
	case key.Matches(k, keys.PanUp):
		p.panY = p.viewY - p.playerY - 20
	case key.Matches(k, keys.PanDown):
		p.panY = p.viewY - p.playerY + 20
	case key.Matches(k, keys.PanHome):
		p.panX, p.panY = 0, 0
	case key.Matches(k, keys.MarkA):
		return c.cursor.setA(c), true
	case key.Matches(k, keys.AcrossClients):
		p.scroll = 0
		return c.cursor.toggleAcross(c), true
	default:
		return nil, false
	}
	return nil, true
}

// fitMap centres the map of a loaded state on the client's player, moved
// by the pan as far as the level goes: the view's centre stays where the
// view shows only the level, so every pan that can move it does.
func (p *panes) fitMap(c *env, ld *stateMsg) {
	if ld.lmap == nil {
		return
	}
	cx, cy := 50, 50
	for _, a := range ld.lmap.Actors {
		if a.Thing == levelmap.Player && a.Index == int(ld.ent.Player) {
			cx, cy = a.X, a.Y
		}
	}
	per := 1
	if c.color {
		per = 2 // two blocks a cell, one above the other
	}
	centre := func(c, size, view int) int {
		lo := view / 2
		return clamp(c, lo, max(lo, size-view+view/2))
	}
	r := c.lay.level
	p.playerX, p.playerY = cx, cy
	p.viewX, p.viewY = centre(cx+p.panX, ld.lmap.W, r.w), centre(cy+p.panY, ld.lmap.H, r.h*per)
}

// mapLines draws the loaded state's map where fitMap centred it.
func (p *panes) mapLines(c *env, ld *stateMsg, changed []bool) []string {
	if ld.lmap == nil {
		return []string{c.st.dim.Render("no level map: the schema " + ld.sch.Name + " names no level")}
	}
	r := c.lay.level
	return renderMap(ld.lmap, changed, r.w, r.h, p.viewX, p.viewY, c.color)
}

// errLines is an error as the text pane shows it: wrapped to its width,
// since an explanation is read whole.
func errLines(c *env, err error) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wrap(err.Error(), max(c.lay.text.w, 1), " "), "\n") {
		out = append(out, c.st.err.Render(l))
	}
	return out
}

// join puts the text and the map side by side, or one of them (M) in a
// narrow window (the text when there is no map).
func (p *panes) join(c *env, left, right []string) []string {
	l := c.lay
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
		case p.mapOnly && len(right) > 0:
			out = append(out, b)
		default:
			out = append(out, a)
		}
	}
	return out
}
