// Package tui is pmdump's terminal user interface: one capture (files, a
// stream on standard input, or a live interface) explored in six views over the engine's analysis —
// packets with a display filter, a timeline of each client's rebuilt
// states, the state at any frame with a map of the level, diffs between
// two states or between clients, the netgame's health over time, and the
// engine's findings.
//
// The TUI computes nothing of its own: it renders what the engine, the
// schema, the level map and the diff give it. Each view is a component
// (env.go): it handles its keys and the mouse, draws itself without
// changing any state, fits its scroll to the layout and to what it shows,
// and lists its keys for the help. A view is given env, what the views
// share (the engine, styles, keys, the layout computed once per window
// size, the status line, the state cursor of the timeline, state and diff
// views), never the root Model, and asks the program for what is beyond
// it (showing another view, a prompt, a packet) through env.nav. The root
// Model routes the messages, draws the tabs and the status line, and
// after every message has the view shown fit itself. The keys are in one
// key map (keys.go) and the styles in one place (styles.go). The engine
// runs on its own goroutine and every heavy request (filtering,
// rebuilding a state, a diff) runs off the UI goroutine and is dropped or
// cancelled when it is no longer wanted.
package tui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

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
	// the user quits, or, with Live, ends the capture (ctrl+e): Start then
	// ends the capture and returns once the engine has finished.
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

// Model is the root model of the program: it owns the views and what
// they share (env), routes each message to the view it is for, and draws
// the tabs, the view shown (or the help) and the status line.
type Model struct {
	opts   Options
	e      *engine.Engine
	env    env
	cancel context.CancelFunc
	// endCapture ends Start's capture without quitting (live: ctrl+e).
	endCapture context.CancelFunc
	feed       *feed
	wanted     wanted // what the rebuild was asked to take first
	ticks      int
	runErr     error
	ran        chan struct{} // closed when Start has returned (nil: not started)

	w, h   int
	dark   bool
	helpOn bool // the help overlay is shown

	prompt     int // promptNone, …
	input      textinput.Model
	promptNote string

	packets  packetsModel
	scrub    stateCursor // the cursor the timeline, state and diff views share
	panes    panes       // the text and map panes the state and diff views share
	timeline timelineView
	state    stateView
	diff     diffView
	health   healthModel
	finds    findingsModel
	help     helpModel
	views    [numViews]component
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
	m := &Model{opts: opts, dark: true}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.feed = &feed{}
	if opts.Engine != nil {
		m.e = opts.Engine
		m.env.read, m.env.done = true, !m.e.Rebuilding()
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
		if next == nil {
			// The model keeps the progress and the warnings only: the
			// engine need not box every packet, dif and acknowledgement
			// for it (a fifth of the one-hour game's fast pass).
			cfg.Events = engine.ProgressEvents | engine.WarningEvents
		}
		cfg.OnEvent = func(ev engine.Event) {
			m.feed.onEvent(ev)
			if next != nil {
				next(ev)
			}
		}
		m.e = engine.New(cfg)
	}
	c := &m.env
	c.e, c.ctx, c.keys = m.e, ctx, newKeyMap()
	c.st = newStyles(m.dark, opts.Color)
	c.color, c.schema, c.live = opts.Color, opts.Schema, opts.Live
	c.cursor, c.nav = &m.scrub, m
	m.resize(80, 24)
	m.input = textinput.New()
	m.input.SetVirtualCursor(true)
	m.packets.init()
	m.health.cur = -1
	m.timeline.cur = &m.scrub
	m.state.cur, m.state.pane = &m.scrub, &m.panes
	m.diff.cur, m.diff.pane = &m.scrub, &m.panes
	m.views = [numViews]component{&m.packets, &m.timeline, &m.state, &m.diff, &m.health, &m.finds}
	m.help.groups = m.helpGroups()
	return m
}

// resize lays the screen out for a window of w × h cells.
func (m *Model) resize(w, h int) {
	m.w, m.h = w, h
	m.env.lay = newLayout(w, h)
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
	c := &m.env
	if !c.done && m.opts.Start != nil {
		// The engine runs on its own goroutine, started here so that Close
		// can always wait for it; a command waits for its end.
		ctx, end := context.WithCancel(c.ctx)
		e, start, ran := m.e, m.opts.Start, make(chan struct{})
		m.endCapture = end
		res := make(chan error, 1)
		m.ran = ran
		go func() {
			defer close(ran)
			res <- start(ctx, e)
		}()
		cmds = append(cmds, func() tea.Msg { return runDoneMsg{<-res} }, tick())
	} else {
		c.read = true
		if m.e.Rebuilding() {
			cmds = append(cmds, tick())
		} else {
			c.done = true
		}
		cmds = append(cmds, m.refreshAll())
	}
	m.views[c.view].fit(c)
	return tea.Batch(cmds...)
}

// refreshAll picks up what the engine has found since the last refresh.
func (m *Model) refreshAll() tea.Cmd {
	c := &m.env
	m.ticks++
	if c.first.IsZero() {
		if f := m.e.Stats().First; f != nil {
			c.first = *f
		}
	}
	m.scrub.refreshLines(c)
	m.scrub.reloadPending(c)
	// The health report is built afresh each time: twice a second is
	// enough while the engine reads.
	if c.done || m.ticks%5 == 1 {
		c.health = m.e.Health()
		m.health.refresh(c)
		m.finds.refresh(c, engine.SortFindings(m.e.Findings()))
	}
	return m.scrub.request(c)
}

// Update routes a message to the view it is for.
func (m *Model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		// A bug must not take the terminal down: it is shown, and the
		// program goes on.
		if r := recover(); r != nil {
			m.env.setErr(recovered("internal error (please report)", r))
			cmd = nil
		}
	}()
	defer m.settle()
	c := &m.env
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		c.st = newStyles(m.dark, m.opts.Color)
		return m, nil
	case tickMsg:
		if c.done {
			return m, nil
		}
		if c.read && !m.e.Rebuilding() {
			c.done = true // the last states are in: one more refresh, no more ticks
			return m, m.refreshAll()
		}
		if c.read {
			return m, tea.Batch(m.refreshAll(), tick())
		}
		return m, tea.Batch(m.refreshAll(), m.packets.onGrow(c), tick())
	case runDoneMsg:
		c.read = true
		c.done = !m.e.Rebuilding()
		if msg.err != nil && c.ctx.Err() == nil {
			m.runErr = msg.err
			c.setErr(msg.err)
		}
		return m, tea.Batch(m.refreshAll(), m.packets.onGrow(c))
	case writtenMsg:
		m.packets.onWritten(c, msg)
		return m, nil
	case filterMsg:
		return m, m.packets.onFilter(c, msg)
	case stateMsg:
		return m, m.scrub.onState(c, msg)
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.MouseWheelMsg:
		return m, m.views[c.view].update(c, msg)
	case tea.MouseClickMsg:
		return m, m.onClick(msg)
	}
	return m, nil
}

// settle ends every message: the view shown (or the help) fits itself to
// what changed, and the rebuild is asked for what the view shows.
func (m *Model) settle() {
	if m.helpOn {
		m.help.fit(&m.env)
	} else {
		m.views[m.env.view].fit(&m.env)
	}
	m.wantFirst()
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
