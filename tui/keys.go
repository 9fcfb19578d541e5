package tui

import "charm.land/bubbles/v2/key"

// keyMap is the one key map of the program: every binding the views
// match, and the help overlay lists, grouped as the overlay shows them.
type keyMap struct {
	// Global.
	Quit, Help, Next, Prev, Packets, Timeline, State, Diff, Health, Findings, Cancel, EndCapture key.Binding
	// Lists (packet list, health seconds).
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// Packets.
	Filter, Goto, Write, ToState, NextName, PrevName, NextConv, PrevConv, Mark, Jump, Follow, Detail key.Binding
	// Timeline, state and diff: the scrubber.
	Back, Fwd, BackSec, FwdSec, PrevKey, NextKey, PrevProblem, NextProblem, First, Last, Frame, NextLine, PrevLine, ToPieces key.Binding
	// State and diff.
	MapOnly, PanLeft, PanRight, PanUp, PanDown, PanHome, MarkA, AcrossClients key.Binding
	// Health: the same keys as the scrubber's, on a per-second cursor.
	SecBack, SecFwd, SecFirst, SecLast, JumpTimeline key.Binding
	// Findings.
	JumpFinding key.Binding
}

// group is a titled list of bindings in the help overlay.
type group struct {
	title string
	keys  []key.Binding
}

func kb(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

func newKeyMap() keyMap {
	return keyMap{
		Quit:       kb([]string{"q", "ctrl+c"}, "q", "quit"),
		Help:       kb([]string{"?"}, "?", "show or hide this help"),
		Next:       kb([]string{"tab"}, "tab", "next view"),
		Prev:       kb([]string{"shift+tab"}, "shift+tab", "previous view"),
		Packets:    kb([]string{"1"}, "1", "packets"),
		Timeline:   kb([]string{"2"}, "2", "timeline"),
		State:      kb([]string{"3"}, "3", "state and level map"),
		Diff:       kb([]string{"4"}, "4", "diff"),
		Health:     kb([]string{"5"}, "5", "health"),
		Findings:   kb([]string{"6"}, "6", "findings"),
		Cancel:     kb([]string{"esc"}, "esc", "close a prompt or this help"),
		EndCapture: kb([]string{"ctrl+e"}, "ctrl+e", "live: end the capture (the analysis finishes, the views stay)"),

		Up:       kb([]string{"up", "k"}, "↑/k", "up"),
		Down:     kb([]string{"down", "j"}, "↓/j", "down"),
		PageUp:   kb([]string{"pgup", "ctrl+b"}, "pgup/ctrl+b", "page up"),
		PageDown: kb([]string{"pgdown", "ctrl+f", "space"}, "pgdn/ctrl+f", "page down"),
		Top:      kb([]string{"home", "g"}, "home/g", "first"),
		Bottom:   kb([]string{"end", "G"}, "end/G", "last"),

		Filter:   kb([]string{"/"}, "/", "display filter (-Y); tab completes, ↑↓ history"),
		Goto:     kb([]string{":"}, ":", "go to packet number (packets) or frame (timeline)"),
		ToState:  kb([]string{"s"}, "s", "this packet's state: a stdf's dif, a stak's acked state"),
		Write:    kb([]string{"w"}, "w", "write the packets shown (the filter's) to a capture file"),
		NextName: kb([]string{"n"}, "n", "next packet of the same name"),
		PrevName: kb([]string{"N"}, "N", "previous packet of the same name"),
		NextConv: kb([]string{"c"}, "c", "next packet of the same conversation"),
		PrevConv: kb([]string{"C"}, "C", "previous packet of the same conversation"),
		Mark:     kb([]string{"m"}, "m<a-z>", "set a mark"),
		Jump:     kb([]string{"'"}, "'<a-z>", "jump to a mark"),
		Follow:   kb([]string{"f"}, "f", "follow this conversation (again: all)"),
		Detail:   kb([]string{"x"}, "x", "field tree or hex dump"),

		Back:        kb([]string{"left", "h"}, "←/h", "previous state"),
		Fwd:         kb([]string{"right", "l"}, "→/l", "next state"),
		BackSec:     kb([]string{"shift+left", "H"}, "shift+←/H", "back 1 s"),
		FwdSec:      kb([]string{"shift+right", "L"}, "shift+→/L", "forward 1 s"),
		PrevKey:     kb([]string{"["}, "[", "previous keyframe"),
		NextKey:     kb([]string{"]"}, "]", "next keyframe"),
		PrevProblem: kb([]string{"{"}, "{", "previous incomplete dif or base reset"),
		NextProblem: kb([]string{"}"}, "}", "next incomplete dif or base reset"),
		First:       kb([]string{"home", "g"}, "home/g", "first state"),
		Last:        kb([]string{"end", "G"}, "end/G", "last state"),
		Frame:       kb([]string{":"}, ":", "go to frame"),
		NextLine:    kb([]string{"c"}, "c", "next client"),
		PrevLine:    kb([]string{"C"}, "C", "previous client"),
		ToPieces:    kb([]string{"p"}, "p", "this state's stdf pieces and stak acks in the packet list"),

		MapOnly:       kb([]string{"M"}, "M", "map only, or text and map"),
		PanLeft:       kb([]string{"ctrl+left"}, "ctrl+←", "pan the map left (when it does not fit)"),
		PanRight:      kb([]string{"ctrl+right"}, "ctrl+→", "pan the map right"),
		PanUp:         kb([]string{"ctrl+up"}, "ctrl+↑", "pan the map up"),
		PanDown:       kb([]string{"ctrl+down"}, "ctrl+↓", "pan the map down"),
		PanHome:       kb([]string{"0"}, "0", "centre the map on the client's player again"),
		MarkA:         kb([]string{"a"}, "a", "diff: mark this state as A"),
		AcrossClients: kb([]string{"A"}, "A", "diff: A→B, or every client at this frame"),

		SecBack:      kb([]string{"left", "h"}, "←/h", "cursor to the previous second"),
		SecFwd:       kb([]string{"right", "l"}, "→/l", "cursor to the next second"),
		SecFirst:     kb([]string{"home", "g"}, "home/g", "cursor to the first second"),
		SecLast:      kb([]string{"end", "G"}, "end/G", "cursor to the last second"),
		JumpTimeline: kb([]string{"enter"}, "enter", "show the cursor's second in the timeline"),
		JumpFinding:  kb([]string{"enter"}, "enter", "go to its first packet and its state"),
	}
}

// The groups of the help, each the keys of a view or of views that share
// them; each view lists its own (component.help) and the help shows every
// group once, in the order of the views.

func (k *keyMap) packetKeys() group {
	return group{"Packets", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Filter, k.Goto, k.ToState, k.Write, k.NextName, k.PrevName, k.NextConv, k.PrevConv, k.Mark, k.Jump, k.Follow, k.Detail}}
}

func (k *keyMap) scrubKeys() group {
	return group{"Timeline, state, diff", []key.Binding{k.Back, k.Fwd, k.BackSec, k.FwdSec, k.PrevKey, k.NextKey, k.PrevProblem, k.NextProblem, k.First, k.Last, k.Frame, k.NextLine, k.PrevLine, k.ToPieces}}
}

func (k *keyMap) paneKeys() group {
	return group{"State, diff", []key.Binding{k.MapOnly, k.PanLeft, k.PanRight, k.PanUp, k.PanDown, k.PanHome, k.MarkA, k.AcrossClients}}
}

func (k *keyMap) diffKeys() group {
	return group{"Diff (scroll the text)", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown}}
}

func (k *keyMap) healthKeys() group {
	return group{"Health", []key.Binding{k.SecBack, k.SecFwd, k.SecFirst, k.SecLast, k.NextLine, k.PrevLine, k.JumpTimeline}}
}

func (k *keyMap) findingKeys() group {
	return group{"Findings", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.JumpFinding}}
}
