package tui

// rect is a pane's place on the screen.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout is every pane's rectangle for the window's size.
type layout struct {
	tabs, body, status rect
	// Packets: the list above the selected packet's field tree or hex dump.
	list, detail rect
	// State and diff: the text beside the map, or one of them alone when
	// the window is narrow.
	text, level rect
	wide        bool // text and map side by side
}

// minW and minH are the smallest window drawn in full; a smaller one is
// drawn as if it were this size (cut by the terminal).
const minW, minH = 80, 24

// mapW is the map's width: one column per block; a narrower map pane
// shows the part around the client's player. textMin and mapMin are the
// narrowest text and map panes shown side by side.
const (
	mapW    = 100
	textMin = 60
	mapMin  = 60
)

// newLayout lays out a window of w × h cells.
func newLayout(w, h int) layout {
	w, h = max(w, minW), max(h, minH)
	var l layout
	l.tabs = rect{0, 0, w, 1}
	l.status = rect{0, h - 1, w, 1}
	l.body = rect{0, 1, w, h - 2}
	b := l.body
	lh := max(b.h*11/20, 5)
	l.list = rect{b.x, b.y, b.w, lh}
	l.detail = rect{b.x, b.y + lh, b.w, b.h - lh}
	// State and diff panes, below their one-line header and scrubber.
	top := 2
	inner := rect{b.x, b.y + top, b.w, b.h - top}
	if b.w >= textMin+1+mapMin {
		l.wide = true
		mw := min(mapW, b.w-textMin-1)
		l.text = rect{inner.x, inner.y, inner.w - mw - 1, inner.h}
		l.level = rect{inner.x + inner.w - mw, inner.y, mw, inner.h}
	} else {
		l.text, l.level = inner, inner
	}
	return l
}
