package engine

import (
	"math"
	"sort"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
	"github.com/pmdump/pmdump/session"
)

// Second is one per-second bucket of a conversation's netgame health. A
// mean without samples in the second is nil (JSON null), as is a value the
// client reported as not a number.
type Second struct {
	T                int      `json:"t"`                // seconds since the capture's first packet
	Inputs           int      `json:"inputs"`           // cdat sent
	LateInputs       int      `json:"late_inputs"`      // legacy serr received; modern late_cdats increase in the states
	Difs             int      `json:"difs"`             // difs that ended (as DifStats counts them), by their last piece
	DifBytes         int      `json:"dif_bytes"`        // their compressed bytes, as received
	BaseResets       int      `json:"base_resets"`      // of them, base resets (as DifStats counts them)
	Incomplete       int      `json:"incomplete"`       // of them, abandoned with pieces missing
	Acks             int      `json:"acks"`             // stak sent
	AckMs            *float64 `json:"ack_ms"`           // mean dif → stak latency
	PingPongMs       *float64 `json:"ping_pong_ms"`     // ping → pong at the capture point
	PongPangMs       *float64 `json:"pong_pang_ms"`     // pong → pang at the capture point (the server's round trip)
	ChaseFPS         *float64 `json:"chase_fps"`        // stak (modern) / sdak (legacy) chase frame rate
	DsyncMs          *float64 `json:"dsync_ms"`         // modern stak: client's average dsync
	LocalCorrection  *float64 `json:"local_correction"` // modern stak: local player correction (px), max
	RemoteCorrection *float64 `json:"remote_correction"`
	CPU              *float64 `json:"cpu"`             // modern stak: client cpu %, mean
	DifCorrections   *int     `json:"dif_corrections"` // legacy stak: the client's simulation was overwritten
	StdfLate         *int     `json:"stdf_late"`       // legacy sdak: the client's count of late stdf (newest)
	FramesSkipped    *int     `json:"frames_skipped"`  // legacy sdak: frames the client skipped (newest)
	MaxStep          *float64 `json:"max_step_px"`     // largest move of the client's player between consecutive states, px per frame
	Jumps            int      `json:"position_jumps"`  // moves over JumpPx per frame: corrections, respawns
	sums             [nMeans]mean
}

// JumpPx is a move per frame no player makes by running or falling.
const JumpPx = 12

type meanKind uint8

const (
	mAck meanKind = iota
	mPingPong
	mPongPang
	mChase
	mDsync
	mCPU
	nMeans
)

type mean struct {
	sum float64
	n   int
}

func (s *Second) add(k meanKind, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	s.sums[k].sum += v
	s.sums[k].n++
}

func (s *Second) mean(k meanKind) *float64 {
	if m := s.sums[k]; m.n > 0 {
		v := m.sum / float64(m.n)
		return &v
	}
	return nil
}

func maxOf(p **float64, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if *p == nil || v > **p {
		*p = &v
	}
}

// HealthSummary sums up a conversation's health over the whole capture.
type HealthSummary struct {
	Seconds        int      `json:"seconds"`
	InputsPerS     float64  `json:"inputs_per_s"`
	LateInputs     int      `json:"late_inputs"`
	Difs           int      `json:"difs"`
	DifsPerS       float64  `json:"difs_per_s"`
	MeanDifBytes   float64  `json:"mean_dif_bytes"`
	BaseResets     int      `json:"base_resets"`
	Incomplete     int      `json:"incomplete"`
	Acks           int      `json:"acks"`
	MeanAckMs      *float64 `json:"mean_ack_ms"`
	MeanPongPangMs *float64 `json:"mean_pong_pang_ms"`
	MeanChaseFPS   *float64 `json:"mean_chase_fps"`
	DifCorrections *int     `json:"dif_corrections"`
	MaxStepPx      *float64 `json:"max_step_px"`
	PositionJumps  int      `json:"position_jumps"`
}

// ClientHealth is one conversation's health series.
type ClientHealth struct {
	Conv    int           `json:"conv"`
	Client  string        `json:"client"`
	Player  *int          `json:"player,omitempty"`
	Era     string        `json:"era"`
	Summary HealthSummary `json:"summary"`
	Seconds []*Second     `json:"seconds"`
	// Partial is true while the figures that come from the states
	// (Second.LateInputs of the modern era, MaxStep, Jumps and their
	// sums) are not final: states of the conversation that the fast pass
	// handed to the rebuild behind it (Config.RebuildBehind) are not
	// counted yet. PendingStates is how many. A state rebuilt ahead of its
	// turn (Engine.Prioritize) is in the timeline at once but counts here
	// only at its turn, in capture order, so a conversation can be all
	// rebuilt and still partial. Both stay zero when the states are
	// rebuilt in step with the packets, and once the rebuild has counted
	// every state the fast pass found (Progress.Done).
	Partial       bool `json:"partial,omitempty"`
	PendingStates int  `json:"pending_states,omitempty"`
	// Unrecognised says why the conversation is of no known version (its
	// Era is then "unknown"; NoVersion says it in words), "" when it is
	// not.
	Unrecognised string `json:"unrecognised,omitempty"`
}

// lineHealth is one conversation's series while it is gathered.
type lineHealth struct {
	conv         int
	client       string
	player       int
	era          decode.Version
	unrecognised string // the conversation's Unrecognised
	secs         map[int]*Second
	lastT        int     // the second of the last packet, as at took it
	lastSec      *Second // and its bucket (nil at first)
	key          reassemble.Chain
	pings        echoes // the pings' t0, until a pong echoes it
	pongs        echoes // the pongs' t1, until a pang echoes it
	lastLate     float64
	haveLate     bool
	lastX, lastY float64
	lastDst      int32
	lastSLSN     int
	havePos      bool
	nextLevel    map[int]int // by level sequence: the level its level-done phase led to
	states       int         // states counted (state)
}

// maxSeconds bounds the seconds kept per conversation (a day).
const maxSeconds = 86400

// healthCollector gathers the per-second netgame health of every
// conversation.
type healthCollector struct {
	t0     time.Time
	clock  secondClock
	lines  map[reassemble.Chain]*lineHealth
	byConv []*lineHealth // the same lines by conversation id, when they have one
	order  []reassemble.Chain
	user   *schema.Schema
}

func newHealthCollector(user *schema.Schema) *healthCollector {
	return &healthCollector{lines: map[reassemble.Chain]*lineHealth{}, user: user}
}

func (h *healthCollector) line(l reassemble.Chain) *lineHealth {
	if l.Conv > 0 && l.Conv < len(h.byConv) {
		if x := h.byConv[l.Conv]; x != nil && x.key == l {
			return x
		}
	}
	x := h.lines[l]
	if x == nil {
		x = &lineHealth{conv: l.Conv, client: l.Client.String(), player: -1, secs: map[int]*Second{}, pings: map[float64]time.Time{},
			pongs: map[float64]time.Time{}, key: l}
		h.lines[l] = x
		h.order = append(h.order, l)
	}
	if l.Conv > 0 && l.Conv < maxLineMemos {
		for len(h.byConv) <= l.Conv {
			h.byConv = append(h.byConv, nil)
		}
		h.byConv[l.Conv] = x
	}
	return x
}

func (h *healthCollector) at(x *lineHealth, ts time.Time) *Second {
	t := h.clock.second(h.t0, ts)
	if x.lastSec != nil && x.lastT == t {
		return x.lastSec // most packets fall in the second of the one before
	}
	s := h.bucket(x, t)
	x.lastT, x.lastSec = t, s
	return s
}

// bucket returns the bucket of second t, made when it is new.
func (h *healthCollector) bucket(x *lineHealth, t int) *Second {
	s := x.secs[t]
	if s == nil {
		if len(x.secs) >= maxSeconds {
			t = -1 // a hostile clock: everything else goes to one bucket
			if s = x.secs[t]; s != nil {
				return s
			}
		}
		s = &Second{T: t}
		x.secs[t] = s
	}
	return s
}

// record takes every game packet, in capture order.
func (h *healthCollector) record(r *session.Record) {
	if h.t0.IsZero() {
		h.t0 = r.TS
	}
	if r.Kind != session.Game || r.Conv == nil || r.Conv.ID == 0 {
		return
	}
	x := h.line(reassemble.Chain{Conv: r.Conv.ID, Client: r.Conv.Client})
	x.player, x.era, x.unrecognised = r.Conv.Player, r.Conv.Version, r.Conv.Unrecognised
	pk := &r.Packet
	s := h.at(x, r.TS)
	switch pk.Layout.Kind {
	case decode.KindInput:
		s.Inputs++
	case decode.KindLateInput:
		s.LateInputs++
	case decode.KindProbe:
		x.pings.sent(refFloat(pingT0, pk), r.TS)
	case decode.KindProbeReply:
		if ms, ok := x.pings.echoed(refFloat(pingT0, pk), r.TS); ok {
			s.add(mPingPong, ms)
		}
		x.pongs.sent(refFloat(pongT1, pk), r.TS)
	case decode.KindProbeEcho:
		if ms, ok := x.pongs.echoed(refFloat(pongT1, pk), r.TS); ok {
			s.add(mPongPang, ms)
		}
	case decode.KindGameMovesAck:
		if sdakChase.Has(pk) {
			s.add(mChase, float64(refInt(sdakChase, pk)))
		}
		late, skipped := int(refInt(sdakStdfLate, pk)), int(refInt(sdakSkipped, pk))
		s.StdfLate, s.FramesSkipped = &late, &skipped
	case decode.KindDifAck:
		s.Acks++
		if stakCorr.Has(pk) {
			if s.DifCorrections == nil {
				s.DifCorrections = new(int)
			}
			if refInt(stakCorr, pk) != 0 {
				*s.DifCorrections++
			}
		}
		if stakChase.Has(pk) {
			s.add(mChase, refFloat(stakChase, pk))
			s.add(mDsync, refFloat(stakDsync, pk)*1000)
			s.add(mCPU, refFloat(stakCPU, pk))
			maxOf(&s.LocalCorrection, refFloat(stakLocal, pk))
			maxOf(&s.RemoteCorrection, refFloat(stakRemote, pk))
		}
	}
}

// dif counts a dif in the second of its last piece, from its headers;
// baseReset is the dif figures' verdict (one definition for both).
func (h *healthCollector) dif(d *Dif, baseReset bool) {
	x := h.line(d.Chain())
	sec := h.at(x, d.Last)
	sec.Difs++
	sec.DifBytes += d.Bytes
	if baseReset {
		sec.BaseResets++
	}
	if d.Status == reassemble.Incomplete {
		sec.Incomplete++
	}
}

// ack adds an ack latency (the dif figures' definition) to its second.
func (h *healthCollector) ack(a Ack, ms float64) {
	h.at(h.line(a.Line), a.TS).add(mAck, ms)
}

// echoes pairs the time stamps the modern ping exchange carries with the
// packets that echo them back (a pong echoes a ping's t0, a pang a pong's
// t1), to measure each leg: the capture time each was sent, by value, at
// most 64 waiting (an echo that never comes must not grow it).
type echoes map[float64]time.Time

// sent records that a packet carrying value v was captured at ts.
func (e echoes) sent(v float64, ts time.Time) {
	if len(e) > 64 {
		clear(e)
	}
	e[v] = ts
}

// echoed returns the milliseconds from the packet that carried v to ts,
// the packet echoing it, and forgets v; false when v was not waiting.
func (e echoes) echoed(v float64, ts time.Time) (float64, bool) {
	t, ok := e[v]
	if !ok {
		return 0, false
	}
	delete(e, v)
	return float64(sub(ts, t)) / 1e6, true
}

// The packet fields the health report reads, resolved once: a name a
// table does not have stops the program at start-up.
var (
	pingT0       = decode.MustRef("t0", "ping", "pong")
	pongT1       = decode.MustRef("t1", "pong", "pang")
	sdakChase    = decode.MustRef("fps_chase", "sdak")
	sdakStdfLate = decode.MustRef("stdf_late", "sdak")
	sdakSkipped  = decode.MustRef("frames_skipped", "sdak")
	stakCorr     = decode.MustRef("corr", "stak")
	stakChase    = decode.MustRef("chase_fps", "stak")
	stakDsync    = decode.MustRef("dsync", "stak")
	stakCPU      = decode.MustRef("cpu", "stak")
	stakLocal    = decode.MustRef("local_correction", "stak")
	stakRemote   = decode.MustRef("remote_correction", "stak")
)

// refFloat is a packet's float field, NaN when it does not have it.
func refFloat(r decode.Ref, p *decode.Packet) float64 {
	v, ok := r.Value(p)
	if !ok {
		return math.NaN()
	}
	return v.Float
}

// refInt is a packet's integer field, 0 when it does not have it.
func refInt(r decode.Ref, p *decode.Packet) int64 {
	v, _ := r.Int(p)
	return v
}

// sample is what inspect reads from a state for the health report: the
// client's own player's position and late-input counter.
type sample struct {
	x, y, late   float64
	pos, hasLate bool
	nextLevel    int // the server's (player 0's) level_done_next_level, 0 when none
}

// nextLevelField is the player field that names the level a level-done
// phase leads to (modern state layout).
const nextLevelField = "level_done_next_level"

// healthExtra carries a sample beside whatever the caller's Inspect put in
// State.Extra.
type healthExtra struct {
	sample sample
	extra  any
}

// inspect runs on the rebuilding goroutines, after the caller's Inspect.
func (h *healthCollector) inspect(s *replay.State, st []byte) {
	sch := schema.For(len(st), h.user)
	v := sch.View
	if v == nil || v.Players == nil || s.Player < 0 {
		return
	}
	p := v.Players
	var sm sample
	var ok1, ok2 bool
	sm.x, ok1 = sch.Get(st, p.Region, s.Player, p.X)
	sm.y, ok2 = sch.Get(st, p.Region, s.Player, p.Y)
	sm.pos = ok1 && ok2
	if p.LateInputs != "" {
		sm.late, sm.hasLate = sch.Get(st, p.Region, s.Player, p.LateInputs)
	}
	if v, ok := sch.Get(st, p.Region, 0, nextLevelField); ok && v > 0 && v < 1000 {
		sm.nextLevel = int(v)
	}
	s.Extra = healthExtra{sm, s.Extra}
}

// state takes every rebuilt state, in the order the difs ended, and puts
// back what the caller's Inspect set in State.Extra.
func (h *healthCollector) state(s *replay.State) {
	var sm sample
	var ok bool
	if he, is := s.Extra.(healthExtra); is {
		sm, ok = he.sample, true
		s.Extra = he.extra
	}
	x := h.line(s.Line())
	x.states++
	sec := h.at(x, s.TS)
	if ok && sm.nextLevel > 0 {
		if x.nextLevel == nil {
			x.nextLevel = map[int]int{}
		}
		x.nextLevel[s.SLSN] = sm.nextLevel
	}
	if s.Status != replay.OK || !ok {
		return
	}
	if sm.hasLate {
		if x.haveLate && sm.late > x.lastLate && x.lastSLSN == s.SLSN {
			sec.LateInputs += int(sm.late - x.lastLate)
		}
		x.lastLate, x.haveLate = sm.late, true
	}
	if sm.pos {
		if x.havePos && x.lastSLSN == s.SLSN && s.Dst > x.lastDst {
			step := math.Hypot(sm.x-x.lastX, sm.y-x.lastY) / float64(s.Dst-x.lastDst)
			maxOf(&sec.MaxStep, step)
			if step > JumpPx {
				sec.Jumps++
			}
		}
		if !x.havePos || x.lastSLSN != s.SLSN || s.Dst > x.lastDst {
			x.lastX, x.lastY, x.lastDst, x.havePos = sm.x, sm.y, s.Dst, true
		}
	}
	x.lastSLSN = s.SLSN
}

// nextLevel is the level that level sequence slsn of conversation conv
// led to, as its states said, 0 when not known.
func (h *healthCollector) nextLevel(conv, slsn int) int {
	for _, l := range h.order {
		if x := h.lines[l]; x.conv == conv && x.nextLevel[slsn] > 0 {
			return x.nextLevel[slsn]
		}
	}
	return 0
}

// report returns the series as they are now: sorted seconds, means and a
// summary. pending, when not nil, is the number of a line's states still
// to count, given the number counted. The result shares nothing with the
// collector.
func (h *healthCollector) report(pending func(l reassemble.Chain, counted int) int) []*ClientHealth {
	var out []*ClientHealth
	for _, l := range h.order {
		x := h.lines[l]
		ch := &ClientHealth{Conv: x.conv, Client: x.client, Era: x.era.String(), Unrecognised: x.unrecognised}
		if pending != nil {
			ch.PendingStates = pending(l, x.states)
			ch.Partial = ch.PendingStates > 0
		}
		if x.player >= 0 {
			p := x.player
			ch.Player = &p
		}
		for _, s := range x.secs {
			c := *s
			c.AckMs = s.mean(mAck)
			c.PingPongMs = s.mean(mPingPong)
			c.PongPangMs = s.mean(mPongPang)
			c.ChaseFPS = s.mean(mChase)
			c.DsyncMs = s.mean(mDsync)
			c.CPU = s.mean(mCPU)
			ch.Seconds = append(ch.Seconds, &c)
		}
		sort.Slice(ch.Seconds, func(i, j int) bool { return ch.Seconds[i].T < ch.Seconds[j].T })
		var tot Second
		var corrections *int
		var maxStep *float64
		for _, s := range ch.Seconds {
			tot.Inputs += s.Inputs
			tot.LateInputs += s.LateInputs
			tot.Difs += s.Difs
			tot.DifBytes += s.DifBytes
			tot.BaseResets += s.BaseResets
			tot.Incomplete += s.Incomplete
			tot.Acks += s.Acks
			tot.Jumps += s.Jumps
			if s.DifCorrections != nil {
				if corrections == nil {
					corrections = new(int)
				}
				*corrections += *s.DifCorrections
			}
			if s.MaxStep != nil {
				maxOf(&maxStep, *s.MaxStep)
			}
			for k := range nMeans {
				tot.sums[k].sum += s.sums[k].sum
				tot.sums[k].n += s.sums[k].n
			}
		}
		secs := float64(max(len(ch.Seconds), 1))
		ch.Summary = HealthSummary{
			Seconds: len(ch.Seconds), InputsPerS: float64(tot.Inputs) / secs, LateInputs: tot.LateInputs,
			Difs: tot.Difs, DifsPerS: float64(tot.Difs) / secs, MeanDifBytes: float64(tot.DifBytes) / math.Max(float64(tot.Difs), 1),
			BaseResets: tot.BaseResets, Incomplete: tot.Incomplete, Acks: tot.Acks, MeanAckMs: tot.mean(mAck),
			MeanPongPangMs: tot.mean(mPongPang), MeanChaseFPS: tot.mean(mChase), DifCorrections: corrections,
			MaxStepPx: maxStep, PositionJumps: tot.Jumps,
		}
		out = append(out, ch)
	}
	return out
}
