package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/schema"
)

// component is one view of the TUI, shaped as the components of Charm's
// own programs are: it handles the messages sent to it, draws itself,
// fits itself to the window's layout and to what it shows, and lists its
// keys for the help. It is given the program's env, never the root model.
type component interface {
	// update handles a key press, a wheel turn or a click in the body.
	update(c *env, msg tea.Msg) tea.Cmd
	// render draws the view in the body's rectangle (c.lay.body), one
	// string a row, each cut or padded by the root. It changes no state:
	// what it shows was settled by update and fit.
	render(c *env) []string
	// fit fits what the view keeps of its place on the screen (a scroll
	// position, the selected row kept in sight, the map's centre) to the
	// layout and to what it shows now. The root calls it for the view
	// shown after every message, so the window's size changes it too.
	fit(c *env)
	// help is the view's keys, in the help's titled groups.
	help(k *keyMap) []group
}

// env is what the views share of the program, given to each instead of
// the root model: the engine and what it has found so far, how to draw
// (styles, keys, the layout of the window), the status line, the state
// cursor that the timeline, state and diff views show and the jumps of
// the others move, and the requests a view makes of the program (nav).
type env struct {
	e      *engine.Engine
	ctx    context.Context // cancelled when the user quits
	st     styles
	keys   keyMap
	lay    layout         // computed once per window size
	color  bool           // colors, and a map of half blocks
	schema *schema.Schema // the user's schema (nil: built-ins only)
	live   string         // the interfaces of a live capture ("" for files)

	view   int              // the view shown
	first  time.Time        // the capture's first time stamp, the zero of times shown
	read   bool             // the engine's fast pass has read everything (packets, index)
	done   bool             // and every state is rebuilt
	wanted reassemble.Chain // the line the rebuild was last asked to take first
	health []*engine.ClientHealth
	finds  []engine.Finding // the worst first

	cursor *stateCursor
	nav    navigator

	msg   string // the status line's message
	isErr bool
}

// navigator is what a view asks of the program beyond itself; the root
// model does it with the views concerned.
type navigator interface {
	// show switches to view v.
	show(v int) tea.Cmd
	// openPrompt opens a line to edit in the status line (promptFilter, …).
	openPrompt(kind int, prompt, value string)
	// selectPacket selects capture frame n in the packet list (clearing
	// the display filter when it hides it, which it reports), or the
	// nearest game packet; the state views keep their place.
	selectPacket(n int) (cleared bool)
	// listPackets shows the packets a display filter matches in the
	// packet list, with packet position pos selected (or the nearest
	// match after it) once the matches come.
	listPackets(filter string, pos int) tea.Cmd
}

// wheelStep is how far a turn of the mouse wheel moves: step back (up) or
// on (down).
func wheelStep(w tea.MouseWheelMsg, step int) int {
	if w.Button == tea.MouseWheelUp {
		return -step
	}
	return step
}

func (c *env) setErr(err error) {
	c.msg, c.isErr = err.Error(), true
}

func (c *env) setMsg(format string, a ...any) {
	c.msg, c.isErr = fmt.Sprintf(format, a...), false
}
