package engine

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// Prioritize asks the state rebuild running behind the fast pass
// (Config.RebuildBehind) to rebuild line l's states first: its difs that
// ended by capture packet upTo (every one queued so far, and every one to
// come, when upTo < 0) are rebuilt ahead of the other lines', which go on
// once they are done. A front end calls it with the line and packet under
// its cursor; each call replaces the last. The states are the same as in
// capture order, and the events and figures still come in that order: only
// the timeline has the line's states sooner (the lines keep the order of
// their first difs there). A line is taken first once its first dif is
// queued.
// Config.Inspect, which runs as a state is built, sees the Seq of the order
// the rebuild took the difs in; every other consumer sees capture order.
// Without a rebuild behind, or once it has ended, it does nothing.
func (e *Engine) Prioritize(l reassemble.Chain, upTo int) {
	if e.bh == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bh
	b.wish, b.wishUpTo, b.wished = l, upTo, true
	e.startWish()
}

// startWish hands the wished line to the backlog once it may go first
// (under the engine's lock).
func (e *Engine) startWish() {
	b := e.bh
	if !b.wished || b.queued[b.wish] == 0 {
		return
	}
	b.wished = false
	b.q.prioritize(b.wish, b.wishUpTo)
}

// seqRun maps the Builder's own sequence numbers (the order in which the
// rebuild hands it the difs) to the states' places in capture order: local
// numbers from local on are capture numbers from global on.
type seqRun struct {
	local, global int
	early         bool
}

// handed records that the dif handed to the Builder as local is dif global
// of the capture.
func (b *behind) handed(local, global int, early bool) {
	if n := len(b.runs); n > 0 && !early {
		r := b.runs[n-1]
		if !r.early && global-r.global == local-r.local {
			return
		}
	}
	b.runs = append(b.runs, seqRun{local, global, early})
}

// global returns the capture place of the Builder's local, and whether it
// was handed ahead of its turn.
func (b *behind) global(local int) (int, bool) {
	i := sort.Search(len(b.runs), func(i int) bool { return b.runs[i].local > local }) - 1
	if i < 0 {
		return local, false
	}
	r := b.runs[i]
	return r.global + local - r.local, r.early && local == r.local
}

// addEarly puts a state rebuilt ahead of its turn in the timeline (with
// its line's acknowledgements that came before its dif), and keeps it
// without its bytes for the figures and events at its turn (under the
// engine's lock).
func (e *Engine) addEarly(s *replay.State) {
	b := e.bh
	if e.timeline != nil {
		// Only this line's early acknowledgements can come before its
		// early state: a prefix of its own list (scanning every held
		// acknowledgement here made a long prioritized rebuild quadratic).
		// The held ones (few: the rebuild's own) are scanned; the two
		// are merged in the order of their turns.
		l := s.Line()
		q, k := e.early[l], 0
		n := 0
		for _, a := range e.held {
			if a.Line == l && a.after <= s.Seq {
				for ; k < len(q) && q[k].after <= a.after; k++ {
					e.timeline.Ack(l, q[k].Frame, q[k].TS)
				}
				e.timeline.Ack(a.Line, a.Frame, a.TS)
				continue
			}
			e.held[n] = a
			n++
		}
		clear(e.held[n:])
		e.held = e.held[:n]
		for ; k < len(q) && q[k].after <= s.Seq; k++ {
			e.timeline.Ack(l, q[k].Frame, q[k].TS)
		}
		e.popEarly(l, k)
		if err := e.timeline.Add(s); err != nil && e.cap.timelineErr == nil {
			e.cap.timelineErr = err
			e.warnf("state timeline: %v", err)
		}
	}
	es := b.pack(s)
	i, _ := slices.BinarySearchFunc(b.deferred, es.seq, func(d earlyState, seq int32) int { return int(d.seq) - int(seq) })
	b.deferred = slices.Insert(b.deferred, i, es)
}

// addDeferred gives the states rebuilt ahead of their turn whose turn has
// come (Seq below upTo, or the next in order) to the figures, and appends
// them to out for their events (under the engine's lock).
func (e *Engine) addDeferred(upTo int, out []*replay.State) []*replay.State {
	b := e.bh
	for len(b.deferred) > 0 && (int(b.deferred[0].seq) < upTo || int(b.deferred[0].seq) == b.added) {
		s := b.unpack(&b.deferred[0])
		b.deferred = b.deferred[1:]
		b.popped++
		b.early--
		e.difs.state(s)
		if e.health != nil {
			e.health.state(s)
		}
		if e.finds != nil {
			e.finds.state(s)
		}
		if e.timeline != nil {
			e.applyAcks(s.Seq + 1)
		}
		b.added = max(b.added, s.Seq+1)
		out = append(out, s)
	}
	if len(b.deferred) == 0 {
		b.deferred, b.popped = nil, 0
	} else if b.popped >= 1024 && b.popped > len(b.deferred) {
		// Most of the array is states gone: what waits moves to one of
		// its size (a copy of fewer states than were popped).
		b.deferred, b.popped = slices.Clone(b.deferred), 0
	}
	return out
}

// heldEarly holds an acknowledgement taken ahead of its turn among its
// line's early ones, in the order of their turns (under the engine's lock).
func (e *Engine) heldEarly(a heldAck) {
	if e.early == nil {
		e.early = map[reassemble.Chain][]heldAck{}
	}
	q := e.early[a.Line]
	i := sort.Search(len(q), func(i int) bool { return q[i].after > a.after })
	e.early[a.Line] = slices.Insert(q, i, a)
}

// popEarly drops the first n early acknowledgements of line l (under the
// engine's lock).
func (e *Engine) popEarly(l reassemble.Chain, n int) {
	q := e.early[l]
	if n == 0 {
		return
	}
	if n >= len(q) {
		delete(e.early, l)
		return
	}
	clear(q[:n])
	e.early[l] = q[n:]
}

// priority is the backlog's side of Prioritize: where the search for the
// line's next op stands, in memory and in the file, and the ops taken
// from the file ahead of their turn.
type priority struct {
	on    bool
	line  reassemble.Chain
	upTo  int      // the last capture packet of the difs wanted; < 0 for all
	mem   int      // the next op in memory to look at
	off   int64    // the next record in the file to look at
	taken takenOps // what stands for the ops taken from the file, by offset
	// takenAt are the offsets in taken: a line asked for again is looked
	// for from the head again, past the records it already took.
	takenAt map[int64]bool
	buf     []byte // read-ahead of the file from base
	base    int64
}

// prioritize makes next take line l's ops first, up to its dif that ends
// past capture packet upTo (upTo < 0: all of them).
func (q *backlog) prioritize(l reassemble.Chain, upTo int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := &q.pri
	if !p.on || p.line != l {
		p.mem, p.off = q.head, q.rOff
	}
	p.on, p.line, p.upTo = true, l, upTo
}

// opLine is the line an op is about.
func opLine(o *rebuildOp) reassemble.Chain {
	if o.kind == opDif {
		return o.msg.Chain()
	}
	return o.line
}

// stand is what stays in the queue's order for an op taken ahead of it.
func stand(o *rebuildOp) rebuildOp {
	if o.kind == opDif {
		return rebuildOp{kind: opTaken, water: o.water, seq: o.seq, n: int32(o.msg.LastN)}
	}
	return rebuildOp{kind: opSkip, water: o.water, seq: o.seq}
}

// takenOp is what stands for an op taken from the backlog's file ahead of
// its turn (see stand), kept small: a prioritized line of a long capture
// has a hundred thousand of them waiting for their turn.
type takenOp struct {
	off   int64 // the op's record in the file
	water int32
	seq   int32
	n     int32
	kind  uint8
}

func newTakenOp(off int64, o *rebuildOp) takenOp {
	s := stand(o)
	return takenOp{off: off, water: int32(s.water), seq: int32(s.seq), n: s.n, kind: s.kind}
}

func (t takenOp) op() rebuildOp {
	return rebuildOp{kind: t.kind, water: int(t.water), seq: int(t.seq), n: t.n}
}

// takenOps is a heap of ops taken from the file, the lowest offset first:
// the pops read the file in order, and a line prioritized after another
// takes ops from before the first one's.
type takenOps []takenOp

func (h takenOps) Len() int           { return len(h) }
func (h takenOps) Less(i, j int) bool { return h[i].off < h[j].off }
func (h takenOps) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *takenOps) Push(x any)        { *h = append(*h, x.(takenOp)) }
func (h *takenOps) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// take returns what stands for the op at offset off of the file, if it was
// taken, and forgets it.
func (h *takenOps) take(off int64) (rebuildOp, bool) {
	if len(*h) == 0 || (*h)[0].off != off {
		return rebuildOp{}, false
	}
	t := heap.Pop(h).(takenOp)
	if len(*h) == 0 && cap(*h) > 1024 {
		*h = nil // give back what a long prioritized line took
	}
	return t.op(), true
}

// wanted says whether op o is the prioritized line's next: take it, look
// past it, or stop at it (a flush, which all lines see in its place, or a
// dif past the packet wanted).
func (p *priority) wanted(o *rebuildOp) (take, stop bool) {
	lastN := 0
	if o.kind == opDif {
		lastN = o.msg.LastN
	}
	return p.wants(o.kind, opLine(o), lastN)
}

// wants is wanted for an op of kind about line l (a dif's: its LastN).
func (p *priority) wants(kind uint8, l reassemble.Chain, lastN int) (take, stop bool) {
	switch kind {
	case opTaken, opSkip:
		return false, false
	case opFlush:
		return false, true
	}
	if l != p.line {
		return false, false
	}
	if kind == opDif && p.upTo >= 0 && lastN > p.upTo {
		return false, true
	}
	return true, false
}

// peekOp reads of a record only what wanted needs: its kind, the line it
// is about and, for a dif, its LastN. The search for the prioritized
// line's next op looks at every record of the other lines: decoding them
// whole (a message each) was most of what it allocated.
func peekOp(rec []byte) (kind uint8, l reassemble.Chain, lastN int, err error) {
	if len(rec) == 0 {
		return 0, l, 0, errors.New("rebuild backlog: empty record")
	}
	r := &opReader{b: rec[1:]}
	kind = rec[0]
	r.int() // water
	l = r.line()
	if kind == opDif {
		r.int() // n
		r.int() // ts
		r.int() // seq
		l = r.line()
		for range 7 { // SLSN, Src, Dst, Status, Count, Pieces, Bytes
			r.int()
		}
		lastN = int(r.int())
	}
	return kind, l, lastN, r.err
}

// nextPrioritized takes the prioritized line's next op out of its turn,
// if one is waiting (under the backlog's lock).
func (q *backlog) nextPrioritized() (rebuildOp, bool) {
	p := &q.pri
	if !p.on {
		return rebuildOp{}, false
	}
	p.mem = max(p.mem, q.head)
	for ; p.mem < q.mem.len(); p.mem++ {
		o := q.mem.at(p.mem)
		take, stop := p.wanted(o)
		if stop {
			return rebuildOp{}, false
		}
		if take {
			got := *o
			q.memBytes -= o.size()
			*o = stand(o)
			q.memBytes += o.size()
			p.mem++
			return got, true
		}
	}
	p.off = max(p.off, q.rOff)
	for p.off < q.wOff {
		rec, next, err := q.recordAt(p.off)
		if err != nil {
			p.on = false // the rebuild goes on in order; the pop finds the error
			return rebuildOp{}, false
		}
		if p.takenAt[p.off] {
			p.off = next
			continue
		}
		kind, l, lastN, err := peekOp(rec)
		if err != nil {
			p.on = false
			return rebuildOp{}, false
		}
		take, stop := p.wants(kind, l, lastN)
		if stop {
			return rebuildOp{}, false
		}
		if take {
			o, err := readOp(rec)
			if err != nil {
				p.on = false
				return rebuildOp{}, false
			}
			heap.Push(&p.taken, newTakenOp(p.off, &o))
			if p.takenAt == nil {
				p.takenAt = map[int64]bool{}
			}
			p.takenAt[p.off] = true
			p.off = next
			return o, true
		}
		p.off = next
	}
	return rebuildOp{}, false
}

// recordAt returns the record at offset off of the file (off < wOff) and
// the offset of the next, reading ahead of the pop's own reads.
func (q *backlog) recordAt(off int64) ([]byte, int64, error) {
	p := &q.pri
	for try := 0; ; try++ {
		if off >= p.base && off < p.base+int64(len(p.buf)) {
			b := p.buf[off-p.base:]
			if n, k := binary.Uvarint(b); k > 0 && len(b)-k >= int(n) {
				return b[k : k+int(n)], off + int64(k) + int64(n), nil
			}
		}
		if try == 2 {
			return nil, 0, errors.New("rebuild backlog: record runs past the end of the file")
		}
		if err := q.flushWrites(); err != nil {
			return nil, 0, err
		}
		want := int64(1 << 20)
		if off >= p.base && off < p.base+int64(len(p.buf)) {
			// The record is longer than what was read of it.
			if n, k := binary.Uvarint(p.buf[off-p.base:]); k > 0 {
				want = max(want, int64(k)+int64(n))
			}
		}
		want = min(want, q.wOff-off)
		if int64(cap(p.buf)) < want {
			p.buf = make([]byte, want)
		}
		got, err := q.file.ReadAt(p.buf[:want], off)
		p.buf, p.base = p.buf[:got], off
		if got == 0 && err != nil {
			return nil, 0, fmt.Errorf("rebuild backlog: %w", err)
		}
	}
}
