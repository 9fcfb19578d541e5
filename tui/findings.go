package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
)

// findingsModel lists the engine's findings, the worst first; enter jumps
// to the finding's first frame in the packet list and to its state in the
// timeline.
type findingsModel struct {
	fs       []engine.Finding
	cur, top int
	chosen   bool // the user moved the cursor: a refresh keeps its finding
}

// refresh takes the findings found so far, keeping the selected one.
func (f *findingsModel) refresh(m *Model) {
	var sel engine.Finding
	had := f.chosen && f.cur < len(f.fs)
	if had {
		sel = f.fs[f.cur]
	}
	f.fs = engine.SortFindings(m.e.Findings())
	if had {
		for i, x := range f.fs {
			if x.Kind == sel.Kind && x.Conv == sel.Conv && x.Start.Equal(sel.Start) {
				f.cur = i
			}
		}
	}
	f.cur = clamp(f.cur, 0, max(len(f.fs)-1, 0))
}

func (f *findingsModel) onKey(m *Model, k tea.KeyPressMsg) tea.Cmd {
	keys := m.keys
	page := max(m.layout().body.h/2-1, 1)
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
		f.cur = len(f.fs) - 1
	case key.Matches(k, keys.JumpFinding):
		return f.jump(m)
	}
	f.cur = clamp(f.cur, 0, max(len(f.fs)-1, 0))
	return nil
}

// jump selects the finding's first frame in the packet list and its state
// (or the state at its start) in the timeline, and shows the packet list.
func (f *findingsModel) jump(m *Model) tea.Cmd {
	if f.cur >= len(f.fs) {
		return nil
	}
	fd := f.fs[f.cur]
	if n := fd.Evidence.First; n > 0 {
		m.packets.gotoNumber(m, strconv.Itoa(n))
	}
	s := &m.scrub
	if li := s.lineOf(fd.Conv); li >= 0 && fd.Conv > 0 {
		s.toLine(m, li)
		i := -1
		if len(fd.Evidence.States) > 0 {
			st := fd.Evidence.States[0]
			i = m.e.Find(s.line(), st.SLSN, st.Frame, false)
		} else if len(fd.Evidence.Frames) > 0 {
			fr := fd.Evidence.Frames[0]
			i = m.e.Find(s.line(), fr.SLSN, fr.From, false)
		}
		if i < 0 && !fd.Start.IsZero() {
			i = min(s.atTime(m, fd.Start), s.n-1)
		}
		s.setI(m, i)
	}
	m.view = viewPackets
	if fd.Evidence.First > 0 {
		m.setMsg("finding %s: packet %d; 2 shows its state in the timeline", fd.Kind, fd.Evidence.First)
	}
	return s.request(m)
}

func (f *findingsModel) render(m *Model, r rect) []string {
	if len(f.fs) == 0 {
		if !m.done {
			return []string{m.st.dim.Render("no findings yet (the capture is still being read)")}
		}
		return []string{m.st.dim.Render("no findings")}
	}
	errs, warns := 0, 0
	for _, x := range f.fs {
		switch x.Severity {
		case engine.SeverityError:
			errs++
		case engine.SeverityWarning:
			warns++
		}
	}
	out := []string{m.st.dim.Render(fmt.Sprintf("%d findings: %d errors, %d warnings, %d info · ↑↓ select, enter: its first packet and its state", len(f.fs), errs, warns, len(f.fs)-errs-warns))}
	// Two lines a finding: what, and where to look.
	per := 2
	rows := max((r.h-1)/per, 1)
	if f.cur < f.top {
		f.top = f.cur
	}
	if f.cur >= f.top+rows {
		f.top = f.cur - rows + 1
	}
	for i := f.top; i < len(f.fs) && i < f.top+rows; i++ {
		x := &f.fs[i]
		when := "-"
		if !x.Start.IsZero() && !m.first.IsZero() {
			when = fmt.Sprintf("%.1f s", x.Start.Sub(m.first).Seconds())
			if d := x.End.Sub(x.Start); d >= 500*time.Millisecond {
				when = fmt.Sprintf("%.1f–%.1f s", x.Start.Sub(m.first).Seconds(), x.End.Sub(m.first).Seconds())
			}
		}
		sev := x.Severity.String()
		switch {
		case i == f.cur: // the selection's style, whole
		case x.Severity == engine.SeverityError:
			sev = m.st.err.Render(sev)
		case x.Severity == engine.SeverityWarning:
			sev = m.st.warn.Render(sev)
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
			head = m.st.selected.Render(fit(head, r.w))
		}
		out = append(out, head, fit(where, r.w))
	}
	return out
}

// markers is a chart row marking the seconds at which findings of a
// conversation start ("!" an error or warning, "·" info), "" when it has
// none; cw is the charts' width.
func (f *findingsModel) markers(m *Model, h *engine.ClientHealth, cw int) (string, bool) {
	if h == nil || m.first.IsZero() {
		return "", false
	}
	row := []rune(strings.Repeat(" ", cw))
	any := false
	for _, x := range f.fs {
		if x.Conv != h.Conv || x.Start.IsZero() {
			continue
		}
		k := secondIndex(h, int(x.Start.Sub(m.first).Seconds()))
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
