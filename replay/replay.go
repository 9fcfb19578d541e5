// Package replay rebuilds the game states the server sent each client from
// the reassembled state difs: new = base − dif, bytewise, where the base is
// the client's state at the dif's src frame (all zeros for src 0).
//
// Clients are independent chains, so a Builder rebuilds each client on a
// goroutine of its own, as many at once as its Gate lets (GOMAXPROCS by
// default), and hands the results back in the order the difs ended in the
// capture.
package replay

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
)

// Status is the outcome of rebuilding one state.
type Status uint8

const (
	// OK: the state was rebuilt.
	OK Status = iota
	// MissingBase: the dif is whole but its base state was never rebuilt
	// (the capture started late, or the base's own dif was lost).
	MissingBase
	// Incomplete: pieces of the dif are missing.
	Incomplete
	// Corrupt: the dif's pieces disagree or it does not inflate to a state.
	Corrupt
	// Truncated: the capture cut pieces of the dif (snap length).
	Truncated
)

func (s Status) String() string {
	return [...]string{"ok", "missing-base", "incomplete", "corrupt", "truncated"}[s]
}

// Frame identifies a state of one client: frame numbers restart at every
// level change, which bumps the level-sequence number.
type Frame struct {
	SLSN int
	N    int32
}

// State is one rebuilt (or failed) state.
type State struct {
	Seq        int            // order in which its dif ended in the capture, from 0
	Client     netip.AddrPort // the client it was sent to
	Conv       int            // the conversation (see reassemble.Line), 0 when not known
	BaseSeq    int            // Seq of the state it was rebuilt on (OK, src ≠ 0); -1 for none
	Player     int            // the client's player number, -1 if unknown
	SLSN       int            // level sequence (inferred for the legacy era)
	Src, Dst   int32
	TS         time.Time // capture time of the dif's last piece
	N          int       // capture frame number of the dif's last piece
	Size       int       // state size in bytes (OK)
	Compressed int       // compressed dif bytes
	Pieces     int       // pieces received
	Count      int       // pieces the dif has
	Status     Status
	Err        error
	Sum        [32]byte // sha256 of the state (OK)
	Data       []byte   // the state itself, when the Builder keeps states
	Checkpoint []byte   // the state zlib-compressed, for a checkpoint (see Options)
	Dif        []byte   // the dif's zlib stream (the message's; do not modify)
	Extra      any      // set by Options.Inspect
}

// Keyframe reports whether the state was sent against an all-zero base.
func (s *State) Keyframe() bool { return s.Src == 0 }

// Line is the chain the state belongs to.
func (s *State) Line() reassemble.Line { return reassemble.Line{Conv: s.Conv, Client: s.Client} }

// Options configure a Builder.
type Options struct {
	// StateSize, when not 0, is the size every dif must inflate to.
	// Otherwise each client's first dif that inflates sets it.
	StateSize int
	// Keep makes each emitted OK State carry its bytes in Data (a copy).
	Keep bool
	// CheckpointEvery, when not 0, makes the Builder checkpoint a state
	// (State.Checkpoint: the state, zlib-compressed) whenever rebuilding it
	// from the nearest keyframe or checkpoint would take that many difs, so
	// any state can later be rebuilt from at most that many difs.
	CheckpointEvery int
	// History is how many recent states per client are kept as bases.
	History int
	// MaxClients bounds the clients rebuilt at once; the difs of further
	// clients end Corrupt. 0 means 256.
	MaxClients int
	// MaxMemory bounds the bytes of the states all chains keep as bases
	// (History recent ones and the newest acknowledged ones per client)
	// and of the scratch buffers of the builds under way (two of up to
	// MaxStateSize for each chain the Gate lets build at once). When it is
	// reached, a chain reuses its own oldest state instead of keeping one
	// more. 0 means DefaultMaxMemory.
	MaxMemory int
	// Inspect, when set, is called for every OK state on the goroutine that
	// rebuilt it, with the inflated dif and the new state (both valid only
	// during the call); it may set State.Extra.
	Inspect func(s *State, dif, state []byte)
	// Gate, when set, bounds how many chains build at once, and may be
	// shared by several Builders; nil gives the Builder a gate of its own
	// of GOMAXPROCS chains.
	Gate *Gate
}

// DefaultMaxMemory is the default bound on the states kept as bases: eight
// clients of a 110 KB state keep about 20 MB.
const DefaultMaxMemory = 64 << 20

// MaxStateSize is the largest state a Builder rebuilds: no version of the
// game has a state anywhere near it (they are about 110 KB), and a hostile
// capture must not make each client cost megabytes.
const MaxStateSize = 256 << 10

// keptAcked is how many of a client's newest acknowledged states are kept
// as bases, whatever their age: a server bases each dif on the newest state
// the client acknowledged, however old.
const keptAcked = 4

// Builder rebuilds states from messages. A message whose SLSN is negative
// (the legacy era has none on the wire) gets an inferred one (see
// LevelInference).
//
// With reordering on the network, the dif that makes a base can complete
// after a dif that uses it: a dif whose base is not rebuilt yet waits (up to
// maxWait later difs of its client) and is rebuilt as soon as its base is.
// Its State is still emitted at its own place in the order, so a consumer can
// see a state before the state it is based on (State.BaseSeq links them). Add,
// Ack, Flush and Close must be called from one goroutine; emit is called
// from that same goroutine, in the order the messages were added.
type Builder struct {
	opt     Options
	emit    func(*State)
	clients map[reassemble.Line]*chain
	next    int // sequence number of the next message added
	out     int // sequence number of the next state to emit
	results chan *State
	pending map[int]*State
	wg      sync.WaitGroup
	players map[reassemble.Line]int
	mem     *atomic.Int64 // bytes of states kept by all chains
}

// New returns a Builder that calls emit for every state, in order.
func New(opt Options, emit func(*State)) *Builder {
	if opt.History <= 0 {
		opt.History = 16
	}
	if opt.MaxClients <= 0 {
		opt.MaxClients = 256
	}
	if opt.MaxMemory <= 0 {
		opt.MaxMemory = DefaultMaxMemory
	}
	if opt.Gate == nil {
		opt.Gate = NewGate(runtime.GOMAXPROCS(0))
	}
	b := &Builder{
		opt: opt, emit: emit,
		clients: map[reassemble.Line]*chain{},
		results: make(chan *State, 256),
		pending: map[int]*State{},
		players: map[reassemble.Line]int{},
		mem:     new(atomic.Int64),
	}
	// The scratch buffers of the builds the gate lets run at once come
	// out of the budget first.
	b.mem.Add(int64(opt.Gate.Limit()) * scratchBytes)
	return b
}

// Added is the number of messages added so far; the states of the first
// Added messages carry the Seq numbers 0 to Added-1.
func (b *Builder) Added() int { return b.next }

// Emitted is the number of states emitted so far.
func (b *Builder) Emitted() int { return b.out }

// SetPlayer records a client's player number for the states that follow
// (conversation 0; see SetLinePlayer).
func (b *Builder) SetPlayer(client netip.AddrPort, player int) {
	b.SetLinePlayer(reassemble.Line{Client: client}, player)
}

// SetLinePlayer records the player number of a line's client for the
// states that follow.
func (b *Builder) SetLinePlayer(l reassemble.Line, player int) {
	if _, ok := b.players[l]; !ok && len(b.players) >= 4*b.opt.MaxClients {
		clear(b.players)
	}
	b.players[l] = player
}

// received is the compressed bytes a message got: all of them when it is
// complete, what arrived of them when not.
func received(m *reassemble.Message) int { return max(m.Bytes, len(m.Compressed)) }

func (b *Builder) stateOf(m *reassemble.Message, player int) *State {
	return &State{Seq: b.next, Client: m.Client, Conv: m.Conv, Player: player, SLSN: max(m.SLSN, 0), Src: m.Src, Dst: m.Dst,
		TS: m.Last, N: m.LastN, Compressed: received(m), Pieces: m.Pieces, Count: m.Count, BaseSeq: -1}
}

// Add hands one reassembled message to its client's chain.
func (b *Builder) Add(m *reassemble.Message) {
	l := m.Line()
	c := b.clients[l]
	pl, ok := b.players[l]
	if !ok {
		pl = -1
	}
	if c == nil && len(b.clients) >= b.opt.MaxClients {
		s := b.stateOf(m, pl)
		s.Status, s.Err = Corrupt, fmt.Errorf("not rebuilt: more than %d clients", b.opt.MaxClients)
		b.next++
		b.collect(s)
		return
	}
	if c == nil {
		c = &chain{opt: b.opt, in: make(chan job, 64), out: b.results, mem: b.mem}
		c.states = map[Frame]int{}
		b.clients[l] = c
		b.wg.Add(1)
		go func() { defer b.wg.Done(); c.run() }()
	}
	j := job{seq: b.next, msg: m, player: pl}
	b.next++
	b.send(c, j)
}

// send hands a job to a chain, collecting results while the chain is busy.
func (b *Builder) send(c *chain, j job) {
	for {
		select {
		case c.in <- j:
			b.drain(false)
			return
		case s := <-b.results:
			b.collect(s)
		}
	}
}

// Ack tells a line's chain that the client acknowledged its state of frame
// n (a stak): that state is kept as a base, however old it grows, until
// newer acknowledged ones replace it. A stak does not say the level
// sequence: the state meant is the newest rebuilt one of frame n.
func (b *Builder) Ack(l reassemble.Line, n int32) {
	if c := b.clients[l]; c != nil {
		b.send(c, job{ack: true, ackN: n})
	}
}

// Flush ends the wait of every dif waiting for its base (as MissingBase)
// and emits every state of the messages added so far: a live capture that
// goes quiet still shows its last states.
func (b *Builder) Flush() {
	for _, c := range b.clients {
		b.send(c, job{flush: true})
	}
	b.drain(true)
}

func (b *Builder) collect(s *State) {
	b.pending[s.Seq] = s
	for {
		s, ok := b.pending[b.out]
		if !ok {
			return
		}
		delete(b.pending, b.out)
		b.out++
		b.emit(s)
	}
}

func (b *Builder) drain(block bool) {
	for {
		if block {
			if b.out == b.next {
				return
			}
			b.collect(<-b.results)
			continue
		}
		select {
		case s := <-b.results:
			b.collect(s)
		default:
			return
		}
	}
}

// Restart ends a client's chain (conversation 0; see EndLine).
func (b *Builder) Restart(client netip.AddrPort) { b.EndLine(reassemble.Line{Client: client}) }

// EndLine ends a line's chain: its conversation is over. The states of
// messages added for it later are rebuilt afresh (frames, level sequences
// and the state size start over), after the ones already added.
func (b *Builder) EndLine(l reassemble.Line) {
	if c := b.clients[l]; c != nil {
		close(c.in)
		delete(b.clients, l)
	}
}

// Close waits for every state to be rebuilt and emitted.
func (b *Builder) Close() {
	for l, c := range b.clients {
		close(c.in)
		delete(b.clients, l)
	}
	b.drain(true)
	b.wg.Wait()
}

// restartGap is how far back (in frames, 5 s) a keyframe's dst must be from
// the newest one for the legacy era's frames to count as restarted: delay
// and reordering move dsts by far less.
const restartGap = 200

// MaxFrame is the largest game frame taken at its word: 2^24 frames are
// almost five days of play at 40 frames a second. A dif with a larger
// frame does not move the level-sequence inference (a hostile dst of 2^31
// must not make every later keyframe look like a level restart).
const MaxFrame = 1 << 24

// LevelInference infers the level sequence of one line's legacy difs,
// which do not carry it: it is 0, then +1 whenever the client's frames
// restart with a keyframe. Only whole difs move it (an abandoned one ends
// seconds late), in the order the difs ended.
type LevelInference struct {
	slsn   int
	maxDst int32
	// Implausible counts complete difs whose frames are beyond MaxFrame.
	Implausible int
}

// Current is the level sequence of the newest dif.
func (x *LevelInference) Current() int { return x.slsn }

// Infer returns the level sequence of message m.
func (x *LevelInference) Infer(m *reassemble.Message) int {
	if m.Status == reassemble.Complete {
		if m.Dst > MaxFrame || m.Src > MaxFrame || m.Dst < 0 || m.Src < 0 {
			x.Implausible++
			return x.slsn
		}
		if m.Src == 0 && m.Dst+restartGap < x.maxDst {
			x.slsn++
			x.maxDst = 0
		}
		if m.Dst > x.maxDst {
			x.maxDst = m.Dst
		}
	}
	return x.slsn
}

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
	// parked jobs.
	ack   bool
	ackN  int32
	flush bool
}

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
	inf        reassemble.Inflater
	zw         *zlib.Writer
	zbuf       bytes.Buffer
}

// kept is a state a chain keeps as a possible base.
type kept struct {
	f     Frame
	seq   int
	data  []byte
	depth int // difs from the nearest keyframe or checkpoint
}

// chain rebuilds one client's states in order.
type chain struct {
	opt   Options
	in    chan job
	out   chan<- *State
	mem   *atomic.Int64
	size  int
	level LevelInference
	// ring of recent states, and their index by frame (the newest state of
	// each frame)
	ring   []kept
	states map[Frame]int
	next   int
	// the newest acknowledged states, newest last, kept whatever their age
	acked []kept
	// jobs waiting for their base, in arrival order
	waiting []job
	// the base of the waiters being released (see releaseWaiting)
	pinned *kept
}

// compress zlib-compresses a checkpoint, fast.
func (b *buffers) compress(state []byte) []byte {
	b.zbuf.Reset()
	if b.zw == nil {
		b.zw, _ = zlib.NewWriterLevel(&b.zbuf, zlib.BestSpeed)
	} else {
		b.zw.Reset(&b.zbuf)
	}
	b.zw.Write(state)
	b.zw.Close()
	return bytes.Clone(b.zbuf.Bytes())
}

func (c *chain) run() {
	defer c.release()
	for j := range c.in {
		switch {
		case j.ack:
			c.keepAcked(j.ackN)
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
}

// keepAcked keeps the newest rebuilt state of frame n as an acknowledged
// base.
func (c *chain) keepAcked(n int32) {
	var src *kept
	for i := range c.ring {
		k := &c.ring[i]
		if k.data != nil && k.f.N == n && (src == nil || k.seq > src.seq) {
			src = k
		}
	}
	if src == nil {
		return
	}
	for _, a := range c.acked {
		if a.seq == src.seq {
			return
		}
	}
	var buf []byte
	if len(c.acked) >= keptAcked {
		buf = c.acked[0].data
		c.acked = append(c.acked[:0], c.acked[1:]...)
	}
	if len(buf) != len(src.data) {
		if buf != nil {
			c.mem.Add(-int64(cap(buf)))
		}
		if !c.reserve(len(src.data)) {
			return
		}
		buf = make([]byte, len(src.data))
	}
	copy(buf, src.data)
	c.acked = append(c.acked, kept{f: src.f, seq: src.seq, data: buf, depth: src.depth})
}

// reserve takes n bytes from the builder's budget, if it has them.
func (c *chain) reserve(n int) bool {
	if c.mem.Add(int64(n)) > int64(c.opt.MaxMemory) {
		c.mem.Add(-int64(n))
		return false
	}
	return true
}

// base finds the state of frame f: a recent one, or an acknowledged one.
func (c *chain) base(f Frame) (kept, bool) {
	if c.pinned != nil && c.pinned.f == f {
		return *c.pinned, true
	}
	if i, ok := c.states[f]; ok {
		return c.ring[i], true
	}
	for i := len(c.acked) - 1; i >= 0; i-- {
		if c.acked[i].f == f {
			return c.acked[i], true
		}
	}
	return kept{}, false
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
	dif, err := bufs.inf.Inflate(bufs.dif, m.Compressed, min(size, MaxStateSize))
	bufs.dif = dif
	if size == 0 && err == nil && len(dif) > MaxStateSize {
		err = fmt.Errorf("inflates to more than %d bytes: %w", MaxStateSize, reassemble.ErrSize)
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
				j.parked, j.slsn = true, s.SLSN
				c.waiting = append(c.waiting, j)
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
	// The new state goes to scratch first: the base may be the ring slot
	// the new state takes.
	if cap(bufs.state) < len(dif) {
		bufs.state = make([]byte, len(dif))
	}
	dst := bufs.state[:len(dif)]
	statedif.Sub(dst, base.data, dif) // a nil base: zeros
	s.Sum = sha256.Sum256(dst)
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
	if _, held := c.states[f]; !held {
		// A frame already held keeps its state: a second dif to the same
		// frame never overwrites a base.
		c.keep(f, j.seq, dst, depth)
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
		c.pinned = &kept{f: b.f, seq: b.seq, data: bytes.Clone(b.data), depth: b.depth}
		defer func() { c.pinned = prev }()
	}
	for _, w := range ready {
		w.final = true
		if s := c.build(w, bufs); s != nil {
			c.out <- s
		}
	}
}

// keep stores state as frame f's in the ring, reusing the oldest slot when
// the ring is full or the memory budget is spent. It reports whether the
// state was kept.
func (c *chain) keep(f Frame, seq int, state []byte, depth int) bool {
	if len(c.ring) < c.opt.History && c.reserve(len(state)) {
		data := make([]byte, len(state))
		copy(data, state)
		c.ring = append(c.ring, kept{f: f, seq: seq, data: data, depth: depth})
		c.states[f] = len(c.ring) - 1
		return true
	}
	if len(c.ring) == 0 {
		return false
	}
	i := c.next
	c.next = (c.next + 1) % len(c.ring)
	old := &c.ring[i]
	if c.states[old.f] == i {
		delete(c.states, old.f)
	}
	if len(old.data) != len(state) {
		return false // the size never changes within a chain
	}
	copy(old.data, state)
	old.f, old.seq, old.depth = f, seq, depth
	c.states[f] = i
	return true
}
