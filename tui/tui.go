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
