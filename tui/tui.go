// Package tui is pmdump's terminal user interface: one capture (files, a
// stream on standard input, or a live interface) explored in six views over the engine's analysis —
// packets with a display filter, a timeline of each client's rebuilt
// states, the state at any frame with a map of the level, diffs between
// two states or between clients, the netgame's health over time, and the
// engine's findings.
//
// The TUI computes nothing of its own: it renders what the engine, the
// schema, the level map and the diff give it. One root Model routes
// messages to one model per view; the keys are in one key map (keys.go),
// the styles in one place (styles.go) and layout gives each pane its
// rectangle (layout.go). The engine runs on its own goroutine and every
// heavy request (filtering, rebuilding a state, a diff) runs off the UI
// goroutine and is dropped or cancelled when it is no longer wanted.
package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/schema"
)

// Options configure the TUI.
type Options struct {
	// Config is the engine's configuration (era, schema, …); the TUI adds
	// the work it needs (index, timeline, health) and its event handler.
	Config engine.Config
	// Start feeds the engine: reads the capture files, or captures from
	// an interface. It runs on its own goroutine; ctx is cancelled when
	// the user quits.
	Start func(ctx context.Context, e *engine.Engine) error
	// Engine, when set, is an engine that has already done its work (Start
	// is then not called): tests and benchmarks use it.
	Engine *engine.Engine
	// Title names what is shown (the inputs).
	Title string
	// Live names the interfaces of a live capture ("" for files): the
	// status line then shows them with the kernel's drop count.
	Live string
	// Color is false for NO_COLOR: no colors, reverse video for what is
	// selected, and a map of characters.
	Color bool
	// Schema is the layout of states of a size the built-in ones do not
	// know (nil: built-ins only).
	Schema *schema.Schema
}

// Views.
const (
	viewPackets = iota
	viewTimeline
	viewState
	viewDiff
	viewHealth
	viewFindings
	numViews
)

var viewNames = [numViews]string{"1 Packets", "2 Timeline", "3 State", "4 Diff", "5 Health", "6 Findings"}

// feed is what the engine's event handler leaves for the UI: it runs on
// the engine's goroutine, so it only stores the latest figures, and the UI
// reads them on its refresh tick.
type feed struct {
	mu       sync.Mutex
	progress engine.ProgressEvent
	warnings []string
}

func (f *feed) onEvent(ev engine.Event) {
	switch ev := ev.(type) {
	case engine.ProgressEvent:
		f.mu.Lock()
		f.progress = ev
		f.mu.Unlock()
	case engine.WarningEvent:
		f.mu.Lock()
		if len(f.warnings) < 100 {
			f.warnings = append(f.warnings, ev.Message)
		}
		f.mu.Unlock()
	}
}

// Model is the root model of the program.
type Model struct {
	opts   Options
	e      *engine.Engine
	ctx    context.Context
	cancel context.CancelFunc
	feed   *feed
	read   bool      // the engine's fast pass has read everything (packets, index)
	done   bool      // and every state is rebuilt
	wanted wanted    // what the rebuild was asked to take first
	first  time.Time // the capture's first time stamp, the zero of times shown
	ticks  int
	runErr error
	ran    chan struct{} // closed when Start has returned (nil: not started)

	w, h       int
	dark       bool
	st         styles
	keys       keyMap
	view       int
	help       bool
	helpScroll int
	pend       string // a key waiting for its second key (m, ')
	msg        string // status line message
	isErr      bool

	prompt     int // promptNone, …
	input      textinput.Model
	promptNote string

	packets packetsModel
	scrub   stateCursor
	health  healthModel
	finds   findingsModel
}

// Prompts of the status line.
const (
	promptNone = iota
	promptFilter
	promptPacket
	promptFrame
	promptWrite
)

// New returns the root model. Start (or the finished Engine) is used when
// the program starts it (Init).
func New(opts Options) *Model {
	m := &Model{opts: opts, keys: newKeyMap(), dark: true, w: 80, h: 24}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.st = newStyles(m.dark, opts.Color)
	m.feed = &feed{}
	if opts.Engine != nil {
		m.e = opts.Engine
		m.read, m.done = true, !m.e.Rebuilding()
	} else {
		cfg := opts.Config
		cfg.Work |= engine.Index | engine.Timeline | engine.Health | engine.Findings
		// The packet list, filters and jumps work as soon as the capture
		// is read; the states come behind.
		cfg.RebuildBehind = true
		if cfg.Schema == nil {
			cfg.Schema = opts.Schema
		}
		next := cfg.OnEvent
		cfg.OnEvent = func(ev engine.Event) {
			m.feed.onEvent(ev)
			if next != nil {
				next(ev)
			}
		}
		m.e = engine.New(cfg)
	}
	m.input = textinput.New()
	m.input.SetVirtualCursor(true)
	m.packets.init()
	m.health.cur = -1
	return m
}

// Engine is the engine the model shows.
func (m *Model) Engine() *engine.Engine { return m.e }

// Close stops the engine's work and releases it.
func (m *Model) Close() error {
	m.cancel()
	m.packets.cancelFilter()
	if m.ran != nil {
		<-m.ran // the run stops at the next datagram
	}
	return m.e.Close()
}

type (
	tickMsg    struct{}
	runDoneMsg struct{ err error }
)

// refresh is how often the screen follows a running engine.
const refresh = 100 * time.Millisecond

func tick() tea.Cmd { return tea.Tick(refresh, func(time.Time) tea.Msg { return tickMsg{} }) }

// Init starts the engine on its own goroutine.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if !m.done && m.opts.Start != nil {
		// The engine runs on its own goroutine, started here so that Close
		// can always wait for it; a command waits for its end.
		e, ctx, start, ran := m.e, m.ctx, m.opts.Start, make(chan struct{})
		res := make(chan error, 1)
		m.ran = ran
		go func() {
			defer close(ran)
			res <- start(ctx, e)
		}()
		cmds = append(cmds, func() tea.Msg { return runDoneMsg{<-res} }, tick())
	} else {
		m.read = true
		if m.e.Rebuilding() {
			cmds = append(cmds, tick())
		} else {
			m.done = true
		}
		cmds = append(cmds, m.refreshAll())
	}
	return tea.Batch(cmds...)
}

// refreshAll picks up what the engine has found since the last refresh.
func (m *Model) refreshAll() tea.Cmd {
	m.ticks++
	if m.first.IsZero() {
		if f := m.e.Stats().First; f != nil {
			m.first = *f
		}
	}
	m.scrub.refreshLines(m)
	// The health report is built afresh each time: twice a second is
	// enough while the engine reads.
	if m.done || m.ticks%5 == 1 {
		m.health.refresh(m)
		m.finds.refresh(m)
	}
	return m.scrub.request(m)
}

// Update routes a message to the view it is for.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		// A bug must not take the terminal down: it is shown, and the
		// program goes on.
		if r := recover(); r != nil {
			m.setErr(recovered("internal error (please report)", r))
			cmd = nil
		}
	}()
	defer m.wantFirst()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return m, nil
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.st = newStyles(m.dark, m.opts.Color)
		return m, nil
	case tickMsg:
		if m.done {
			return m, nil
		}
		if m.read && !m.e.Rebuilding() {
			m.done = true // the last states are in: one more refresh, no more ticks
			return m, m.refreshAll()
		}
		if m.read {
			return m, tea.Batch(m.refreshAll(), tick())
		}
		return m, tea.Batch(m.refreshAll(), m.packets.onGrow(m), tick())
	case runDoneMsg:
		m.read = true
		m.done = !m.e.Rebuilding()
		if msg.err != nil && m.ctx.Err() == nil {
			m.runErr = msg.err
			m.setErr(msg.err)
		}
		return m, tea.Batch(m.refreshAll(), m.packets.onGrow(m))
	case writtenMsg:
		m.packets.onWritten(m, msg)
		return m, nil
	case filterMsg:
		return m, m.packets.onFilter(m, msg)
	case stateMsg:
		return m, m.scrub.onState(m, msg)
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.MouseWheelMsg:
		return m, m.onWheel(msg)
	case tea.MouseClickMsg:
		return m, m.onClick(msg)
	}
	return m, nil
}

func (m *Model) setErr(err error) {
	m.msg, m.isErr = err.Error(), true
}

func (m *Model) setMsg(format string, a ...any) {
	m.msg, m.isErr = fmt.Sprintf(format, a...), false
}

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

// Run runs the TUI on the terminal until the user quits, then releases
// the engine.
func Run(ctx context.Context, opts Options, progOpts ...tea.ProgramOption) error {
	m := New(opts)
	defer m.Close()
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx)}, progOpts...)...)
	_, err := p.Run()
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return m.runErr
}

// onRecovered, when set (by tests), is told of every panic the UI
// recovered from, so a recovered bug cannot pass unnoticed.
var onRecovered func(where string, r any)

// recovered is the error shown for a panic the UI recovered from where.
func recovered(where string, r any) error {
	if onRecovered != nil {
		onRecovered(where, r)
	}
	return fmt.Errorf("%s: %v", where, r)
}
