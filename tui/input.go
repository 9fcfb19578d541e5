package tui

import (
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// viewKeys are the keys that show each view.
func (k *keyMap) viewKeys() [numViews]key.Binding {
	return [numViews]key.Binding{k.Packets, k.Timeline, k.State, k.Diff, k.Health, k.Findings}
}

// onKey routes a key: to the prompt while one is open, to the packet list
// while it waits for a mark's letter, to the help while it is shown; the
// keys of every view, then the view shown.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	c := &m.env
	if m.prompt != promptNone {
		return m.onPromptKey(k)
	}
	if m.packets.pend != "" {
		return m.packets.update(c, k)
	}
	keys := &c.keys
	if m.helpOn {
		switch {
		case key.Matches(k, keys.Help, keys.Cancel):
			m.helpOn = false
		case key.Matches(k, keys.Quit):
			return m.quit()
		default:
			return m.help.update(c, k)
		}
		return nil
	}
	switch {
	case key.Matches(k, keys.Quit):
		return m.quit()
	case key.Matches(k, keys.Help):
		m.helpOn = true
		return nil
	case key.Matches(k, keys.Cancel):
		c.msg = ""
		return nil
	case key.Matches(k, keys.EndCapture) && c.live != "":
		m.endLive()
		return nil
	case key.Matches(k, keys.Next):
		return m.show((c.view + 1) % numViews)
	case key.Matches(k, keys.Prev):
		return m.show((c.view + numViews - 1) % numViews)
	}
	for v, b := range keys.viewKeys() {
		if key.Matches(k, b) {
			return m.show(v)
		}
	}
	return m.views[c.view].update(c, k)
}

// endLive ends a live capture: the source gives what it has captured and
// ends, and the engine finishes its analysis as at the end of a file (the
// findings that need every state come then).
func (m *Model) endLive() {
	c := &m.env
	if c.read || m.endCapture == nil {
		c.setMsg("the capture has ended")
		return
	}
	m.endCapture()
	c.setMsg("ending the capture: the analysis finishes with what was captured")
}

func (m *Model) quit() tea.Cmd {
	m.cancel()
	m.packets.cancelFilter()
	return tea.Quit
}

// helpGroups are the keys of the help overlay: the keys of every view,
// then each view's, each group once.
func (m *Model) helpGroups() []group {
	k := &m.env.keys
	everywhere := []key.Binding{k.Packets, k.Timeline, k.State, k.Diff, k.Health, k.Findings, k.Next, k.Prev, k.Help, k.Cancel, k.Quit}
	if m.env.live != "" {
		everywhere = append(everywhere, k.EndCapture)
	}
	out := []group{{"Everywhere", everywhere}}
	seen := map[string]bool{}
	for _, v := range m.views {
		for _, g := range v.help(k) {
			if !seen[g.title] {
				seen[g.title] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// show switches to a view. Leaving the packet list for the states after
// selecting a packet shows that packet's conversation at its moment.
func (m *Model) show(v int) tea.Cmd {
	c := &m.env
	if c.view == viewPackets && v != viewPackets && v != viewHealth && m.packets.moved && m.packets.n(c) > 0 {
		m.packets.moved = false
		if msg, ok := m.scrub.toPacket(c, m.packets.pos(m.packets.cur)); ok && m.scrub.await != nil {
			c.setMsg("%s", msg) // the state shown is not the packet's yet
		}
	}
	c.view = v
	return m.scrub.request(c)
}

// openPrompt starts editing a line in the status line.
func (m *Model) openPrompt(kind int, prompt, value string) {
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
}

// selectPacket selects capture frame n in the packet list.
func (m *Model) selectPacket(n int) (cleared bool) {
	c, p := &m.env, &m.packets
	if x := p.index(c); x != nil && p.filter != nil {
		pos := x.Search(n)
		r := sort.Search(len(p.rows), func(i int) bool { return int(p.rows[i]) >= pos })
		if pos < x.Len() && int(x.Entry(pos).N) == n && (r == len(p.rows) || int(p.rows[r]) != pos) {
			p.applyFilter(c, "") // the filter hides it
			cleared = true
		}
	}
	p.gotoNumber(c, strconv.Itoa(n))
	p.moved = false // the state views keep the place the caller gave them
	return cleared
}

// listPackets shows a filter's matches in the packet list, pos selected.
func (m *Model) listPackets(filter string, pos int) tea.Cmd {
	c := &m.env
	cmd := m.packets.applyFilter(c, filter)
	m.packets.keep, m.packets.placed = pos, false
	m.packets.moved = false
	c.view = viewPackets
	return cmd
}

func (m *Model) onPromptKey(k tea.KeyPressMsg) tea.Cmd {
	c := &m.env
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
			return m.packets.applyFilter(c, v)
		case promptPacket:
			m.packets.gotoNumber(c, v)
		case promptFrame:
			return m.scrub.gotoFrame(c, v)
		case promptWrite:
			if v == "" {
				v = defaultWrite
			}
			return m.packets.writeShown(c, v)
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

// onClick picks a tab, or gives a click in the body to the view shown.
func (m *Model) onClick(ck tea.MouseClickMsg) tea.Cmd {
	c := &m.env
	if ck.Y != 0 {
		return m.views[c.view].update(c, ck)
	}
	x := 0
	for v, name := range viewNames {
		wd := ansi.StringWidth(c.st.tab.Render(name))
		if ck.X >= x && ck.X < x+wd {
			return m.show(v)
		}
		x += wd
	}
	return nil
}
