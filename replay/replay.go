// Package replay rebuilds the game states the server sent each client from
// the reassembled state difs: new = base − dif, bytewise, where the base is
// the client's state at the dif's src frame (all zeros for src 0).
//
// Clients are independent chains, so a Builder rebuilds each client on a
// goroutine of its own and hands the results back in the order the difs
// ended in the capture.
package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
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
)

func (s Status) String() string {
	return [...]string{"ok", "missing-base", "incomplete", "corrupt"}[s]
}

// ParseStatus parses a Status name as String gives it.
func ParseStatus(s string) (Status, error) {
	for st := OK; st <= Corrupt; st++ {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, fmt.Errorf("unknown status %q", s)
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

// Sub sets dst = base − dif bytewise (mod 256). dst may alias base. All
// three must have the same length.
func Sub(dst, base, dif []byte) {
	n := len(dst)
	i := 0
	// Eight bytes at a time: subtract without borrows crossing bytes
	// (SWAR): (a|H) − (b&^H) cannot borrow out of a byte, then fix bit 7.
	const h = 0x8080808080808080
	for ; i+8 <= n; i += 8 {
		a := binary.LittleEndian.Uint64(base[i:])
		b := binary.LittleEndian.Uint64(dif[i:])
		r := ((a | h) - (b &^ h)) ^ ((a ^ ^b) & h)
		binary.LittleEndian.PutUint64(dst[i:], r)
	}
	for ; i < n; i++ {
		dst[i] = base[i] - dif[i]
	}
}

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
	// MaxClients bounds the clients rebuilt (each holds History states);
	// the difs of further clients end Corrupt. 0 means 256.
	MaxClients int
	// Inspect, when set, is called for every OK state on the goroutine that
	// rebuilt it, with the inflated dif and the new state (both valid only
	// during the call); it may set State.Extra.
	Inspect func(s *State, dif, state []byte)
}

// Builder rebuilds states from messages. A message whose SLSN is negative
// (the legacy era has none on the wire) gets an inferred one.
//
// With reordering on the network, the dif that makes a base can complete
// after a dif that uses it: a dif whose base is not rebuilt yet waits (up to
// maxWait later difs of its client) and is rebuilt as soon as its base is.
// Its State is still emitted at its own place in the order, so a consumer can
// see a state before the state it is based on (Timeline links them). Add and Close must be called from
// one goroutine; emit is called from that same goroutine, in the order the
// messages were added.
type Builder struct {
	opt     Options
	emit    func(*State)
	clients map[netip.AddrPort]*chain
	next    int // sequence number of the next message added
	out     int // sequence number of the next state to emit
	results chan *State
	pending map[int]*State
	wg      sync.WaitGroup
	players map[netip.AddrPort]int
}

// New returns a Builder that calls emit for every state, in order.
func New(opt Options, emit func(*State)) *Builder {
	if opt.History <= 0 {
		opt.History = 16
	}
	if opt.MaxClients <= 0 {
		opt.MaxClients = 256
	}
	return &Builder{
		opt: opt, emit: emit,
		clients: map[netip.AddrPort]*chain{},
		results: make(chan *State, 256),
		pending: map[int]*State{},
		players: map[netip.AddrPort]int{},
	}
}

// Added is the number of messages added so far; the states of the first
// Added messages carry the Seq numbers 0 to Added-1.
func (b *Builder) Added() int { return b.next }

// SetPlayer records a client's player number for the states that follow.
func (b *Builder) SetPlayer(client netip.AddrPort, player int) { b.players[client] = player }

// Add hands one reassembled message to its client's chain.
func (b *Builder) Add(m *reassemble.Message) {
	c := b.clients[m.Client]
	if c == nil && len(b.clients) >= b.opt.MaxClients {
		s := &State{Seq: b.next, Client: m.Client, Player: -1, SLSN: max(m.SLSN, 0), Src: m.Src, Dst: m.Dst,
			TS: m.Last, N: m.LastN, Compressed: len(m.Compressed), Pieces: m.Pieces, Count: m.Count, Status: Corrupt,
			Err: fmt.Errorf("not rebuilt: more than %d clients", b.opt.MaxClients)}
		b.next++
		b.collect(s)
		return
	}
	if c == nil {
		c = &chain{opt: b.opt, in: make(chan job, 64), out: b.results}
		c.states = map[Frame]int{}
		c.depth = map[Frame]int{}
		b.clients[m.Client] = c
		b.wg.Add(1)
		go func() { defer b.wg.Done(); c.run() }()
	}
	pl, ok := b.players[m.Client]
	if !ok {
		pl = -1
	}
	j := job{seq: b.next, msg: m, player: pl}
	b.next++
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

// Restart ends a client's chain: the states of its next messages are
// rebuilt afresh (a new session: frames, level sequences and the state size
// start over), after the ones already added.
func (b *Builder) Restart(client netip.AddrPort) {
	if c := b.clients[client]; c != nil {
		close(c.in)
		delete(b.clients, client)
	}
}

// Close waits for every state to be rebuilt and emitted.
func (b *Builder) Close() {
	for _, c := range b.clients {
		close(c.in)
	}
	b.drain(true)
	b.wg.Wait()
}

// restartGap is how far back (in frames, 5 s) a keyframe's dst must be from
// the newest one for the legacy era's frames to count as restarted: delay
// and reordering move dsts by far less.
const restartGap = 200

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
}

// maxWait is how many later difs of the same client a dif whose base is
// not rebuilt yet waits for it: with reordering, the dif that makes the
// base can complete after the dif that uses it.
const maxWait = 64

// chain rebuilds one client's states in order.
type chain struct {
	opt    Options
	in     chan job
	out    chan<- *State
	inf    reassemble.Inflater
	dif    []byte
	size   int
	slsn   int   // legacy: inferred level sequence
	maxDst int32 // legacy: newest dst of this level sequence
	// ring of recent states, and their index by frame
	ring   [][]byte
	frames []Frame
	states map[Frame]int
	next   int
	depth  map[Frame]int // difs from the nearest keyframe or checkpoint
	zw     *zlib.Writer
	zbuf   bytes.Buffer
	// jobs waiting for their base, in arrival order
	waiting []job
}

// compress zlib-compresses a checkpoint, fast.
func (c *chain) compress(state []byte) []byte {
	c.zbuf.Reset()
	if c.zw == nil {
		c.zw, _ = zlib.NewWriterLevel(&c.zbuf, zlib.BestSpeed)
	} else {
		c.zw.Reset(&c.zbuf)
	}
	c.zw.Write(state)
	c.zw.Close()
	return bytes.Clone(c.zbuf.Bytes())
}

func (c *chain) run() {
	for j := range c.in {
		// Age the parked jobs; those that waited long enough end now.
		kept := c.waiting[:0]
		for _, w := range c.waiting {
			if w.waited++; w.waited > maxWait {
				w.final = true
				c.out <- c.build(w)
				continue
			}
			kept = append(kept, w)
		}
		c.waiting = kept
		if s := c.build(j); s != nil {
			c.out <- s
		}
	}
	for _, w := range c.waiting {
		w.final = true
		c.out <- c.build(w)
	}
	c.waiting = nil
}

// release builds the parked jobs whose base is frame f, now rebuilt.
func (c *chain) release(f Frame) {
	for i := 0; i < len(c.waiting); i++ {
		w := c.waiting[i]
		if w.slsn != f.SLSN || w.msg.Src != f.N {
			continue
		}
		c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
		i--
		if s := c.build(w); s != nil {
			c.out <- s
		}
	}
}

func (c *chain) build(j job) *State {
	m := j.msg
	s := &State{
		Seq: j.seq, Client: m.Client, Player: j.player, SLSN: m.SLSN, Src: m.Src, Dst: m.Dst,
		TS: m.Last, N: m.LastN, Compressed: len(m.Compressed), Pieces: m.Pieces, Count: m.Count,
	}
	if j.parked {
		s.SLSN = j.slsn
	} else if m.SLSN < 0 {
		// The legacy era does not send the level sequence: infer it. It is
		// 0, then +1 whenever the client's frames restart with a keyframe.
		// Only whole difs count: an abandoned one ends seconds late.
		if m.Status == reassemble.Complete {
			if m.Src == 0 && m.Dst+restartGap < c.maxDst {
				c.slsn++
				c.maxDst = 0
			}
			if m.Dst > c.maxDst {
				c.maxDst = m.Dst
			}
		}
		s.SLSN = c.slsn
	}
	switch m.Status {
	case reassemble.Incomplete:
		s.Status, s.Err = Incomplete, m.Err
		return s
	case reassemble.Corrupt:
		s.Status, s.Err = Corrupt, m.Err
		return s
	}
	size := c.size
	if c.opt.StateSize > 0 {
		size = c.opt.StateSize
	}
	dif, err := c.inf.Inflate(c.dif, m.Compressed, size)
	c.dif = dif
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
	var base []byte
	if m.Src != 0 {
		i, ok := c.states[Frame{s.SLSN, m.Src}]
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
		base = c.ring[i]
		if len(base) != len(dif) { // cannot happen once the size is fixed; never index past a base
			s.Status, s.Err = Corrupt, fmt.Errorf("inflates to %d bytes, its base has %d: %w", len(dif), len(base), reassemble.ErrSize)
			return s
		}
	}
	// The base's depth, read before slot can evict the base (it may be
	// the slot the new state reuses).
	depth := 0
	if base != nil {
		depth = c.depth[Frame{s.SLSN, m.Src}] + 1
	}
	dst := c.slot(Frame{s.SLSN, m.Dst}, len(dif))
	if base == nil {
		clear(dst)
		Sub(dst, dst, dif)
	} else {
		Sub(dst, base, dif)
	}
	s.Sum = sha256.Sum256(dst)
	s.Dif = m.Compressed
	if c.opt.CheckpointEvery > 0 && depth >= c.opt.CheckpointEvery {
		s.Checkpoint = c.compress(dst)
		depth = 0
	}
	c.depth[Frame{s.SLSN, m.Dst}] = depth
	if c.opt.Inspect != nil {
		c.opt.Inspect(s, dif, dst)
	}
	if c.opt.Keep {
		s.Data = append([]byte(nil), dst...)
	}
	if len(c.waiting) > 0 {
		c.release(Frame{s.SLSN, m.Dst})
	}
	return s
}

// slot returns the ring buffer to hold frame f's state, reusing the oldest
// one (or f's own, if f was rebuilt before). The base being read is never
// the slot returned: a dif's dst differs from its src.
func (c *chain) slot(f Frame, size int) []byte {
	if i, ok := c.states[f]; ok {
		return c.ring[i]
	}
	if len(c.ring) < c.opt.History {
		c.ring = append(c.ring, make([]byte, size))
		c.frames = append(c.frames, f)
		c.states[f] = len(c.ring) - 1
		return c.ring[len(c.ring)-1]
	}
	i := c.next
	c.next = (c.next + 1) % len(c.ring)
	delete(c.states, c.frames[i])
	delete(c.depth, c.frames[i])
	c.frames[i] = f
	c.states[f] = i
	if len(c.ring[i]) != size {
		c.ring[i] = make([]byte, size)
	}
	return c.ring[i]
}
