package engine

import (
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// Index returns the packet index, nil unless the engine does Index work. It
// may be used while the engine runs.
func (e *Engine) Index() *PacketIndex { return e.index }

// Lines returns the lines (a client in one conversation) that have states
// in the timeline, in order of their first state; while the rebuild runs
// behind the fast pass (Config.RebuildBehind), also those whose first
// states are still to come, in order of their first difs.
func (e *Engine) Lines() []reassemble.Chain {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return nil
	}
	return append([]reassemble.Chain(nil), e.timeline.Lines()...)
}

// EntryCount is the number of states of a line in the timeline so far.
func (e *Engine) EntryCount(l reassemble.Chain) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return 0
	}
	return len(e.timeline.Entries(l))
}

// Entries copies a line's timeline entries of positions [from, to) into
// dst. to < 0 means all.
func (e *Engine) Entries(dst []replay.Entry, l reassemble.Chain, from, to int) []replay.Entry {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return dst
	}
	es := e.timeline.Entries(l)
	if to < 0 || to > len(es) {
		to = len(es)
	}
	if from < 0 {
		from = 0
	}
	if from >= to {
		return dst
	}
	return append(dst, es[from:to]...)
}

// State rebuilds the state of entry i of line l from the timeline into dst
// (reusing its capacity).
func (e *Engine) State(dst []byte, l reassemble.Chain, i int) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return nil, errNoTimeline
	}
	return e.timeline.State(dst, l, i)
}

// Find returns the index of the newest OK state of line l at or before
// frame n of level sequence slsn, or -1; with held, only states the client
// acknowledged count (see replay.Timeline.Find).
func (e *Engine) Find(l reassemble.Chain, slsn int, n int32, held bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return -1
	}
	return e.timeline.Find(l, slsn, n, held)
}

// SLSNs returns the level sequences of line l whose states span frame n
// (see replay.Timeline.SLSNs).
func (e *Engine) SLSNs(l reassemble.Chain, n int32) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return nil
	}
	return e.timeline.SLSNs(l, n)
}

type engineError string

func (e engineError) Error() string { return string(e) }

const errNoTimeline = engineError("the engine keeps no state timeline (Config.Work lacks Timeline)")
