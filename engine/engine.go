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
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
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
	Era decode.Era
	// Work is the analysis to do.
	Work Work
	// Schema is a state layout for states of a size the built-in schemas
	// do not know (health reads players' positions through it).
	Schema *schema.Schema
	// Inspect, when set, is called for every rebuilt state on the goroutine
	// that rebuilt it, with the inflated dif and the state (valid only
	// during the call); it may set State.Extra (see Anatomy).
	Inspect func(s *replay.State, dif, state []byte)
	// OnEvent receives the events: on the goroutine that calls Run,
	// RunSource, Feed, Tick or Finish, with the engine's lock held (so it
	// must not call the engine's methods other than Stop), except the
	// StateEvents of a rebuild behind the fast pass (RebuildBehind), which
	// come on the rebuild's goroutine without the lock, possibly while
	// other events are delivered.
	OnEvent func(Event)
	// OnPacket, when set, receives the packet events instead of OnEvent,
	// without boxing them in an Event: the fast path of a front end that
	// prints every packet. The event is valid only during the call.
	OnPacket func(*PacketEvent)
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
	// rebuild's backlog); 0 means 64 MiB.
	MemoryBudget int
	// RebuildBehind runs the state rebuild (States work: inflating,
	// applying, the timeline, the figures that need states) behind the
	// fast pass instead of in step with it. The fast pass (decoding,
	// conversations, the packet index, dif figures from the piece headers,
	// packet counts) then goes at reading speed and never waits for the
	// rebuild: what it hands the rebuild waits in a backlog that spills to
	// a temporary file past its share of MemoryBudget. Run returns when
	// the capture is read; Rebuilding, Progress and Wait follow the
	// rebuild, and StateEvents come on the rebuild's goroutine. Without
	// it, Run returns when every state is rebuilt.
	RebuildBehind bool
	// Stopper, when set, stops the engine as its Stop does: an event
	// handler made before the engine can stop it through it.
	Stopper *Stopper
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

	tracker  *session.Tracker
	asm      *reassemble.Assembler
	builder  *replay.Builder
	timeline *replay.Timeline
	index    *PacketIndex
	input    int // the number the index gives the input being read, 0 when it cannot be read again
	difs     *difFigures
	health   *healthCollector
	cap      captureFigures
	perConv  map[int]*convCounts
	counts   *convCounts // the last packet's conversation's, and its id
	countsID int
	lineMemo []lineMemo // by conversation id

	lines  map[netip.AddrPort]*session.Conversation // the current conversation of each client endpoint
	slsn   map[reassemble.Line]int                  // a modern line's current level sequence (stdf, sjon)
	levels map[reassemble.Line]*replay.LevelInference
	convs  map[int]convSig // what was last said of each conversation

	held     []heldAck
	order    stateOrder
	badStdf  int
	finished bool
	stop     *atomic.Bool // Config.Stopper's, or the engine's own
	lastN    int          // capture number of the newest datagram
	pev      PacketEvent
	lastConv *session.Conversation // the conversation conversationChanged saw last
	lastSig  convSig
	lastTS   time.Time

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
	era    decode.Era
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
		slsn:    map[reassemble.Line]int{},
		levels:  map[reassemble.Line]*replay.LevelInference{},
		convs:   map[int]convSig{},
		difs:    newDifFigures(),
		stop:    new(atomic.Bool),
	}
	if cfg.Stopper != nil {
		e.stop = &cfg.Stopper.stop
	}
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
	}
	if cfg.Work&Health != 0 {
		e.health = newHealthCollector(cfg.Schema)
	}
	if cfg.Work&Findings != 0 {
		e.finds = newFindingCollector(e.found)
		if e.health != nil {
			e.finds.levelOf = e.health.nextLevel
		}
	}
	if cfg.Work&States != 0 {
		opt := replay.Options{Inspect: e.inspect}
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
	e.order.on = cfg.OnEvent != nil
	if behindOn {
		e.bh = &behind{q: newBacklog(budget, cfg.TempDir), done: make(chan struct{}), queued: map[reassemble.Line]int{}, water: -1}
		go e.rebuildBehind()
	}
	return e
}

// inspect runs the health's and the caller's inspections of a state.
func (e *Engine) inspect(s *replay.State, dif, state []byte) {
	if e.cfg.Inspect != nil {
		e.cfg.Inspect(s, dif, state)
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

func (e *Engine) emit(ev Event) {
	if e.cfg.OnEvent != nil {
		e.cfg.OnEvent(ev)
	}
}

func (e *Engine) warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	e.cap.warnings = append(e.cap.warnings, msg)
	e.emit(WarningEvent{Message: msg})
}

// ErrUnreadable is wrapped by Run's error when inputs could not be read at
// all.
var ErrUnreadable = errors.New("inputs could not be read")

// Run reads capture files (or "-" for standard input, or "sample:NAME" for a
// bundled sample) one after the other as one capture, frames numbered on,
// and then finishes the analysis (see Finish). Problems with an input are
// reported as warnings and the run goes on with the next; an input that
// cannot be opened at all, or of which nothing could be read, makes Run
// return an error wrapping ErrUnreadable once the others are read; one cut
// short or stopped at a record that cannot be read is in Stats.Damaged.
func (e *Engine) Run(ctx context.Context, inputs ...string) error {
	var unreadable []error
	for _, name := range inputs {
		in, err := OpenInput(name)
		if err != nil {
			err = fmt.Errorf("cannot read %s: %w", name, err)
			unreadable = append(unreadable, err)
			e.mu.Lock()
			e.cap.unreadable = append(e.cap.unreadable, err.Error())
			e.mu.Unlock()
			e.emit(WarningEvent{Message: err.Error(), Unreadable: true})
			continue
		}
		e.mu.Lock()
		e.cap.inputs = append(e.cap.inputs, name)
		e.cap.formats = append(e.cap.formats, in.Reader.Format())
		in.Reader.SetFrameBase(e.cap.counters.Frames)
		e.mu.Unlock()
		e.input = 0
		if e.index != nil && in.Path != "" {
			if rr, ok := source.OpenRereader(in.Path, in.Reader, in.Stat); ok {
				e.input = e.index.addInput(rr)
			}
		}
		pf := source.Prefetch(in.Reader)
		pf.Idle = e.cfg.Idle
		err = e.runSource(ctx, pf, in)
		e.input = 0
		pf.Close()
		in.Close()
		if err != nil {
			return err
		}
		if e.stop.Load() {
			break
		}
	}
	e.Finish()
	if unreadable = append(unreadable, e.takeEmptyInputs()...); len(unreadable) > 0 {
		return unreadableError(unreadable, len(inputs))
	}
	return nil
}

// RunSource reads a source (a live interface, say) until it ends, ctx is
// done or Stop is called. It does not finish the analysis: call Tick while
// the source is quiet and Finish at the end.
func (e *Engine) RunSource(ctx context.Context, src Source) error {
	return e.runSource(ctx, src, nil)
}

func (e *Engine) runSource(ctx context.Context, src Source, in *Input) error {
	e.mu.Lock()
	base := e.cap.counters
	e.cap.baseLinkTypes = maps.Clone(e.cap.linkTypes)
	e.mu.Unlock()
	lastProgress := time.Now()
	progress := func(done bool) {
		if in == nil {
			return
		}
		e.emit(ProgressEvent{Input: in.Name, Read: in.Read(), Total: in.Size, Frames: e.cap.counters.Frames, Done: done})
	}
	// The lock is held over runs of up to lockRun datagrams the source
	// has at hand, not taken for each: snapshots wait a few microseconds
	// at most, and a large capture saves a lock per packet.
	ready, _ := src.(interface{ Ready() bool })
	locked := false
	unlock := func() {
		if locked {
			e.mu.Unlock()
			locked = false
		}
	}
	defer unlock()
	for i := 0; ; i++ {
		if i&255 == 0 {
			unlock()
			if err := ctx.Err(); err != nil {
				e.mu.Lock()
				e.addCounters(base, src.Counters())
				e.mu.Unlock()
				return err
			}
			if time.Since(lastProgress) > 100*time.Millisecond { // the counters (a live source's kernel drops) and the progress
				lastProgress = time.Now()
				e.mu.Lock()
				e.addCounters(base, src.Counters())
				progress(false)
				e.mu.Unlock()
			}
		}
		if locked && (i%lockRun == 0 || ready == nil || !ready.Ready()) {
			unlock() // the source may wait for its next datagram
		}
		d, err := src.Next()
		if err != nil {
			unlock()
			e.mu.Lock()
			c := src.Counters()
			e.addCounters(base, c)
			for _, w := range c.Warnings() { // unsupported link types, fragments given up, kernel drops
				e.warnf("%s", w)
			}
			if err != io.EOF && !errors.Is(err, context.Canceled) {
				e.inputEnded(in, c.Frames-base.Frames, err)
			}
			progress(true)
			e.mu.Unlock()
			if errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		}
		if !locked {
			e.mu.Lock()
			locked = true
		}
		e.feed(d)
		if e.stop.Load() {
			e.addCounters(base, src.Counters())
			return nil
		}
	}
}

// The fields of the packets feed reads, resolved once.
var (
	stdfSrc   = decode.MustRef(decode.EraUnknown, "src", "stdf")
	stdfDst   = decode.MustRef(decode.EraUnknown, "dst", "stdf")
	stdfSeq   = decode.MustRef(decode.EraUnknown, "seq", "stdf")
	stdfCount = decode.MustRef(decode.EraUnknown, "count", "stdf")
	stdfStart = decode.MustRef(decode.EraUnknown, "start", "stdf")
	stdfData  = decode.MustRef(decode.EraUnknown, "data", "stdf")
	stdfSLSN  = decode.MustRef(decode.Modern, "slsn", "stdf") // the legacy stdf has none
	sjonSLSN  = decode.MustRef(decode.Modern, "slsn", "sjon")
)

// lockRun is the most datagrams runSource analyses under one lock.
const lockRun = 64

// Feed analyses one datagram. Datagrams must come in capture order.
func (e *Engine) Feed(d *source.Datagram) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.feed(d)
}

func (e *Engine) feed(d *source.Datagram) {
	if e.finished {
		return
	}
	e.cap.see(d.TS)
	e.lastN, e.lastTS = d.N, d.TS
	r := e.tracker.Process(d)
	if r.Kind == session.NonGame {
		return
	}
	idx := -1
	if e.index != nil {
		idx = e.index.add(r, d, e.input)
	}
	if c := r.Conv; c != nil {
		if e.cfg.OnEvent != nil {
			e.conversationChanged(c)
		}
		if e.cfg.Work&Counts != 0 {
			e.countName(r)
		}
	}
	if e.cfg.OnPacket != nil {
		e.pev = PacketEvent{Record: r, Index: idx, First: e.cap.first, Datagram: d, Digits: d.Digits}
		e.cfg.OnPacket(&e.pev)
	} else if e.cfg.OnEvent != nil {
		e.emit(PacketEvent{Record: r, Index: idx, First: e.cap.first, Datagram: d, Digits: d.Digits})
	}
	if e.health != nil {
		e.health.record(r)
	}
	if e.finds != nil {
		e.finds.packet(r, d)
	}
	if e.asm == nil || r.Conv == nil || r.Conv.ID == 0 {
		return
	}
	c := r.Conv
	if r.Kind == session.Malformed {
		if r.Packet.Layout != nil && r.Packet.Layout.Name == "stdf" {
			e.badStdf++
			if d.Truncated() {
				e.truncatedPiece(r)
			}
		}
		return
	}
	if r.Kind != session.Game {
		return
	}
	l := e.line(c)
	pk := &r.Packet
	switch pk.Layout.Name {
	case "stdf":
		slsn := -1 // legacy: inferred when the dif ends
		if v, ok := stdfSLSN.Int(pk); ok {
			slsn = int(v)
			e.slsn[l] = slsn
		}
		src, _ := stdfSrc.Int(pk)
		dst, _ := stdfDst.Int(pk)
		seq, _ := stdfSeq.Int(pk)
		count, _ := stdfCount.Int(pk)
		start, _ := stdfStart.Int(pk)
		data, _ := stdfData.Value(pk)
		e.addPiece(reassemble.Piece{
			Key: reassemble.Key{Client: c.Client, Conv: c.ID, SLSN: slsn, Src: int32(src), Dst: int32(dst)},
			Seq: int(seq), Count: int(count), Start: int(start),
			Data: data.Bytes, N: r.N, TS: r.TS,
		})
	case "sjon":
		v, _ := sjonSLSN.Int(pk)
		e.slsn[l] = int(v)
	case "stak":
		fr, _ := pk.Frame()
		a := Ack{Line: l, SLSN: e.slsn[l], Frame: int32(fr), N: r.N, TS: r.TS}
		if lv := e.levels[l]; lv != nil {
			a.SLSN = lv.Current()
		}
		e.onAck(a)
	}
}

// truncatedPiece counts an stdf piece the snap length cut, from what is
// left of its header.
func (e *Engine) truncatedPiece(r *session.Record) {
	pk := &r.Packet
	for _, f := range []string{"src", "dst", "seq", "count", "start"} {
		if !pk.Has(f) {
			e.difs.headerless++
			return
		}
	}
	c := r.Conv
	l := e.line(c)
	slsn := -1
	if pk.Has("slsn") {
		slsn = int(pk.Int("slsn"))
		e.slsn[l] = slsn
	}
	e.addPiece(reassemble.Piece{
		Key: reassemble.Key{Client: c.Client, Conv: c.ID, SLSN: slsn, Src: int32(pk.Int("src")), Dst: int32(pk.Int("dst"))},
		Seq: int(pk.Int("seq")), Count: int(pk.Int("count")), Start: int(pk.Int("start")),
		Truncated: true, N: r.N, TS: r.TS,
	})
}

func (e *Engine) addPiece(p reassemble.Piece) {
	o := e.asm.Add(p)
	e.difs.piece(p.Line(), o)
}

// line returns a conversation's line, ending the previous conversation of
// the same client endpoint when this one is new.
func (e *Engine) line(c *session.Conversation) reassemble.Line {
	if c.ID >= 0 && c.ID < len(e.lineMemo) {
		if m := &e.lineMemo[c.ID]; m.conv == c && m.player == c.Player {
			return m.line // as the conversation's packet before: nothing to do again
		}
	}
	l := reassemble.Line{Conv: c.ID, Client: c.Client}
	if prev, ok := e.lines[c.Client]; ok && prev != c {
		old := reassemble.Line{Conv: prev.ID, Client: prev.Client}
		e.asm.FlushLine(old)
		if e.bh != nil {
			e.bh.queue(rebuildOp{kind: opEndLine, line: old, water: e.asm.OldestPendingN()})
		} else if e.builder != nil {
			e.builder.EndLine(old)
		}
		delete(e.slsn, old)
		delete(e.levels, old)
	}
	if len(e.lines) >= session.MaxConversations && e.lines[c.Client] == nil {
		clear(e.lines)
	}
	e.lines[c.Client] = c
	if e.builder != nil && c.Player >= 0 {
		if e.bh != nil {
			e.bh.queue(rebuildOp{kind: opPlayer, line: l, n: int32(c.Player), water: -1})
		} else {
			e.builder.SetLinePlayer(l, c.Player)
		}
	}
	if c.Player >= 0 {
		e.difs.setPlayer(l, c.Player)
	}
	if c.ID >= 0 && c.ID < maxLineMemos {
		for len(e.lineMemo) <= c.ID {
			e.lineMemo = append(e.lineMemo, lineMemo{})
		}
		e.lineMemo[c.ID] = lineMemo{conv: c, player: c.Player, line: l}
	}
	return l
}

// maxLineMemos bounds the conversations whose lines line remembers.
const maxLineMemos = 4096

// lineMemo is the line line gave a conversation, with the player it had
// then.
type lineMemo struct {
	conv   *session.Conversation
	player int
	line   reassemble.Line
}

func (e *Engine) countName(r *session.Record) {
	id := r.Conv.ID
	cc := e.counts
	if cc == nil || e.countsID != id {
		cc = e.perConv[id]
		if cc == nil {
			cc = &convCounts{byName: map[session.NameDir]*session.Count{}, byLayout: make([]*session.Count, 3*decode.NumLayouts())}
			e.perConv[id] = cc
		}
		e.counts, e.countsID = cc, id
	}
	// Most packets have a layout: their count is found by its number, and
	// only the first of each is looked up by name.
	slot := -1
	if l := r.Packet.Layout; l != nil && int(r.Dir) < 3 {
		slot = 3*l.ID + int(r.Dir)
		if c := cc.byLayout[slot]; c != nil && string(r.Packet.Name[:]) == l.Name {
			c.Add(len(r.Packet.Raw))
			return
		}
	}
	k := session.NameDir{Name: r.Packet.NameString(), Dir: r.Dir}
	if !session.AddName(cc.byName, k, len(r.Packet.Raw)) {
		e.cap.namesDropped++
		return
	}
	if slot >= 0 && k.Name == r.Packet.Layout.Name {
		cc.byLayout[slot] = cc.byName[k]
	}
}

// convCounts counts the packets of one conversation by name and direction.
type convCounts struct {
	byName   map[session.NameDir]*session.Count
	byLayout []*session.Count // the same counts, by 3*Layout.ID + Dir
}

func (e *Engine) conversationChanged(c *session.Conversation) {
	sig := convSig{era: c.Era, player: c.Player, host: c.Hostname, color: c.Color, server: c.Server}
	if c == e.lastConv && sig == e.lastSig {
		return // most packets are of the conversation before, unchanged
	}
	e.lastConv, e.lastSig = c, sig
	old, seen := e.convs[c.ID]
	if seen && old == sig {
		return
	}
	e.convs[c.ID] = sig
	e.emit(ConversationEvent{Conv: *c, New: !seen})
}

// onMessage takes every dif that ends in the reassembler.
func (e *Engine) onMessage(m *reassemble.Message) {
	l := m.Line()
	if m.SLSN < 0 {
		lv := e.levels[l]
		if lv == nil {
			lv = &replay.LevelInference{}
			e.levels[l] = lv
		}
		m.SLSN = lv.Infer(m)
	}
	d := &Dif{Key: m.Key, Status: m.Status, Count: m.Count, Pieces: m.Pieces, Missing: m.Missing, Truncated: m.Truncated,
		Duplicates: m.Duplicates, Bytes: m.Bytes, FirstN: m.FirstN, LastN: m.LastN, First: m.First, Last: m.Last, Err: m.Err}
	reset := e.difs.dif(d)
	if e.health != nil {
		e.health.dif(d, reset)
	}
	if e.finds != nil {
		e.finds.dif(d, reset)
	}
	e.emit(DifEvent{d})
	if e.builder != nil && e.selected(l) {
		if e.bh != nil {
			e.bh.queue(rebuildOp{kind: opDif, msg: m, water: e.asm.OldestPendingN()})
			e.bh.queued[l]++
			e.bh.total++
			return
		}
		e.order.added(e.builder.Added(), m.LastN)
		e.builder.Add(m)
	}
}

// selected reports whether line l's states are rebuilt.
func (e *Engine) selected(l reassemble.Line) bool {
	if e.cfg.Select == nil {
		return true
	}
	player := -1
	if c := e.lines[l.Client]; c != nil && c.ID == l.Conv {
		player = c.Player
	}
	return e.cfg.Select.Match(l, player)
}

// onAck takes every stak.
func (e *Engine) onAck(a Ack) {
	ms, measured := e.difs.ack(a)
	if e.health != nil && measured {
		e.health.ack(a, ms)
	}
	if e.finds != nil {
		e.finds.ack(a, ms, measured)
	}
	e.emit(AckEvent{a})
	if e.bh != nil {
		e.bh.queue(rebuildOp{kind: opAck, line: a.Line, n: a.Frame, ts: a.TS, water: e.asm.OldestPendingN()})
		return
	}
	if e.builder != nil {
		e.builder.Ack(a.Line, a.Frame)
	}
	if e.timeline != nil {
		// The stak is read before the state it acknowledges is in the
		// timeline (states are rebuilt on other goroutines): hold it until
		// the states of every dif that ended before it are in.
		e.held = append(e.held, heldAck{a, e.builder.Added()})
		e.applyAcks(e.builder.Emitted())
	}
}

func (e *Engine) applyAcks(upTo int) {
	k := 0
	for ; k < len(e.held) && e.held[k].after <= upTo; k++ {
		a := e.held[k]
		e.timeline.Ack(a.Line, a.Frame, a.TS)
	}
	if k > 0 {
		e.held = append(e.held[:0], e.held[k:]...)
	}
}

// onState takes every state the builder emits, in the order their difs
// ended.
func (e *Engine) onState(s *replay.State) {
	if e.bh != nil {
		// On the rebuild's goroutine: the states are added in batches,
		// so the fast pass seldom waits for the lock.
		e.bh.batch = append(e.bh.batch, s)
		if len(e.bh.batch) >= stateBatch {
			e.addStates()
		}
		return
	}
	e.addState(s)
	e.stateAdded(s)
}

// addState puts a rebuilt state in the timeline and the figures.
func (e *Engine) addState(s *replay.State) {
	if e.timeline != nil {
		if err := e.timeline.Add(s); err != nil && e.cap.timelineErr == nil {
			e.cap.timelineErr = err
			e.warnf("state timeline: %v", err)
		}
		e.applyAcks(s.Seq + 1)
	}
	e.difs.state(s)
	if e.health != nil {
		e.health.state(s)
	}
	if e.finds != nil {
		e.finds.state(s)
	}
}

// stateAdded emits a state once it is in the timeline.
func (e *Engine) stateAdded(s *replay.State) {
	s.Dif, s.Checkpoint, s.Data = nil, nil, nil
	e.order.emitted(s.Seq)
	if e.order.on {
		e.order.push(s)
		e.releaseStates(false)
	}
}

// releaseStates emits the buffered states that no later state can precede
// in capture order (all of them with all).
func (e *Engine) releaseStates(all bool) {
	water := -1
	if !all {
		water = e.order.watermark()
		if n := e.pendingN(); n >= 0 && (water < 0 || n < water) {
			water = n
		}
	}
	for {
		s := e.order.pop(water)
		if s == nil {
			return
		}
		e.emit(StateEvent{s})
	}
}

// Tick advances the analysis to time now without a packet: difs that have
// been quiet longer than the reassembler's limit are abandoned, states that
// wait for a base that has not come are given up, and every state rebuilt
// so far is emitted. A live capture calls it while the network is quiet.
func (e *Engine) Tick(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.finished {
		return
	}
	if e.asm != nil {
		e.asm.Tick(now)
	}
	if e.bh != nil {
		e.bh.queue(rebuildOp{kind: opFlush, water: e.asm.OldestPendingN()})
	} else if e.builder != nil {
		e.builder.Flush()
		if e.timeline != nil {
			e.applyAcks(e.builder.Emitted())
		}
		if e.order.on {
			e.releaseStates(false)
		}
	}
}

// Finish ends the analysis at the end of the capture: unfinished difs end
// as incomplete, every state is rebuilt and emitted. The engine takes no
// more datagrams after it; its snapshots, index and timeline stay usable
// until Close.
func (e *Engine) Finish() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.finished {
		return
	}
	if e.asm != nil {
		e.asm.Flush()
	}
	if e.bh != nil {
		e.bh.q.close() // the rebuild goes on to the end of the backlog
		e.gate.SetLimit(runtime.GOMAXPROCS(0))
	} else if e.builder != nil {
		e.builder.Close()
		if e.timeline != nil {
			e.applyAcks(int(^uint(0) >> 1))
		}
		if e.order.on {
			e.releaseStates(true)
		}
	}
	if e.badStdf > 0 {
		if e.cap.counters.Truncated > 0 {
			e.warnf("%d stdf pieces are malformed or cut by the capture's snap length; the difs they belong to cannot be rebuilt (capture with -s 0)", e.badStdf)
		} else {
			e.warnf("%d stdf pieces are malformed; the difs they belong to cannot be rebuilt", e.badStdf)
		}
	}
	if e.finds != nil {
		e.finds.finish(e)
	}
	e.finished = true
}

// Close finishes the analysis if it was not, waits for every goroutine the
// engine started and releases its temporary files.
func (e *Engine) Close() error {
	e.Finish()
	if e.bh != nil {
		e.bh.aborted.Store(true)
		e.bh.q.abort()
		<-e.bh.done
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	if e.timeline != nil {
		err = e.timeline.Close()
	}
	if e.index != nil {
		err = errors.Join(err, e.index.close())
	}
	return err
}

// ErrInternal is wrapped by Err's error: the engine itself failed (its
// temporary files could not be written), not the input.
var ErrInternal = errors.New("pmdump could not keep its index")

// Err returns the first failure of the engine itself (a temporary file
// that could not be written: the disk is full, say), nil if none.
func (e *Engine) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cap.timelineErr != nil {
		return fmt.Errorf("%w: %w", ErrInternal, e.cap.timelineErr)
	}
	if e.index != nil {
		if err := e.index.err(); err != nil {
			return fmt.Errorf("%w: %w", ErrInternal, err)
		}
	}
	return nil
}

// conversation returns a copy of conversation id, for the index.
func (e *Engine) conversation(id int) *session.Conversation {
	e.mu.Lock() // the tracker changes its conversations as packets come
	defer e.mu.Unlock()
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
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []session.Conversation
	for _, c := range e.tracker.Conversations() {
		out = append(out, *c)
	}
	return out
}

func (e *Engine) addCounters(base, c source.Counters) {
	t := &e.cap.counters
	t.Frames = c.Frames
	t.NonUDP = base.NonUDP + c.NonUDP
	t.Fragments = base.Fragments + c.Fragments
	t.Reassembled = base.Reassembled + c.Reassembled
	t.BadFrames = base.BadFrames + c.BadFrames
	t.Truncated = base.Truncated + c.Truncated
	t.Datagrams = base.Datagrams + c.Datagrams
	t.FragmentsDropped = base.FragmentsDropped + c.FragmentsDropped
	t.Unsupported = base.Unsupported + c.Unsupported
	t.KernelReceived = base.KernelReceived + c.KernelReceived
	t.KernelDropped = base.KernelDropped + c.KernelDropped
	for k, v := range c.LinkTypes {
		e.cap.linkTypes[k] = e.cap.baseLinkTypes[k] + v
	}
}
