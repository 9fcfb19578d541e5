package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
)

// renderTimeline draws the clients, the scrubber and the sparklines of
// the client's whole game with the position marked.
func (s *stateCursor) renderTimeline(m *Model, r rect) []string {
	out := s.header(m, r.w)
	var cl strings.Builder
	cl.WriteString("clients (c/C):")
	for i, l := range s.lines {
		t := fmt.Sprintf(" %d %s ", l.Conv, l.Client)
		if i == s.li {
			t = m.st.selected.Render(t)
		}
		cl.WriteString(t)
	}
	out = append(out, cl.String(), "")
	h := m.health.of(s.line().Conv)
	if h == nil {
		return append(out, m.st.dim.Render("no health figures for this client yet"))
	}
	first := m.first
	cw := max(r.w-healthLabel-22, 10)
	sec := int(s.ent.Time().Sub(first).Seconds())
	k := secondIndex(h, sec)
	marker := []rune(strings.Repeat(" ", cw))
	if c := column(k, len(h.Seconds), cw); c >= 0 && c < cw {
		marker[c] = '▼'
	}
	out = append(out, fit("", healthLabel)+string(marker))
	if row, ok := m.finds.markers(m, h, cw); ok {
		out = append(out, row)
	}
	for _, se := range timelineSeries {
		vals := se.get(h)
		cur := "-"
		if k >= 0 && k < len(vals) && vals[k] == vals[k] {
			cur = gameview.Num(math.Round(vals[k]*10) / 10)
		}
		line := fit(se.name, healthLabel) + sparkline(vals, cw) + " " + fit(cur, 8) + m.st.dim.Render(fit("max "+gameview.Num(math.Round(maxOf(vals))), 12))
		out = append(out, line)
	}
	out = append(out, "", m.st.dim.Render(fmt.Sprintf("whole game, %d s per column at most; ▼ this state's second (t=%d s)", (len(h.Seconds)+cw-1)/cw, sec)))
	return out
}

// secondIndex is the index of second sec in a health series (the last at
// or before it).
func secondIndex(h *engine.ClientHealth, sec int) int {
	return sort.Search(len(h.Seconds), func(i int) bool { return h.Seconds[i].T > sec }) - 1
}
