// Package engine is pmdump's analysis: it drives the flow capture source →
// session → reassemble → replay → timeline, with the collectors of packet
// counts, dif figures and netgame health, for every front end alike (the
// command line, the terminal UI, live capture).
//
// An Engine is fed datagrams, from files (Run), from any Source (RunSource)
// or one at a time (Feed), and advanced in time without packets (Tick). It
// reports what it finds as a stream of typed events (Config.OnEvent) and
// answers questions at any moment: Stats and Health snapshots, the packet
// Index for random access to any packet, and the state Timeline for random
// access to any state. Config.Work says which work to do, so a front end
// pays only for what it shows.
package engine

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// Work says which analysis an Engine does beyond decoding packets.
type Work uint8

const (
	// Index keeps a packet index: any game packet can be decoded again and
	// filtered without another pass over the capture (read again from a
	// pcap or pcapng file by its record's offset, or kept in a spool for
	// other inputs; see PacketIndex).
	Index Work = 1 << iota
	// Difs reassembles the stdf pieces into difs and keeps dif figures
	// from their headers; nothing is inflated.
	Difs
	// States inflates every dif and rebuilds every state (implies Difs).
	States
	// Timeline keeps every state for random access (implies States).
	Timeline
	// Health keeps the per-second netgame health (implies States).
	Health
	// Counts keeps per-conversation counts of packets and bytes per name
	// and direction (Stats' conversations' by_name).
	Counts
	// Findings finds what went wrong in the game (see Finding; implies
	// Difs). The kinds that need states are found when States is done too.
	Findings
)

// Config configures an Engine.
type Config struct {
	// Era forces a protocol era for every conversation; EraUnknown infers
	// it per conversation.
	Era decode.Version
	// Work is the analysis to do.
	Work Work
	// Schema is a state layout for states of a size the built-in schemas
	// do not know (health reads players' positions through it).
	Schema *schema.Schema
	// Inspect, when set, is called for every rebuilt state on the goroutine
	// that rebuilt it, with the inflated dif and the state (valid only
	// during the call, as State.Dif is); it may set State.Extra (see
	// Anatomy).
	Inspect func(s *replay.State, dif, state []byte)
	// OnEvent receives the events, without the engine's lock held: a
	// handler may ask for snapshots (Stats, Conversations, the index…)
	// or Stop. They come on the goroutine that calls Run, RunSource, Feed,
	// Tick or Finish, except the StateEvents and FindingEvents of a
	// rebuild behind the fast pass (RebuildBehind), which come on the
	// rebuild's goroutine, possibly while other events are delivered. A
	// handler must not drive the engine (Feed, Tick, Finish, Run).
	OnEvent func(Event)
	// OnPacket, when set, receives the packet events instead of OnEvent,
	// without boxing them in an Event: the fast path of a front end that
	// prints every packet. The event is valid only during the call; it
	// comes as OnEvent's would.
	OnPacket func(*PacketEvent)
	// Events is the kinds of events OnEvent receives; 0 is every kind. A
	// front end that shows only some (read prints packets and warnings,
	// stats only warnings and progress) saves the engine building the
	// others: following every packet's conversation, boxing every packet,
	// dif and acknowledgement.
	Events Events
	// Idle, when set, is called before the engine waits for a live input,
	// so a front end can flush its output.
	Idle func()
	// TempDir holds the temporary files of the timeline and the packet
	// index ("" for the system's).
	TempDir string
	// Select, when set, limits the States work (and the timeline) to the
	// conversations it selects; the others still count in the dif figures.
	Select *Selector
	// IndexLimit caps what the packet index keeps (the newest packets);
	// zero keeps every packet.
	IndexLimit IndexLimit
	// MemoryBudget bounds the bytes of difs, checkpoints and spooled
	// packets the timeline and the index keep in memory before they spill
	// to temporary files (shared when the engine keeps both, and with the
	// rebuild's backlog), and the index's entries kept in memory before
	// the others are paged out; 0 means 64 MiB.
	MemoryBudget int
	// RebuildBehind runs the state rebuild (States work: inflating,
	// applying, the timeline, the figures that need states) behind the
	// fast pass instead of in step with it. The fast pass (decoding,
	// conversations, the packet index, dif figures from the piece headers,
	// packet counts) then goes at reading speed and never waits for the
	// rebuild: what it hands the rebuild waits in a backlog that spills to
	// a temporary file past its share of MemoryBudget. The difs of a pcap
	// file are not kept there: only where their pieces are, read back
	// from the file by the rebuild. While Run reads capture files the
	// rebuild waits, so the fast pass has every core; it starts when
	// Run has read them (Finish), and runs beside standard input and a
	// live source. Run
	// returns when the capture is read; Rebuilding, Progress and Wait
	// follow the rebuild, and StateEvents come on the rebuild's
	// goroutine. Without it, Run returns when every state is rebuilt.
	RebuildBehind bool
	// Stopper, when set, stops the engine as its Stop does: an event
	// handler made before the engine can stop it through it.
	Stopper *Stopper
	// SHA256 makes every rebuilt state carry its sha256 (State.Sum), for
	// output that shows it or checks it against ground truth. Without it
	// states carry only their Hash, which tells them apart within the
	// process (the timeline's checks, desyncs) at a fraction of the cost.
	SHA256 bool
}

// A Stopper stops the engine it is given to (Config.Stopper): Run and
// RunSource return after the datagram they are at.
type Stopper struct{ stop atomic.Bool }

// Stop stops the engine.
func (s *Stopper) Stop() { s.stop.Store(true) }

// Stopped reports whether Stop was called.
func (s *Stopper) Stopped() bool { return s.stop.Load() }

// CheckpointEvery bounds the difs applied to rebuild any state from the
// timeline: 32 inflates of a 112 KB state take a few milliseconds.
const CheckpointEvery = 32

// Source is any source of datagrams: a capture file or stream, or a live
// interface.
type Source interface {
	// Next returns the next datagram, valid until the following call, or
	// the error that ended the source (io.EOF at its end).
	Next() (*source.Datagram, error)
	// Counters returns what the source has counted besides datagrams.
	Counters() source.Counters
}

// Engine is one analysis. Its methods are safe for concurrent use: a front
// end may ask for snapshots while another goroutine drives it.
type Engine struct {
	cfg Config
	mu  sync.Mutex
	// trackMu guards the tracker (taken after mu when both are): the
	// first stage of a fast pass in two stages takes it alone (front).
	trackMu    sync.Mutex
	convCopies []*session.Conversation // front's copies of the conversations, by id

	tracker  *session.Tracker
	probes   map[int]*stateProbe // by conversation id: learning its state size
	asm      *reassemble.Assembler
	builder  *replay.Builder
	timeline *replay.Timeline
	index    *PacketIndex
	input    int // the number the index gives the input being read, 0 when it cannot be read again
	refInput int // the input's number among the rebuild's piece files, 0 when its pieces are copied
	difs     *difFigures
	health   *healthCollector
	cap      captureFigures
	perConv  map[int]*convCounts
	counts   *convCounts // the last packet's conversation's, and its id
	countsID int
	lineMemo []lineMemo // by conversation id

	lines  map[netip.AddrPort]*session.Conversation // the current conversation of each client endpoint
	slsn   map[reassemble.Chain]int                 // a modern line's current level sequence (stdf, sjon)
	levels map[reassemble.Chain]*replay.LevelInference
	convs  map[int]convSig // what was last said of each conversation

	held       []heldAck                      // acknowledgements waiting for their states, in the order of their turns
	difScratch Dif                            // the Dif onMessage gives the collectors when no event takes it
	early      map[reassemble.Chain][]heldAck // those taken ahead of their turn, per line, in the order of their turns
	order      stateOrder
	badStdf    int
	finished   bool
	stop       *atomic.Bool // Config.Stopper's, or the engine's own
	lastN      int          // capture number of the newest datagram
	pev        PacketEvent
	lastConv   *session.Conversation // the conversation conversationChanged saw last
	lastSig    convSig
	lastTS     time.Time

	// The events emitted under the lock, delivered once it is released:
	// pending is the driving goroutine's, sink where emit puts them (the
	// rebuild's own list while the rebuild goroutine holds the lock).
	pending []Event
	sink    *[]Event

	findings []Finding // what the analysis found, in the order found
	finds    *findingCollector

	bh   *behind      // the rebuild, when it runs behind the fast pass
	gate *replay.Gate // the cores it may take then
}

type heldAck struct {
	Ack
	after int // states with Seq < after must be in the timeline first
}

// convSig is what a ConversationEvent reports of a conversation.
type convSig struct {
	era    decode.Version
	player int
	host   string
	color  int
	server netip.AddrPort
}

// New returns an engine.
func New(cfg Config) *Engine {
	if cfg.Work&(Timeline|Health) != 0 {
		cfg.Work |= States
	}
	if cfg.Work&(States|Findings) != 0 {
		cfg.Work |= Difs
	}
	if cfg.MemoryBudget <= 0 {
		cfg.MemoryBudget = 64 << 20
	}
	e := &Engine{
		cfg:     cfg,
		tracker: session.NewTracker(cfg.Era),
		perConv: map[int]*convCounts{},
		lines:   map[netip.AddrPort]*session.Conversation{},
		slsn:    map[reassemble.Chain]int{},
		levels:  map[reassemble.Chain]*replay.LevelInference{},
		convs:   map[int]convSig{},
		difs:    newDifFigures(),
		stop:    new(atomic.Bool),
	}
	if cfg.Stopper != nil {
		e.stop = &cfg.Stopper.stop
	}
	e.sink = &e.pending
	e.cap.linkTypes = map[string]int{}
	behindOn := cfg.RebuildBehind && cfg.Work&States != 0
	budget, parts := cfg.MemoryBudget, 0
	for _, on := range []bool{cfg.Work&Index != 0, cfg.Work&Timeline != 0, behindOn} {
		if on {
			parts++
		}
	}
	budget /= max(parts, 1) // the index, the timeline and the backlog share the budget
	if cfg.Work&Index != 0 {
		e.index = newPacketIndex(budget, cfg.TempDir, e.conversation, cfg.IndexLimit)
	}
	if cfg.Work&Difs != 0 {
		lim := reassemble.DefaultLimits
		lim.HeadersOnly = cfg.Work&States == 0 // figures from the piece headers only
		e.asm = reassemble.New(lim, e.onMessage)
		if cfg.Work&States == 0 {
			e.asm.LendMessages() // no rebuild keeps them
		}
	}
	if cfg.Work&Health != 0 {
		e.health = newHealthCollector(cfg.Schema)
	}
	if cfg.Work&Findings != 0 {
		e.finds = newFindingCollector(e.found)
		e.finds.user = cfg.Schema
		if e.health != nil {
			e.finds.levelOf = e.health.nextLevel
		}
	}
	if cfg.Work&States != 0 {
		opt := replay.Options{Inspect: e.inspect, SHA256: cfg.SHA256}
		if behindOn {
			// Every core for the rebuild, but one while the fast pass
			// runs: the packets come first.
			e.gate = replay.NewGate(runtime.GOMAXPROCS(0))
			e.gate.SetLimit(runtime.GOMAXPROCS(0) - 1)
			opt.Gate = e.gate
		}
		if cfg.Work&Timeline != 0 {
			opt.CheckpointEvery = CheckpointEvery
			e.timeline = replay.NewTimeline(budget, cfg.TempDir)
		}
		e.builder = replay.New(opt, e.onState)
	}
	e.order.on = e.wants(StateEvents)
	if behindOn {
		e.bh = &behind{q: newBacklog(budget, cfg.TempDir), done: make(chan struct{}), queued: map[reassemble.Chain]int{}, water: -1}
		e.bh.holdC.L = &e.bh.holdMu
		go e.rebuildBehind()
	}
	return e
}

// inspect runs the health's and the caller's inspections of a state.
func (e *Engine) inspect(s *replay.State, dif, state []byte) {
	if e.cfg.Inspect != nil {
		e.cfg.Inspect(s, dif, state)
	}
	if e.finds != nil {
		e.finds.inspect(s, state)
	}
	if e.health != nil {
		e.health.inspect(s, state)
	}
}

// Stop makes Run and RunSource return after the datagram they are at. It
// may be called from OnEvent.
func (e *Engine) Stop() { e.stop.Store(true) }

// Stopped reports whether Stop was called.
func (e *Engine) Stopped() bool { return e.stop.Load() }

// wants reports whether OnEvent receives events of kind k.
func (e *Engine) wants(k Events) bool {
	return e.cfg.OnEvent != nil && (e.cfg.Events == 0 || e.cfg.Events&k != 0)
}

// emit queues an event, with the engine's lock held: it is delivered once
// the lock is released (see unlock).
func (e *Engine) emit(ev Event) {
	if e.cfg.OnEvent != nil {
		*e.sink = append(*e.sink, ev)
	}
}

// emitNow delivers an event at once, without the engine's lock held.
func (e *Engine) emitNow(ev Event) {
	if e.cfg.OnEvent != nil {
		e.cfg.OnEvent(ev)
	}
}

// packetMark stands, among the queued events, for the packet event of
// OnPacket (Engine.pev).
type packetMark struct{}

func (packetMark) isEvent() {}

// unlock releases the engine's lock taken by the driving goroutine (Run,
// RunSource, Feed, Tick, Finish) and delivers the events queued under it.
//
// A live run has two driving goroutines (the source's and the ticker's), so
// the delivered list's buffer goes back for reuse under the lock, and only
// when the other has not started a list of its own meanwhile.
func (e *Engine) unlock() {
	evs := e.pending
	if len(evs) == 0 {
		e.mu.Unlock()
		return
	}
	e.pending = nil
	e.mu.Unlock()
	e.deliver(evs)
	e.mu.Lock()
	if e.pending == nil {
		e.pending = evs[:0]
	}
	e.mu.Unlock()
}

// deliver hands queued events to the handlers and clears the list.
func (e *Engine) deliver(evs []Event) {
	for i, ev := range evs {
		if _, ok := ev.(packetMark); ok {
			e.cfg.OnPacket(&e.pev)
		} else {
			e.cfg.OnEvent(ev)
		}
		evs[i] = nil
	}
}

func (e *Engine) warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	e.cap.warnings = append(e.cap.warnings, msg)
	if e.wants(WarningEvents) {
		e.emit(WarningEvent{Message: msg})
	}
}

// conversation returns a copy of conversation id, for the index.
func (e *Engine) conversation(id int) *session.Conversation {
	e.trackMu.Lock() // the tracker changes its conversations as packets come
	defer e.trackMu.Unlock()
	c := e.tracker.Conversation(id)
	if c == nil {
		return nil
	}
	cp := *c
	return &cp
}

// Conversations returns copies of every conversation seen so far, in order
// of appearance.
func (e *Engine) Conversations() []session.Conversation {
	e.trackMu.Lock()
	defer e.trackMu.Unlock()
	var out []session.Conversation
	for _, c := range e.tracker.Conversations() {
		out = append(out, *c)
	}
	return out
}

// Schema returns the layout of a state of size bytes of line l: the
// user's schema (Config.Schema) when it is of that size, else the built-in
// one of that size for the line's version (two versions have states of
// 112480 bytes), else one raw region. Every front end names a state's
// bytes through it.
func (e *Engine) Schema(l reassemble.Chain, size int) *schema.Schema {
	name := ""
	if c := e.conversation(l.Conv); c != nil && c.Version.Known() {
		name = c.Version.String()
	}
	return schema.ForVersion(name, size, e.cfg.Schema)
}
