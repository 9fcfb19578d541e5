package replay

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
)

type job struct {
	seq    int
	msg    *reassemble.Message
	player int
	// For a job parked until its base is rebuilt: its level sequence
	// (already inferred), how many jobs came since, and whether it must
	// now end as MissingBase.
	parked bool
	slsn   int
	waited int
	final  bool
	// Not a message: an acknowledgement of frame ackN, or a flush of the
	// parked jobs. A message or a flush may carry the acknowledgement
	// that came before it (ack with a msg or flush), taken first.
	ack   bool
	ackN  int32
	flush bool
	// A dif inflated ahead (see ahead): the inflated dif, in a buffer of
	// the chain's pool, zero outside spans, or the error.
	pre    bool
	dif    []byte
	spans  *spanList
	difErr error
}

// spanList holds the spans of a dif inflated ahead; they are reused
// through spanLists, so inflating ahead allocates nothing.
type spanList struct{ s []statedif.Span }

var spanLists = sync.Pool{New: func() any { return new(spanList) }}

// maxWait is how many later difs of the same client a dif whose base is
// not rebuilt yet waits for it: with reordering, the dif that makes the
// base can complete after the dif that uses it.
const maxWait = 64

// scratchBytes is the most a build's scratch buffers hold.
const scratchBytes = 2 * MaxStateSize

// buffers are the scratch of one build: the inflated dif, the new state,
// the inflater and the checkpoints' compressor. Only the builds under way
// hold one, so idle chains cost none.
type buffers struct {
	dif, state []byte
	difSpans   []statedif.Span // dif is zero outside them
	inf        reassemble.Inflater
	ckpt       []byte // the checkpoints' compressed bytes
}

// kept is a state a chain keeps as a possible base.
type kept struct {
	f     Frame
	seq   int
	data  []byte
	hash  statedif.Hash
	depth int // difs from the nearest keyframe or checkpoint
	// An acknowledged state's bytes are still those of ring slot slot
	// (≥ 0), copied to data only when the ring gives the slot up: a
	// client acknowledges about every state, and most acknowledged ones
	// are replaced by newer ones before their slot is.
	slot int
}

// aheadDifs is how many difs a chain inflates ahead of the one it builds.
const aheadDifs = 2

// chain rebuilds one client's states in order. Its difs are inflated ahead
// on a goroutine of their own (ahead), so a chain alone goes at the speed
// of the slower of inflating and applying, on two cores.
type chain struct {
	opt   Options
	in    chan job
	out   chan<- *State
	mem   *atomic.Int64
	size  int
	level LevelInference

	ready chan job // in's jobs, their difs inflated
	// The pool of inflated difs' buffers (aheadDifs+1 of them at most,
	// counted in the builder's memory budget), and the size ahead
	// inflates to (the chain's, as the builds set it).
	pool      chan []byte
	pooled    int
	aheadSize int

	// ring of recent states, and their index by frame (the newest state of
	// each frame)
	ring   []kept
	states map[Frame]int
	next   int
	// the newest acknowledged states, newest last, kept whatever their age
	// (each with a buffer of its own, which holds its bytes once the ring
	// gives up its slot)
	acked []kept
	// jobs waiting for their base, in arrival order
	waiting []job
	// the base of the waiters being released (see releaseWaiting)
	pinned *kept
	// The Builder's: an acknowledgement to hand over with the next job.
	ackNext  bool
	ackNextN int32
}

// compress compresses a checkpoint with S2: a game state in 36 µs to 11
// KB, against zlib's fastest level's 238 µs to 8 KB (a tenth of the
// rebuild's CPU with a checkpoint every 32 states; measured on the real
// states of modern/multi). Checkpoints stay within pmdump.
func (b *buffers) compress(state []byte) []byte {
	if n := s2.MaxEncodedLen(len(state)); cap(b.ckpt) < n {
		b.ckpt = make([]byte, n)
	}
	return bytes.Clone(s2.Encode(b.ckpt[:cap(b.ckpt)], state))
}

// ahead inflates the difs of in's jobs, in order, into buffers of the
// pool, and hands every job on to ready: the builds then only apply them.
// A dif the pool has no buffer for (the memory budget is spent) goes on
// as it came, to be inflated by its build.
func (c *chain) ahead() {
	defer close(c.ready)
	for j := range c.in {
		if m := j.msg; m != nil && willInflate(m) {
			if buf := c.buffer(); buf != nil {
				bufs := c.opt.Gate.enter()
				size := c.aheadSize
				if c.opt.StateSize > 0 {
					size = c.opt.StateSize
				}
				j.spans = spanLists.Get().(*spanList)
				j.dif, j.spans.s, j.difErr = inflateDif(&bufs.inf, buf, j.spans.s[:0], m, size)
				c.opt.Gate.leave(bufs)
				j.pre = true
				if c.aheadSize == 0 && j.difErr == nil && len(j.dif) > 0 {
					c.aheadSize = len(j.dif) // as build sets the chain's
				}
			}
		}
		c.ready <- j
	}
}

// buffer returns a buffer of the pool, waiting for one when aheadDifs+1
// are out, or nil when none can be had.
func (c *chain) buffer() []byte {
	select {
	case b := <-c.pool:
		return b
	default:
	}
	if c.pooled <= aheadDifs && c.reserve(MaxStateSize+1) {
		c.pooled++
		return make([]byte, 0, MaxStateSize+1)
	}
	if c.pooled == 0 {
		return nil
	}
	return <-c.pool
}

// recycle gives a job's inflated dif's buffer back to the pool.
func (c *chain) recycle(j *job) {
	if j.pre {
		b := j.dif[:0]
		if cap(b) != MaxStateSize+1 { // grown by a stream of unknown size
			b = make([]byte, 0, MaxStateSize+1)
		} else {
			statedif.ClearSpans(b[:cap(b)], j.spans.s) // all zeros for the next
		}
		spanLists.Put(j.spans)
		c.pool <- b
		j.pre, j.dif, j.spans, j.difErr = false, nil, nil, nil
	}
}

// willInflate says whether a build inflates m's dif: a whole dif that is
// not from a frame to itself.
func willInflate(m *reassemble.Message) bool {
	return m.Status == reassemble.Complete && !(m.Src == m.Dst && m.Src != 0)
}

// inflateDif inflates m's dif into dst as a build does: to size bytes, or
// when the size is not known yet to at most MaxStateSize. dst is zero but
// for the spans dirty (of the dif it last held); the dif is zero but for
// the spans returned (see reassemble.Inflater.InflateSparse).
func inflateDif(inf *reassemble.Inflater, dst []byte, dirty []statedif.Span, m *reassemble.Message, size int) ([]byte, []statedif.Span, error) {
	dif, spans, err := inf.InflateSparse(dst, dirty, m.Compressed, min(size, MaxStateSize))
	if size == 0 && err == nil && len(dif) > MaxStateSize {
		statedif.ClearSpans(dif, spans)
		return dif[:0], spans[:0], fmt.Errorf("inflates to more than %d bytes: %w", MaxStateSize, reassemble.ErrSize)
	}
	return dif, spans, err
}

func (c *chain) run() {
	defer c.release()
	for j := range c.ready {
		if j.ack {
			c.keepAcked(j.ackN)
			j.ack = false
		}
		switch {
		case j.msg == nil && !j.flush: // an acknowledgement alone
			continue
		case j.flush:
			c.endWaiting()
			continue
		}
		// Age the parked jobs; those that waited long enough end now.
		kept := c.waiting[:0]
		for _, w := range c.waiting {
			if w.waited++; w.waited > maxWait {
				w.final = true
				c.out <- c.gated(w)
				continue
			}
			kept = append(kept, w)
		}
		clear(c.waiting[len(kept):])
		c.waiting = kept
		if s := c.gated(j); s != nil {
			c.out <- s
		}
	}
	c.endWaiting()
}

// gated builds j once the gate lets the chain in.
func (c *chain) gated(j job) *State {
	bufs := c.opt.Gate.enter()
	defer c.opt.Gate.leave(bufs)
	return c.build(j, bufs)
}

// endWaiting ends every parked job as MissingBase.
func (c *chain) endWaiting() {
	w := c.waiting
	c.waiting = nil
	for _, j := range w {
		j.final = true
		c.out <- c.gated(j)
	}
}

// release returns the chain's memory to the builder's budget.
func (c *chain) release() {
	for _, k := range c.ring {
		c.mem.Add(-int64(cap(k.data)))
	}
	for _, k := range c.acked {
		c.mem.Add(-int64(cap(k.data)))
	}
	c.ring, c.acked = nil, nil
	c.mem.Add(-int64(c.pooled) * (MaxStateSize + 1))
	c.pooled = 0
}

// build rebuilds j's state in the scratch bufs.
func (c *chain) build(j job, bufs *buffers) *State {
	m := j.msg
	s := &State{
		Seq: j.seq, Client: m.Client, Conv: m.Conv, Player: j.player, SLSN: m.SLSN, Src: m.Src, Dst: m.Dst,
		TS: m.Last, N: m.LastN, Compressed: received(m), Pieces: m.Pieces, Count: m.Count, BaseSeq: -1,
	}
	if j.parked {
		s.SLSN = j.slsn
	} else if m.SLSN < 0 {
		s.SLSN = c.level.Infer(m)
	}
	defer c.recycle(&j)
	switch m.Status {
	case reassemble.Incomplete:
		s.Status, s.Err = Incomplete, m.Err
		return s
	case reassemble.Corrupt:
		s.Status, s.Err = Corrupt, m.Err
		return s
	case reassemble.Truncated:
		s.Status, s.Err = Truncated, m.Err
		return s
	}
	if m.Src == m.Dst && m.Src != 0 {
		s.Status, s.Err = Corrupt, fmt.Errorf("dif from frame %d to itself", m.Src)
		return s
	}
	size := c.size
	if c.opt.StateSize > 0 {
		size = c.opt.StateSize
	}
	var dif []byte
	var spans []statedif.Span
	var err error
	if j.pre {
		dif, spans, err = j.dif, j.spans.s, j.difErr
	} else {
		dif, spans, err = inflateDif(&bufs.inf, bufs.dif, bufs.difSpans, m, size)
		bufs.dif, bufs.difSpans = dif, spans
	}
	if err != nil {
		s.Status, s.Err = Corrupt, err
		return s
	}
	if len(dif) == 0 {
		// Only possible while the size is unknown. An empty state must not
		// become a base (a later dif of the real size would be applied
		// to it) nor set the size.
		s.Status, s.Err = Corrupt, fmt.Errorf("inflates to nothing: %w", reassemble.ErrSize)
		return s
	}
	if c.size == 0 {
		c.size = len(dif)
	}
	s.Size = len(dif)
	var base kept
	if m.Src != 0 {
		var ok bool
		base, ok = c.base(Frame{s.SLSN, m.Src})
		if !ok {
			if !j.final && len(c.waiting) < 4*maxWait {
				w := j
				w.parked, w.slsn = true, s.SLSN
				w.pre, w.dif, w.spans, w.difErr = false, nil, nil, nil // inflated again when its base comes
				c.waiting = append(c.waiting, w)
				return nil
			}
			s.Status = MissingBase
			s.Err = fmt.Errorf("base state %d (slsn %d) was never rebuilt", m.Src, s.SLSN)
			return s
		}
		if len(base.data) != len(dif) { // cannot happen once the size is fixed; never index past a base
			s.Status, s.Err = Corrupt, fmt.Errorf("inflates to %d bytes, its base has %d: %w", len(dif), len(base.data), reassemble.ErrSize)
			return s
		}
		s.BaseSeq = base.seq
	}
	// The base's depth, which goes with it (an acknowledged base kept
	// long after it left the recent states keeps its own).
	depth := 0
	if base.data != nil {
		depth = base.depth + 1
	}
	f := Frame{s.SLSN, m.Dst}
	// The new state goes straight to the ring slot it takes (the base's
	// own, when the base is the slot the ring gives up: the dif is then
	// applied in place), or to scratch when it is not kept: a frame
	// already held keeps its state, a second dif to the same frame never
	// overwrites a base.
	slot := -1
	var dst []byte
	if _, held := c.states[f]; !held {
		slot, dst = c.claim(len(dif))
	}
	if slot < 0 {
		if cap(bufs.state) < len(dif) {
			bufs.state = make([]byte, len(dif))
		}
		dst = bufs.state[:len(dif)]
	}
	s.Hash = statedif.ApplySpans(dst, base.data, dif, spans, base.hash)
	if c.opt.SHA256 {
		s.Sum = sha256.Sum256(dst)
	}
	s.Dif = m.Compressed
	if c.opt.CheckpointEvery > 0 && depth >= c.opt.CheckpointEvery {
		s.Checkpoint = bufs.compress(dst)
		depth = 0
	}
	if c.opt.Inspect != nil {
		c.opt.Inspect(s, dif, dst)
	}
	if c.opt.Keep {
		s.Data = append([]byte(nil), dst...)
	}
	if slot >= 0 {
		k := &c.ring[slot]
		k.f, k.seq, k.hash, k.depth = f, j.seq, s.Hash, depth
		c.states[f] = slot
	}
	if len(c.waiting) > 0 {
		c.releaseWaiting(f, bufs) // this build is done with bufs
	}
	return s
}

// releaseWaiting builds the parked jobs whose base is frame f, now rebuilt.
// Each is built once: one whose base is gone again (evicted by the others)
// ends as MissingBase rather than waiting again.
func (c *chain) releaseWaiting(f Frame, bufs *buffers) {
	var ready []job
	rest := c.waiting[:0]
	for _, w := range c.waiting {
		if w.slsn == f.SLSN && w.msg.Src == f.N {
			ready = append(ready, w)
			continue
		}
		rest = append(rest, w)
	}
	clear(c.waiting[len(rest):])
	c.waiting = rest
	if len(ready) == 0 {
		return
	}
	// Building the waiters can evict their base from the ring: they build
	// on a copy of it.
	if b, ok := c.base(f); ok {
		prev := c.pinned
		c.pinned = &kept{f: b.f, seq: b.seq, data: bytes.Clone(b.data), hash: b.hash, depth: b.depth, slot: -1}
		defer func() { c.pinned = prev }()
	}
	for _, w := range ready {
		w.final = true
		if s := c.build(w, bufs); s != nil {
			c.out <- s
		}
	}
}
