package tui

import (
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// Every search of the TUI that goes forward or backward from a place (the
// next packet of the same name or conversation, the next keyframe or
// incomplete dif, a dif's state near its piece) is seek over what it
// searches; the searches of sorted positions (a time, a packet number)
// are sort.Search.

// seek returns the first index from from on, in direction dir (1 forward,
// -1 backward) and inside [lo, hi), for which ok holds; -1 when none does.
func seek(from, dir, lo, hi int, ok func(i int) bool) int {
	for i := from; i >= lo && i < hi; i += dir {
		if ok(i) {
			return i
		}
	}
	return -1
}

// scanChunk is how many entries a scan of the timeline reads at a time.
var scanChunk = 1024

// entryWindow reads the entries of a line for a scan in direction dir, a
// chunk at a time: the chunk from the entry asked for on (back to it, for
// a backward scan), with the entry before it.
type entryWindow struct {
	e    *engine.Engine
	line reassemble.Chain
	dir  int
	from int // the index of es[0]
	es   []replay.Entry
}

// at is entry i, which the caller knows exists.
func (w *entryWindow) at(i int) replay.Entry {
	if i < w.from || i >= w.from+len(w.es) {
		from, to := i-1, i+scanChunk
		if w.dir < 0 {
			from, to = i-scanChunk, i+1
		}
		w.from = max(from, 0)
		w.es = w.e.Entries(w.es[:0], w.line, w.from, to)
	}
	return w.es[i-w.from]
}
