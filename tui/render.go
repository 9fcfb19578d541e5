package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/pmdump/pmdump/engine"
)

// View renders the screen: tabs, the current view (or the help) and the
// status line, every line exactly the window's width.
func (m *Model) View() tea.View {
	var content string
	func() {
		defer func() {
			if r := recover(); r != nil {
				content = fmt.Sprintf("%v\npress q to quit", recovered("internal error while drawing (please report)", r))
			}
		}()
		content = m.Render()
	}()
	v := tea.NewView(content)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "pmdump " + m.opts.Title
	return v
}

// Render is the screen as text (the View's content).
func (m *Model) Render() string {
	l := m.layout()
	lines := make([]string, 0, m.h)
	lines = append(lines, m.renderTabs(l.tabs.w))
	var body []string
	if m.help {
		body = m.renderHelp(l.body)
	} else {
		switch m.view {
		case viewPackets:
			body = m.packets.render(m, l)
		case viewTimeline:
			body = m.scrub.renderTimeline(m, l.body)
		case viewState:
			body = m.scrub.renderState(m, l.body)
		case viewDiff:
			body = m.scrub.renderDiff(m, l.body)
		case viewHealth:
			body = m.health.render(m, l.body)
		case viewFindings:
			body = m.finds.render(m, l.body)
		}
	}
	for i := 0; i < l.body.h; i++ {
		s := ""
		if i < len(body) {
			s = body[i]
		}
		lines = append(lines, fit(s, l.body.w))
	}
	lines = append(lines, m.renderStatus(l.status.w))
	return strings.Join(lines, "\n")
}

func (m *Model) renderTabs(w int) string {
	var b strings.Builder
	for v, name := range viewNames {
		if v == m.view {
			b.WriteString(m.st.tabActive.Render(name))
		} else {
			b.WriteString(m.st.tab.Render(name))
		}
	}
	b.WriteString("  ")
	b.WriteString(m.st.dim.Render(m.opts.Title + "  ? help  q quit"))
	return fit(b.String(), w)
}

func (m *Model) renderStatus(w int) string {
	if m.prompt != promptNone {
		s := m.input.View()
		if m.promptNote != "" {
			st := m.st.ok
			switch {
			case strings.HasPrefix(m.promptNote, "tab:"):
				st = m.st.dim
			case !strings.HasPrefix(m.promptNote, "✓"):
				st = m.st.err
			}
			s += "  " + st.Render(m.promptNote)
		}
		return fit(s, w)
	}
	m.feed.mu.Lock()
	ev := m.feed.progress
	m.feed.mu.Unlock()
	parts := []string{m.progressLine(ev, w)}
	if idx := m.e.Index(); idx != nil {
		if d := idx.Dropped(); d > 0 {
			parts[0] += fmt.Sprintf(" (ring: newest %d kept, %d dropped)", idx.Len()-d, d)
		}
	}
	m.feed.mu.Lock()
	nw := len(m.feed.warnings)
	var lastWarn string
	if nw > 0 {
		lastWarn = m.feed.warnings[nw-1]
	}
	m.feed.mu.Unlock()
	s := m.st.dim.Render(strings.Join(parts, "  "))
	switch {
	case m.msg != "" && m.isErr:
		s += "  " + m.st.err.Render(m.msg)
	case m.msg != "":
		s += "  " + m.msg
	case lastWarn != "":
		s += "  " + m.st.warn.Render(fmt.Sprintf("warning (%d): %s", nw, lastWarn))
	}
	return fit(s, w)
}

// progressBar draws how far the engine has read.
func progressBar(p engine.ProgressEvent, w int) string {
	if p.Input == "" {
		return "reading…"
	}
	if p.Total <= 0 {
		return fmt.Sprintf("reading %s: %d frames", p.Input, p.Frames)
	}
	f := float64(p.Read) / float64(p.Total)
	f = min(max(f, 0), 1)
	n := int(f * float64(w))
	return fmt.Sprintf("reading %s [%s%s] %3.0f%%, %d frames", filepath.Base(p.Input), strings.Repeat("█", n), strings.Repeat("░", w-n), f*100, p.Frames)
}

// fit pads or cuts a (styled) line to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}
