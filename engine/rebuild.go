package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// behind is the state rebuild when it runs behind the fast pass (see
// Config.RebuildBehind): the fast pass queues what the rebuild needs in a
// backlog, and one goroutine hands it to the Builder, whose chains rebuild
// the clients in parallel.
type behind struct {
	q     *backlog
	done  chan struct{} // closed when the rebuild has ended
	files pieceFiles    // the capture files the difs' pieces are read back from
	difs  difBuffers    // the buffers they are read into (the rebuild goroutine's)
	// fromFile counts the difs whose pieces were read back from their
	// capture file (the rebuild goroutine's).
	fromFile int
	// Under the engine's lock: the difs queued per line, in all.
	queued map[reassemble.Chain]int
	total  int
	// The rebuild goroutine's own.
	water   int             // the assembler's OldestPendingN as of the last op taken
	batch   []*replay.State // states rebuilt, not yet in the timeline
	out     []*replay.State // states to emit, in capture order
	added   int             // states in the timeline: Seq 0 to added-1
	rebuilt atomic.Int64
	aborted atomic.Bool
	// holding holds the rebuild while Run reads capture files: on a
	// machine of few cores the fast pass has them to itself, and the
	// rebuild, which has to wait for its later difs anyway, starts once
	// the capture is read (standard input and a live source are not
	// held: they may not end).
	holdMu  sync.Mutex
	holdC   sync.Cond
	holding bool
	pending []Event // the events emitted under the lock, to deliver (see lockRebuild)
	// Prioritize's: the line wished first, not yet handed to the backlog
	// (under the engine's lock).
	wish     reassemble.Chain
	wishUpTo int
	wished   bool
	// The rebuild goroutine's, for the difs taken ahead of their turn
	// (under the engine's lock where the states go in).
	runs     []seqRun     // the Builder's numbers to capture order
	deferred []earlyState // states in the timeline early, waiting for their turn, by Seq
	lineTab  []reassemble.Chain
	lineIDs  map[reassemble.Chain]int32
	locs     []*time.Location     // the locations of their times
	sides    map[int32]*earlySide // what their earlyStates cannot hold, by Seq
	popped   int                  // states taken off the front of deferred since it was last moved
	early    int                  // difs handed early whose states are not out yet
}

// hold holds the rebuild (on) or lets it go.
func (b *behind) hold(on bool) {
	b.holdMu.Lock()
	b.holding = on
	b.holdC.Broadcast()
	b.holdMu.Unlock()
}

// waitHeld waits while the rebuild is held.
func (b *behind) waitHeld() {
	b.holdMu.Lock()
	for b.holding {
		b.holdC.Wait()
	}
	b.holdMu.Unlock()
}

// lockRebuild takes the engine's lock for the rebuild goroutine: the
// events emitted under it (findings from states, warnings) are the
// rebuild's, delivered by unlockRebuild on its goroutine.
func (e *Engine) lockRebuild() {
	e.mu.Lock()
	e.sink = &e.bh.pending
}

// unlockRebuild releases the lock lockRebuild took and delivers the
// rebuild's events.
func (e *Engine) unlockRebuild() {
	b := e.bh
	e.sink = &e.pending
	evs := b.pending
	b.pending = nil
	e.mu.Unlock()
	e.deliver(evs)
	b.pending = evs[:0]
}

// queue hands an op to the rebuild.
func (b *behind) queue(o rebuildOp) { b.q.push(o) }

// rebuildBehind is the rebuild goroutine: it takes the ops in the order
// the fast pass queued them until the backlog is closed and empty (Finish)
// or aborted (Close).
func (e *Engine) rebuildBehind() {
	b := e.bh
	defer close(b.done)
	for {
		if len(b.batch) > 0 && !b.q.ready() {
			e.addStates() // nothing else to do: show what is rebuilt
		}
		b.waitHeld()
		o, ok := b.q.next(b.early < maxEarly)
		if !ok {
			break
		}
		if !o.early {
			b.water = o.water
		}
		switch o.kind {
		case opTaken:
			// The dif was handed early: it is in flight, as far as the
			// order of the events goes, from its turn on.
			e.order.added(o.seq, int(o.n))
		case opDif:
			if m := o.msg; m.Compressed == nil && m.Refs != nil {
				var err error
				if m.Compressed, err = b.files.read(m.Refs, b.difs.get); err != nil {
					m.Status, m.Err = reassemble.Corrupt, err
				}
				m.Refs = nil
				b.fromFile++
			}
			b.handed(e.builder.Added(), o.seq, o.early)
			if o.early {
				b.early++
			} else {
				e.order.added(o.seq, o.msg.LastN)
			}
			e.builder.Add(o.msg)
		case opAck:
			e.builder.Ack(o.line, o.n)
			if e.timeline != nil {
				e.mu.Lock()
				a := heldAck{Ack{Line: o.line, Frame: o.n, TS: o.ts}, o.seq}
				if o.early {
					e.heldEarly(a)
				} else {
					e.held = append(e.held, a)
				}
				e.applyAcks(b.added)
				e.mu.Unlock()
			}
		case opPlayer:
			e.builder.SetLinePlayer(o.line, int(o.n))
		case opEndLine:
			e.builder.EndLine(o.line)
		case opFlush:
			e.builder.Flush()
			e.addStates()
			if e.timeline != nil {
				e.mu.Lock()
				e.applyAcks(b.added)
				e.mu.Unlock()
			}
			if e.order.on {
				e.releaseStates(false)
			}
		}
	}
	e.builder.Close()
	e.addStates()
	e.lockRebuild()
	rest := e.addDeferred(int(^uint(0)>>1), nil)
	e.unlockRebuild()
	for _, s := range rest {
		e.stateAdded(s)
	}
	e.lockRebuild()
	if e.timeline != nil {
		e.applyAcks(int(^uint(0) >> 1))
	}
	if err := b.q.failure(); err != nil && e.cap.timelineErr == nil {
		e.cap.timelineErr = err
		e.warnf("%v", err)
	}
	e.unlockRebuild()
	if e.order.on && !b.aborted.Load() {
		e.releaseStates(true)
	}
	if e.finds != nil && !b.aborted.Load() {
		// Every state is in: the findings that waited for them.
		e.lockRebuild()
		e.finds.statesDone(e)
		e.unlockRebuild()
	}
}

// stateBatch is the most rebuilt states the rebuild holds before it adds
// them to the timeline under the engine's lock.
const stateBatch = 256

// addStates adds the batched states to the timeline and the figures, and
// emits them: in capture order, a state rebuilt ahead of its turn (see
// Prioritize) going to the timeline at once and to the figures and events
// at its turn.
func (e *Engine) addStates() {
	b := e.bh
	if len(b.batch) == 0 {
		return
	}
	out := b.out[:0]
	e.lockRebuild()
	for _, s := range b.batch {
		seq, early := b.global(s.Seq)
		s.Seq = seq
		if s.BaseSeq >= 0 {
			s.BaseSeq, _ = b.global(s.BaseSeq)
		}
		if early {
			e.addEarly(s)
		} else {
			out = e.addDeferred(s.Seq, out)
			e.addState(s)
			b.added = s.Seq + 1
			out = append(out, s)
		}
		// The timeline has its copy of the dif, and nothing else
		// holds the message's: its buffer serves again.
		b.difs.put(s.Dif)
		s.Dif = nil
		out = e.addDeferred(0, out)
	}
	b.rebuilt.Add(int64(len(b.batch)))
	e.startWish()
	e.unlockRebuild()
	for i, s := range out {
		e.stateAdded(s)
		out[i] = nil
	}
	b.out = out[:0]
	clear(b.batch)
	b.batch = b.batch[:0]
}

// pendingN is the smallest capture number a dif still to end can have,
// -1 for none (see reassemble.Assembler.OldestPendingN).
func (e *Engine) pendingN() int {
	if e.bh != nil {
		return e.bh.water
	}
	return e.asm.OldestPendingN()
}

// Progress is how far each pass of the engine has come.
type Progress struct {
	// Packets is the number of game packets the fast pass has indexed
	// (decoded, when the engine keeps no index).
	Packets int
	// Read is true once the fast pass has read every input (Finish).
	Read bool
	// Difs is the number of difs handed to the state rebuild, Rebuilt the
	// number of states rebuilt (ok or failed) of them.
	Difs, Rebuilt int
	// Done is true once every dif handed to the rebuild is rebuilt and
	// the fast pass is over (always true without States work). Until
	// then, with the rebuild behind the fast pass, the figures that come
	// from states are partial (ClientHealth.Partial says which
	// conversations' are), and the findings that need every state are
	// still to come: late inputs counted in the states, the level a level
	// change leads to, a player the states show leaving or dropped, a
	// client that left at the capture's end. They are found before Done
	// turns true, as FindingEvents on the rebuild's goroutine.
	Done bool
	// Lines is the rebuild's progress per line, in order of the first dif
	// (with Timeline work).
	Lines []LineProgress
	// KernelReceived and KernelDropped are the live source's kernel
	// counters so far (Stats has them too, at the cost of every figure).
	KernelReceived, KernelDropped uint64
}

// LineProgress is how far the rebuild of one line's states has come.
type LineProgress struct {
	Line    reassemble.Chain
	Difs    int // difs of the line handed to the rebuild
	Rebuilt int // and its states in the timeline
}

// Progress returns how far the fast pass and the rebuild have come.
func (e *Engine) Progress() Progress {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := Progress{Read: e.finished, Done: e.finished, KernelReceived: e.cap.counters.KernelReceived, KernelDropped: e.cap.counters.KernelDropped}
	if e.index != nil {
		p.Packets = e.index.Len()
	} else {
		e.trackMu.Lock()
		st := &e.tracker.Stats
		p.Packets = st.Game.Packets + st.Malformed.Packets + st.Unknown.Packets
		e.trackMu.Unlock()
	}
	if e.bh == nil {
		if e.builder != nil {
			p.Difs, p.Rebuilt = e.builder.Added(), e.builder.Emitted()
		}
		if e.timeline != nil {
			for _, l := range e.timeline.Lines() {
				n := len(e.timeline.Entries(l))
				p.Lines = append(p.Lines, LineProgress{Line: l, Difs: n, Rebuilt: n})
			}
		}
		return p
	}
	p.Difs, p.Rebuilt = e.bh.total, int(e.bh.rebuilt.Load())
	select {
	case <-e.bh.done:
	default:
		p.Done = false
	}
	if e.timeline != nil {
		// Every line queued has its place there (see Timeline.Reserve).
		for _, l := range e.timeline.Lines() {
			p.Lines = append(p.Lines, LineProgress{Line: l, Difs: e.bh.queued[l], Rebuilt: len(e.timeline.Entries(l))})
		}
	}
	return p
}

// Rebuilding reports whether the state rebuild is still running behind the
// fast pass (Config.RebuildBehind).
func (e *Engine) Rebuilding() bool {
	if e.bh == nil {
		return false
	}
	select {
	case <-e.bh.done:
		return false
	default:
		return true
	}
}

// Wait waits for the state rebuild to end (Config.RebuildBehind): every
// dif the fast pass found is rebuilt, once Finish has been called. Without
// RebuildBehind it returns at once.
func (e *Engine) Wait() {
	if e.bh != nil {
		<-e.bh.done
	}
}

// difBuffers recycles the buffers the rebuild reads difs into, so that a
// million difs do not cost a million allocations: each goes back once its
// state is in the timeline. Buffers are of a power of two bytes, from
// minDifBuffer on; at most maxFreeDifBytes of them wait to serve again.
type difBuffers struct {
	free  [difClasses][][]byte
	bytes int // in free
}

const (
	minDifBuffer    = 256
	difClasses      = 13 // up to 1 MiB
	maxFreeDifBytes = 4 << 20
)

// class is the class of buffers of at least n bytes, difClasses for none.
func difClass(n int) int {
	c := 0
	for size := minDifBuffer; size < n && c < difClasses; size <<= 1 {
		c++
	}
	return c
}

// get returns a buffer of at least n bytes.
func (d *difBuffers) get(n int) []byte {
	c := difClass(n)
	if c == difClasses {
		return make([]byte, n)
	}
	if f := d.free[c]; len(f) > 0 {
		b := f[len(f)-1]
		f[len(f)-1] = nil
		d.free[c] = f[:len(f)-1]
		d.bytes -= cap(b)
		return b
	}
	return make([]byte, minDifBuffer<<c)
}

// put gives back a buffer get returned (any other is left alone).
func (d *difBuffers) put(b []byte) {
	c := difClass(cap(b))
	if c == difClasses || cap(b) != minDifBuffer<<c || d.bytes+cap(b) > maxFreeDifBytes {
		return
	}
	d.free[c] = append(d.free[c], b[:0])
	d.bytes += cap(b)
}
