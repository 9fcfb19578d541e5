package replay

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pmdump/pmdump/reassemble"
)

// Options configure a Builder.
type Options struct {
	// StateSize, when not 0, is the size every dif must inflate to.
	// Otherwise each client's first dif that inflates sets it.
	StateSize int
	// Keep makes each emitted OK State carry its bytes in Data (a copy).
	Keep bool
	// SHA256 makes each emitted OK State carry its sha256 in Sum. Every
	// OK State carries its Hash, which is enough to compare states within
	// the process and costs a fraction of it.
	SHA256 bool
	// CheckpointEvery, when not 0, makes the Builder checkpoint a state
	// (State.Checkpoint: the state, S2-compressed) whenever rebuilding it
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
	clients map[reassemble.Chain]*chain
	next    int // sequence number of the next message added
	out     int // sequence number of the next state to emit
	results chan *State
	pending map[int]*State
	wg      sync.WaitGroup
	players map[reassemble.Chain]int
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
		clients: map[reassemble.Chain]*chain{},
		results: make(chan *State, 256),
		pending: map[int]*State{},
		players: map[reassemble.Chain]int{},
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
	b.SetLinePlayer(reassemble.Chain{Client: client}, player)
}

// SetLinePlayer records the player number of a line's client for the
// states that follow.
func (b *Builder) SetLinePlayer(l reassemble.Chain, player int) {
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
	l := m.Chain()
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
		c = &chain{opt: b.opt, in: make(chan job, 64), ready: make(chan job, aheadDifs-1), out: b.results, mem: b.mem,
			pool: make(chan []byte, aheadDifs+1)}
		c.states = map[Frame]int{}
		b.clients[l] = c
		b.wg.Add(2)
		go func() { defer b.wg.Done(); c.ahead() }()
		go func() { defer b.wg.Done(); c.run() }()
	}
	j := job{seq: b.next, msg: m, player: pl}
	b.next++
	j.ack, j.ackN = c.ackNext, c.ackNextN
	c.ackNext = false
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
func (b *Builder) Ack(l reassemble.Chain, n int32) {
	c := b.clients[l]
	if c == nil {
		return
	}
	// It goes with the chain's next job: one hand-over, not two, for
	// the acknowledgement a client sends about every state.
	b.sendAck(c)
	c.ackNext, c.ackNextN = true, n
}

// sendAck hands the chain the acknowledgement waiting to go with its next
// job, if there is one, on its own.
func (b *Builder) sendAck(c *chain) {
	if c.ackNext {
		c.ackNext = false
		b.send(c, job{ack: true, ackN: c.ackNextN})
	}
}

// Flush ends the wait of every dif waiting for its base (as MissingBase)
// and emits every state of the messages added so far: a live capture that
// goes quiet still shows its last states.
func (b *Builder) Flush() {
	for _, c := range b.clients {
		j := job{flush: true, ack: c.ackNext, ackN: c.ackNextN}
		c.ackNext = false
		b.send(c, j)
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
func (b *Builder) Restart(client netip.AddrPort) { b.EndLine(reassemble.Chain{Client: client}) }

// EndLine ends a line's chain: its conversation is over. The states of
// messages added for it later are rebuilt afresh (frames, level sequences
// and the state size start over), after the ones already added.
func (b *Builder) EndLine(l reassemble.Chain) {
	if c := b.clients[l]; c != nil {
		b.sendAck(c)
		close(c.in)
		delete(b.clients, l)
	}
}

// Close waits for every state to be rebuilt and emitted.
func (b *Builder) Close() {
	for l, c := range b.clients {
		b.sendAck(c)
		close(c.in)
		delete(b.clients, l)
	}
	b.drain(true)
	b.wg.Wait()
}
