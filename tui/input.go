package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Prompts of the status line.
const (
	promptNone = iota
	promptFilter
	promptPacket
	promptFrame
	promptWrite
)

func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	if m.prompt != promptNone {
		return m.onPromptKey(k)
	}
	if m.pend != "" {
		p := m.pend
		m.pend = ""
		return m.packets.onMarkKey(m, p, k.String())
	}
	if m.help {
		switch {
		case key.Matches(k, m.keys.Help, m.keys.Cancel):
			m.help = false
		case key.Matches(k, m.keys.Quit):
			return m.quit()
		case key.Matches(k, m.keys.Up):
			m.helpScroll--
		case key.Matches(k, m.keys.Down):
			m.helpScroll++
		case key.Matches(k, m.keys.PageUp):
			m.helpScroll -= 10
		case key.Matches(k, m.keys.PageDown):
			m.helpScroll += 10
		}
		return nil
	}
	keys := m.keys
	switch {
	case key.Matches(k, keys.Quit):
		return m.quit()
	case key.Matches(k, keys.Help):
		m.help = true
		return nil
	case key.Matches(k, keys.Cancel):
		m.msg = ""
		return nil
	case key.Matches(k, keys.Packets):
		return m.show(viewPackets)
	case key.Matches(k, keys.Timeline):
		return m.show(viewTimeline)
	case key.Matches(k, keys.State):
		return m.show(viewState)
	case key.Matches(k, keys.Diff):
		return m.show(viewDiff)
	case key.Matches(k, keys.Health):
		return m.show(viewHealth)
	case key.Matches(k, keys.Findings):
		return m.show(viewFindings)
	case key.Matches(k, keys.Next):
		return m.show((m.view + 1) % numViews)
	case key.Matches(k, keys.Prev):
		return m.show((m.view + numViews - 1) % numViews)
	}
	switch m.view {
	case viewPackets:
		return m.packets.onKey(m, k)
	case viewHealth:
		return m.health.onKey(m, k)
	case viewFindings:
		return m.finds.onKey(m, k)
	}
	return m.scrub.onKey(m, k)
}

func (m *Model) quit() tea.Cmd {
	m.cancel()
	m.packets.cancelFilter()
	return tea.Quit
}

// show switches to a view. Leaving the packet list for the states after
// selecting a packet shows that packet's conversation at its moment.
func (m *Model) show(v int) tea.Cmd {
	if m.view == viewPackets && v != viewPackets && v != viewHealth && m.packets.moved && m.packets.n(m) > 0 {
		m.packets.moved = false
		m.scrub.toPacket(m, m.packets.pos(m.packets.cur))
	}
	m.view = v
	return m.scrub.request(m)
}

// openPrompt starts editing a line in the status line.
func (m *Model) openPrompt(kind int, prompt, value string) tea.Cmd {
	m.prompt = kind
	m.input.Prompt = prompt
	m.input.SetValue(value)
	m.input.CursorEnd()
	m.promptNote = ""
	if kind == promptFilter {
		m.promptNote = m.packets.check(value)
	}
	// The cursor does not blink: its timer would only redraw the screen.
	m.input.Focus()
	return nil
}

func (m *Model) onPromptKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc", "ctrl+c":
		m.prompt = promptNone
		m.input.Blur()
		return nil
	case "enter":
		kind, v := m.prompt, strings.TrimSpace(m.input.Value())
		m.prompt = promptNone
		m.input.Blur()
		switch kind {
		case promptFilter:
			return m.packets.applyFilter(m, v)
		case promptPacket:
			return m.packets.gotoNumber(m, v)
		case promptFrame:
			return m.scrub.gotoFrame(m, v)
		case promptWrite:
			return m.packets.writeShown(m, v)
		}
		return nil
	}
	if m.prompt == promptFilter {
		switch k.String() {
		case "tab":
			v, fits := complete(m.input.Value())
			m.input.SetValue(v)
			m.input.CursorEnd()
			m.promptNote = m.packets.check(v)
			if len(fits) > 1 {
				m.promptNote = candidatesNote(fits)
			}
			return nil
		case "up", "down":
			m.input.SetValue(m.packets.historyStep(k.String() == "up", m.input.Value()))
			m.input.CursorEnd()
			m.promptNote = m.packets.check(m.input.Value())
			return nil
		}
	}
	m.input, _ = m.input.Update(k)
	if m.prompt == promptFilter {
		m.promptNote = m.packets.check(m.input.Value())
	}
	return nil
}

func (m *Model) onWheel(w tea.MouseWheelMsg) tea.Cmd {
	step := 3
	up := w.Button == tea.MouseWheelUp
	switch m.view {
	case viewPackets:
		if up {
			m.packets.move(m, -step)
		} else {
			m.packets.move(m, step)
		}
		return nil
	case viewHealth:
		if up {
			m.health.move(m, -1)
		} else {
			m.health.move(m, 1)
		}
		return nil
	case viewFindings:
		m.finds.chosen = true
		if up {
			m.finds.cur = max(m.finds.cur-1, 0)
		} else {
			m.finds.cur = min(m.finds.cur+1, max(len(m.finds.fs)-1, 0))
		}
		return nil
	}
	if up {
		return m.scrub.step(m, -1)
	}
	return m.scrub.step(m, 1)
}

func (m *Model) onClick(c tea.MouseClickMsg) tea.Cmd {
	if c.Y == 0 {
		// the tabs
		x := 0
		for v, name := range viewNames {
			wd := ansi.StringWidth(m.st.tab.Render(name))
			if c.X >= x && c.X < x+wd {
				return m.show(v)
			}
			x += wd
		}
		return nil
	}
	l := m.layout()
	switch m.view {
	case viewPackets:
		if l.list.contains(c.X, c.Y) && c.Y > l.list.y {
			m.packets.clickRow(m, c.Y-l.list.y-1)
		}
	case viewHealth:
		if l.body.contains(c.X, c.Y) {
			m.health.click(m, c.X-l.body.x-healthLabel)
		}
	default:
		if c.Y == l.body.y+1 {
			return m.scrub.clickBar(m, c.X-l.body.x)
		}
	}
	return nil
}
