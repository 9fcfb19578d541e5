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

// Render is the screen as text (the View's content). It changes no
// state.
func (m *Model) Render() string {
	c := &m.env
	l := c.lay
	lines := make([]string, 0, l.tabs.h+l.body.h+l.status.h)
	lines = append(lines, m.renderTabs(l.tabs.w))
	var body []string
	if m.helpOn {
		body = m.help.render(c)
	} else {
		body = m.views[c.view].render(c)
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
	st := &m.env.st
	var b strings.Builder
	for v, name := range viewNames {
		if v == m.env.view {
			b.WriteString(st.tabActive.Render(name))
		} else {
			b.WriteString(st.tab.Render(name))
		}
	}
	b.WriteString("  ")
	b.WriteString(st.dim.Render(m.opts.Title + "  ? help  q quit"))
	return fit(b.String(), w)
}

func (m *Model) renderStatus(w int) string {
	c := &m.env
	if m.prompt != promptNone {
		s := m.input.View()
		if m.promptNote != "" {
			st := c.st.ok
			switch {
			case strings.HasPrefix(m.promptNote, "tab:"):
				st = c.st.dim
			case !strings.HasPrefix(m.promptNote, "✓"):
				st = c.st.err
			}
			s += "  " + st.Render(m.promptNote)
		}
		return fit(s, w)
	}
	m.feed.mu.Lock()
	ev := m.feed.progress
	m.feed.mu.Unlock()
	parts := []string{c.progressLine(ev, w)}
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
	s := c.st.dim.Render(strings.Join(parts, "  "))
	switch {
	case c.msg != "" && c.isErr:
		s += "  " + c.st.err.Render(c.msg)
	case c.msg != "":
		s += "  " + c.msg
	case lastWarn != "":
		s += "  " + c.st.warn.Render(fmt.Sprintf("warning (%d): %s", nw, lastWarn))
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
