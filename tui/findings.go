package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
)

// findingsModel is view 6: the engine's findings (env.finds), the worst
// first; enter jumps to the finding's first frame in the packet list and
// to its state in the timeline.
type findingsModel struct {
	cur, top int
	chosen   bool // the user moved the cursor: a refresh keeps its finding
}

// refresh takes the findings found so far, keeping the selected one.
func (f *findingsModel) refresh(c *env, fs []engine.Finding) {
	var sel engine.Finding
	had := f.chosen && f.cur < len(c.finds)
	if had {
		sel = c.finds[f.cur]
	}
	c.finds = fs
	if had {
		for i, x := range fs {
			if x.Kind == sel.Kind && x.Conv == sel.Conv && x.Start.Equal(sel.Start) {
				f.cur = i
			}
		}
	}
	f.cur = clamp(f.cur, 0, max(len(fs)-1, 0))
}

func (f *findingsModel) update(c *env, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		f.chosen = true
		f.cur = clamp(f.cur+wheelStep(msg, 1), 0, max(len(c.finds)-1, 0))
	case tea.KeyPressMsg:
		return f.onKey(c, msg)
	}
	return nil
}

func (f *findingsModel) onKey(c *env, k tea.KeyPressMsg) tea.Cmd {
	keys := &c.keys
	page := max(c.lay.body.h/2-1, 1)
	f.chosen = true
	switch {
	case key.Matches(k, keys.Up):
		f.cur--
	case key.Matches(k, keys.Down):
		f.cur++
	case key.Matches(k, keys.PageUp):
		f.cur -= page
	case key.Matches(k, keys.PageDown):
		f.cur += page
	case key.Matches(k, keys.Top):
		f.cur = 0
	case key.Matches(k, keys.Bottom):
		f.cur = len(c.finds) - 1
	case key.Matches(k, keys.JumpFinding):
		return f.jump(c)
	}
	f.cur = clamp(f.cur, 0, max(len(c.finds)-1, 0))
	return nil
}

func (f *findingsModel) help(k *keyMap) []group { return []group{k.findingKeys()} }

// rows is how many findings the view shows: two lines a finding, under
// the count.
func (f *findingsModel) rows(c *env) int { return max((c.lay.body.h-1)/2, 1) }

// fit keeps the selected finding in sight.
func (f *findingsModel) fit(c *env) {
	rows := f.rows(c)
	if f.cur < f.top {
		f.top = f.cur
	}
	if f.cur >= f.top+rows {
		f.top = f.cur - rows + 1
	}
}

// jump selects the finding's first frame in the packet list and its state
// (or the state at its start) in the timeline, and shows the packet list.
func (f *findingsModel) jump(c *env) tea.Cmd {
	if f.cur >= len(c.finds) {
		return nil
	}
	fd := c.finds[f.cur]
	cleared := false
	if n := fd.Evidence.First; n > 0 {
		cleared = c.nav.selectPacket(n)
	}
	s := c.cursor
	if li := s.lineOf(fd.Conv); li >= 0 && fd.Conv > 0 {
		s.toLine(c, li)
		i := -1
		if len(fd.Evidence.States) > 0 {
			st := fd.Evidence.States[0]
			i = c.e.Find(s.line(), st.SLSN, st.Frame, false)
		} else if len(fd.Evidence.Frames) > 0 {
			fr := fd.Evidence.Frames[0]
			i = c.e.Find(s.line(), fr.SLSN, fr.From, false)
		}
		if i < 0 && !fd.Start.IsZero() {
			i = min(s.atTime(c, fd.Start), s.n-1)
		}
		s.setI(c, i)
	}
	cmd := c.nav.show(viewPackets)
	if fd.Evidence.First > 0 {
		hidden := ""
		if cleared {
			hidden = " (the display filter hid it: cleared)"
		}
		c.setMsg("finding %s: packet %d%s; 2 shows its state in the timeline", fd.Kind, fd.Evidence.First, hidden)
	}
	return cmd
}

func (f *findingsModel) render(c *env) []string {
	r := c.lay.body
	if len(c.finds) == 0 {
		switch {
		case !c.read:
			return []string{c.st.dim.Render("no findings yet (the capture is still being read)")}
		case !c.done:
			return []string{c.st.dim.Render("no findings so far (those that need every state come when the rebuild ends)")}
		}
		return []string{c.st.dim.Render("no findings")}
	}
	errs, warns := 0, 0
	for _, x := range c.finds {
		switch x.Severity {
		case engine.SeverityError:
			errs++
		case engine.SeverityWarning:
			warns++
		}
	}
	soFar := ""
	if !c.done {
		soFar = " so far (those that need every state come when the rebuild ends)"
	}
	out := []string{c.st.dim.Render(fmt.Sprintf("%d findings%s: %d errors, %d warnings, %d info · ↑↓ select, enter: its first packet and its state", len(c.finds), soFar, errs, warns, len(c.finds)-errs-warns))}
	// Two lines a finding: what, and where to look.
	rows := f.rows(c)
	for i := f.top; i < len(c.finds) && i < f.top+rows; i++ {
		x := &c.finds[i]
		when := "-"
		if !x.Start.IsZero() && !c.first.IsZero() {
			when = fmt.Sprintf("%.1f s", x.Start.Sub(c.first).Seconds())
			if d := x.End.Sub(x.Start); d >= 500*time.Millisecond {
				when = fmt.Sprintf("%.1f–%.1f s", x.Start.Sub(c.first).Seconds(), x.End.Sub(c.first).Seconds())
			}
		}
		sev := x.Severity.String()
		switch {
		case i == f.cur: // the selection's style, whole
		case x.Severity == engine.SeverityError:
			sev = c.st.err.Render(sev)
		case x.Severity == engine.SeverityWarning:
			sev = c.st.warn.Render(sev)
		}
		head := fmt.Sprintf("%-7s %-14s %s", sev, when, x.Kind)
		if x.Conv > 0 {
			head += fmt.Sprintf(" (conv %d)", x.Conv)
		}
		where := fmt.Sprintf("    %s", x.Summary)
		switch {
		case x.Evidence.First > 0 && x.Evidence.Last > x.Evidence.First:
			where = fmt.Sprintf("    frames %d–%d: %s", x.Evidence.First, x.Evidence.Last, x.Summary)
		case x.Evidence.First > 0:
			where = fmt.Sprintf("    frame %d: %s", x.Evidence.First, x.Summary)
		}
		if i == f.cur {
			head = c.st.selected.Render(fit(head, r.w))
		}
		out = append(out, head, fit(where, r.w))
	}
	return out
}

// findingMarkers is a chart row marking the seconds at which findings of a
// conversation start ("!" an error or warning, "·" info), "" when it has
// none; cw is the charts' width.
func findingMarkers(c *env, h *engine.ClientHealth, cw int) (string, bool) {
	if h == nil || c.first.IsZero() {
		return "", false
	}
	row := []rune(strings.Repeat(" ", cw))
	any := false
	for _, x := range c.finds {
		if x.Conv != h.Conv || x.Start.IsZero() {
			continue
		}
		k := secondIndex(h, int(x.Start.Sub(c.first).Seconds()))
		c := column(max(k, 0), len(h.Seconds), cw)
		if c < 0 || c >= cw {
			continue
		}
		any = true
		if x.Severity > engine.SeverityInfo {
			row[c] = '!'
		} else if row[c] == ' ' {
			row[c] = '·'
		}
	}
	return fit("findings (6)", healthLabel) + string(row), any
}
