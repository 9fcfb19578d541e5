package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
)

// timelineView is view 2: the clients, the scrubber over the states of the
// one shown and the sparklines of its whole game, the cursor's second
// marked.
type timelineView struct {
	cur *stateCursor
}

func (v *timelineView) update(c *env, msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		cmd, _ := v.cur.onKey(c, k)
		return cmd
	}
	return v.cur.onMouse(c, msg)
}

func (v *timelineView) fit(*env) {}

func (v *timelineView) help(k *keyMap) []group { return []group{k.scrubKeys()} }

func (v *timelineView) render(c *env) []string {
	s, r := v.cur, c.lay.body
	out := s.header(c, r.w)
	out = append(out, clientList(c, s, r.w), "")
	h := healthOf(c.health, s.line().Conv)
	if h == nil {
		return append(out, c.st.dim.Render("no health figures for this client yet"))
	}
	first := c.first
	cw := max(r.w-healthLabel-22, 10)
	sec := int(s.ent.Time().Sub(first).Seconds())
	k := secondIndex(h, sec)
	marker := []rune(strings.Repeat(" ", cw))
	if col := column(k, len(h.Seconds), cw); col >= 0 && col < cw {
		marker[col] = '▼'
	}
	out = append(out, fit("", healthLabel)+string(marker))
	if row, ok := findingMarkers(c, h, cw); ok {
		out = append(out, row)
	}
	for _, se := range timelineSeries {
		vals := se.get(h)
		cur := "-"
		if k >= 0 && k < len(vals) && vals[k] == vals[k] {
			cur = gameview.Num(math.Round(vals[k]*10) / 10)
		}
		line := fit(se.name, healthLabel) + sparkline(vals, cw) + " " + fit(cur, 8) + c.st.dim.Render(fit("max "+gameview.Num(math.Round(maxOf(vals)*10)/10), 12)) // as cur
		if h.Partial && soFar[se.name] {
			line += c.st.dim.Render("so far")
		}
		out = append(out, line)
	}
	out = append(out, "", c.st.dim.Render(fmt.Sprintf("whole game, %d s per column at most; ▼ this state's second (t=%d s)", (len(h.Seconds)+cw-1)/cw, sec)))
	return out
}

// secondIndex is the index of second sec in a health series (the last at
// or before it).
func secondIndex(h *engine.ClientHealth, sec int) int {
	return sort.Search(len(h.Seconds), func(i int) bool { return h.Seconds[i].T > sec }) - 1
}

// clientList is the line naming the clients c and C go through, the one
// shown selected (see windowList).
func clientList(c *env, s *stateCursor, w int) string {
	items := make([]string, len(s.lines))
	for i, l := range s.lines {
		items[i] = fmt.Sprintf(" %d %s ", l.Conv, l.Client)
	}
	return windowList(c, "clients (c/C):", items, s.li, w)
}

// windowList is head and the items, item sel selected: as many as fit in
// w columns around it, with … for those left out on either side.
func windowList(c *env, head string, items []string, sel, w int) string {
	if len(items) == 0 {
		return head
	}
	sel = clamp(sel, 0, len(items)-1)
	lo, hi := sel, sel+1                        // the items shown: [lo, hi)
	room := w - len(head) - len(items[sel]) - 2 // the … on either side
	for grew := true; grew; {
		grew = false
		if hi < len(items) && len(items[hi]) <= room {
			room -= len(items[hi])
			hi, grew = hi+1, true
		}
		if lo > 0 && len(items[lo-1]) <= room {
			room -= len(items[lo-1])
			lo, grew = lo-1, true
		}
	}
	var b strings.Builder
	b.WriteString(head)
	if lo > 0 {
		b.WriteString("…")
	}
	for i := lo; i < hi; i++ {
		if i == sel {
			b.WriteString(c.st.selected.Render(items[i]))
		} else {
			b.WriteString(items[i])
		}
	}
	if hi < len(items) {
		b.WriteString("…")
	}
	return b.String()
}
