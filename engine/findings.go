package engine

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// The kinds of Finding (Finding.Kind); the README describes each, its
// threshold and its figures.
const (
	KindJoin           = "join"           // a client joined (handshake seen)
	KindMidGame        = "mid-game"       // a conversation whose handshake is not in the capture
	KindRejoin         = "rejoin"         // a client endpoint shook hands again
	KindLeave          = "leave"          // a client stopped before the capture's end, or quit
	KindDropped        = "player-dropped" // the server dropped a player (legacy sdat state 70/71)
	KindSilentClient   = "silent-client"  // the client sent nothing while the server kept sending
	KindSilentServer   = "silent-server"  // the server sent nothing to a client that kept sending
	KindOutage         = "outage"         // nothing went either way, then the game went on
	KindLevelChange    = "level-change"   // a new level sequence began
	KindLoss           = "loss"           // datagrams provably lost, per direction
	KindLatency        = "latency"        // ack latency baseline, spikes and jitter; ping round trip
	KindSlowClient     = "slow-client"    // chase fps below the server's rate
	KindLateInputs     = "late-inputs"    // inputs that reached the server after their frame
	KindCorrections    = "corrections"    // the client's simulation overwritten by the server's states
	KindResetStorm     = "base-reset-storm"
	KindDesync         = "desync" // two clients acknowledged different states of one frame
	KindCaptureEnd     = "capture-ends-mid-dif"
	KindSnapLength     = "snap-length"     // frames cut by the capture's snap length
	KindCaptureDrops   = "capture-drops"   // frames the kernel or the capture tool dropped
	KindSharedEndpoint = "shared-endpoint" // two games in one capture share a client endpoint
	KindIdleClient     = "idle-client"     // a client that sent (almost) no input
	KindFileTransfer   = "file-transfer"   // a file the server sent a client (sfil)
)

// The thresholds, derived from the game's own rates: 40 frames a second;
// a legacy dif every 5 server frames (round robin), a modern one every
// frame; a modern ping every second; a client acknowledges what it applies
// and answers every sdat.
const (
	// GameFPS is the game's frame rate.
	GameFPS = 40
	// SilentAfter is the silence (40 frames) after which a client (or the
	// server) that sends nothing while the other side keeps sending is
	// reported: a playing client sends a stak or an sdak several times a
	// frame-second and a modern one pings every second.
	SilentAfter = time.Second
	// DropAfter is the silence that breaks the game for a player (an
	// error): 100 frames, after which the legacy server drops a client
	// that sent no sdak.
	DropAfter = 2500 * time.Millisecond
	// SlowFPS is the chase frame rate below which a client is slow: three
	// quarters of the server's 40.
	SlowFPS = 30
	// StormResets is the base resets in one second that make a storm
	// second (an eighth of the modern server's 40 difs a second); a storm
	// of StormSeconds seconds or more in a row is a warning (a join or a
	// level change, while the client loads the level, brings up to 3).
	StormResets  = 5
	StormSeconds = 4
	// LossWarn is the fraction of a direction's datagrams lost that makes
	// loss a warning (below it, info); a run of lost difs covering
	// BurstFrames frames or more is a warning too.
	LossWarn    = 0.02
	BurstFrames = GameFPS / 2
	// LateWarn is the fraction of a client's inputs arriving late that
	// makes a warning (half its control changes came after their frame).
	LateWarn = 0.5
	// LatencyWarnMs is the 95th percentile of the ack latency above which
	// latency is a warning: 4 frames, twice the legacy control lead.
	LatencyWarnMs = 4 * 1000 / GameFPS
	// IdleEvery: a client that sent fewer than one input per IdleEvery
	// over at least twice that of play is idle (a playing client changes
	// its controls several times a second).
	IdleEvery = 5 * time.Second
	// CorrectionWarn is the fraction of acknowledgements that report a
	// correction above which corrections are a warning.
	CorrectionWarn = 0.5
)

// findingCollector finds what went wrong, from what the engine sees: the
// packet headers (fast), the difs' headers and acks, and, when states are
// rebuilt, the states.
type findingCollector struct {
	found  func(*Finding)
	t0     time.Time
	convs  map[int]*convWatch
	order  []int
	levels map[levelKey]bool // level sequences reported, per game
	byEnd  map[netip.AddrPort]*convWatch
	games  map[gameFrame]ackedState // the first acknowledged state of each frame, per game
	// levelOf names the level a level sequence led to (from the states),
	// when states are rebuilt; level changes wait for it in pendLevels.
	levelOf    func(conv, slsn int) int
	pendLevels []*Finding
	gameQ      []gameFrame
	descy      int
}

type levelKey struct {
	server netip.Addr
	slsn   int
}

type gameFrame struct {
	server netip.Addr
	slsn   int
	frame  int32
}

type ackedState struct {
	conv int
	sum  [32]byte
	n    int
}

// gap counts what one side sent while the other was silent.
type gap struct {
	packets, difs, keyframes, bytes int
	firstN                          int
}

// convWatch is what the findings keep of one conversation.
type convWatch struct {
	conv           int
	client, server netip.AddrPort
	player         int
	era            decode.Era
	first, last    time.Time
	firstN, lastN  int
	joinSeen       bool
	reported       map[string]bool

	outFrom, outTo     time.Time // the last outage reported
	lastC2S, lastS2C   time.Time
	lastC2SN, lastS2CN int
	s2c, c2s           gap // sent by the server since the client's last packet, and the other way

	// difs lost whole, from the dst gaps of the stdf pieces
	lastDst   int32
	lastSLSN  int
	haveDst   bool
	steps     [16]int32
	nsteps    int
	seenDifs  int
	lostWhole int
	longest   int
	suspects  []suspectGap
	pend      []seenDif
	haveLevel bool
	loss      evidence
	incompl   int
	lostPcs   int
	// pings (modern): client time stamps one second apart
	lastT0           float64
	haveT0           bool
	pings, lostPings int
	pingLoss         evidence
	pongs            map[float64]time.Time
	rtt              []float64
	// ack latency
	lat      []float64
	ewma     float64
	spikes   int
	worstMs  float64
	worstN   int
	firstAck int
	lastAck  int
	// per second: chase fps, resets, difs and acks
	sec                int
	chaseSum           float64
	chaseN             int
	secDifs, secAcks   int
	resets, resetBytes int
	slow               run
	storm              run
	// late inputs, corrections
	inputs, late       int
	lateEv             evidence
	staks, corrections int
	maxCorr            float64
	corrEv             evidence
	// desync: this conversation's rebuilt and acknowledged states
	sums            map[replay.Frame]stateSum
	acked           map[replay.Frame]int
	ackQ            []replay.Frame
	sumQ            []replay.Frame
	fileAsked       []int               // frames of crfl requests
	files           map[int64]*transfer // file transfers by id
	fileOrder       []int64
	lastN0          int // last piece of the newest dif
	lastDifComplete bool
	lastDifTS       time.Time
}

type stateSum struct {
	sum [32]byte
	n   int
}

// evidence gathers the capture frames of one finding.
type evidence struct {
	first, worst, last int
	start, end         time.Time
	worstV             float64
}

func (v *evidence) add(n int, ts time.Time, weight float64) {
	if v.first == 0 {
		v.first, v.start = n, ts
	}
	v.last, v.end = n, ts
	if v.worst == 0 || weight > v.worstV {
		v.worst, v.worstV = n, weight
	}
}

// run is a run of consecutive seconds with something in them.
type run struct {
	from, to   int // seconds since the first packet
	secs       int
	min, max   float64
	difs, acks int
	bytes      int
	count      int
	ev         evidence
}

// SortFindings sorts findings in place by severity (the worst first), then
// start time, then conversation, and returns them: the order doctor and the
// terminal UI list them in.
func SortFindings(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case a.Severity != b.Severity:
			return int(b.Severity) - int(a.Severity)
		case !a.Start.Equal(b.Start):
			return a.Start.Compare(b.Start)
		}
		return a.Conv - b.Conv
	})
	return fs
}

func newFindingCollector(found func(*Finding)) *findingCollector {
	return &findingCollector{found: found, convs: map[int]*convWatch{}, levels: map[levelKey]bool{},
		byEnd: map[netip.AddrPort]*convWatch{}, games: map[gameFrame]ackedState{}}
}

// found records a finding and reports it as an event (the lock is held).
func (e *Engine) found(f *Finding) {
	e.findings = append(e.findings, *f)
	e.emit(FindingEvent{Finding: f})
}

func (fc *findingCollector) watch(c *session.Conversation) *convWatch {
	w := fc.convs[c.ID]
	if w == nil {
		w = &convWatch{conv: c.ID, client: c.Client, player: -1, reported: map[string]bool{},
			sums: map[replay.Frame]stateSum{}, acked: map[replay.Frame]int{}, pongs: map[float64]time.Time{}}
		fc.convs[c.ID] = w
		fc.order = append(fc.order, c.ID)
	}
	w.server, w.era = c.Server, c.Era
	if c.Player >= 0 {
		w.player = c.Player
	}
	return w
}

// finding starts a finding about conversation w (nil: the whole capture).
func (fc *findingCollector) finding(w *convWatch, kind string, sev Severity, v evidence, format string, a ...any) *Finding {
	f := &Finding{Kind: kind, Severity: sev, Start: v.start, End: v.end, Player: -1, Summary: fmt.Sprintf(format, a...),
		Figures: map[string]float64{}, Evidence: Evidence{First: v.first, Worst: v.worst, Last: v.last}}
	if f.Evidence.Worst == 0 {
		f.Evidence.Worst = v.first
	}
	if w != nil {
		f.Conv, f.Client, f.Player = w.conv, w.client, w.player
	}
	return f
}

func (w *convWatch) who() string {
	if w.player >= 0 {
		return fmt.Sprintf("player %d (%s)", w.player, w.client)
	}
	return w.client.String()
}

func (fc *findingCollector) second(ts time.Time) int {
	return int(math.Floor(ts.Sub(fc.t0).Seconds()))
}

// packet takes every game packet, in capture order.
func (fc *findingCollector) packet(r *session.Record, d *source.Datagram) {
	if fc.t0.IsZero() {
		fc.t0 = r.TS
	}
	c := r.Conv
	if c == nil || c.ID == 0 {
		return
	}
	w := fc.watch(c)
	fc.nextSecond(w, r.TS)
	pk := &r.Packet
	name := ""
	if pk.Layout != nil {
		name = pk.Layout.Name
	}
	if w.firstN == 0 {
		w.first, w.firstN = r.TS, r.N
		fc.newConversation(w, r, name)
	}
	if d := r.TS.Sub(w.last); !w.last.IsZero() && d >= SilentAfter && w.lastN != r.N {
		fc.outage(w, w.last, r.TS, w.lastN, r.N)
	}
	w.last, w.lastN = r.TS, r.N
	if r.Dir == decode.C2S {
		if !w.lastC2S.IsZero() && w.s2c.packets > 0 {
			fc.silence(w, KindSilentClient, w.lastC2S, r.TS, w.lastC2SN, r.N, w.s2c, false)
		}
		w.lastC2S, w.lastC2SN, w.s2c = r.TS, r.N, gap{}
		w.c2s.packets++
	} else if r.Dir == decode.S2C {
		if !w.lastS2C.IsZero() && w.c2s.packets > 0 {
			fc.silence(w, KindSilentServer, w.lastS2C, r.TS, w.lastS2CN, r.N, w.c2s, false)
		}
		w.lastS2C, w.lastS2CN, w.c2s = r.TS, r.N, gap{}
		w.s2c.packets++
		if w.s2c.firstN == 0 {
			w.s2c.firstN = r.N
		}
		w.s2c.bytes += len(pk.Raw)
	}
	if r.Kind != session.Game {
		return
	}
	switch name {
	case "sjon", "SJON":
		w.joinSeen = true
		if pk.Has("player") && pk.Int("player") != 99 {
			w.player = int(pk.Int("player"))
			v := evidence{}
			v.add(r.N, r.TS, 0)
			f := fc.finding(w, KindJoin, SeverityInfo, v, "%s joined as player %d (level %d, server frame %d)", w.client, w.player, pk.Int("level"), pk.Int("frame"))
			f.Figures["level"] = float64(pk.Int("level"))
			if pk.Has("slsn") {
				f.Figures["slsn"] = float64(pk.Int("slsn"))
				fc.levels[levelKey{w.server.Addr(), int(pk.Int("slsn"))}] = true
			}
			fc.found(f)
		}
	case "stdf":
		fc.stdf(w, r)
	case "cdat":
		w.inputs++
	case "serr":
		w.late++
		w.lateEv.add(r.N, r.TS, 0)
	case "sdat":
		fc.sdat(w, r)
	case "sdak":
		if pk.Has("fps_chase") {
			w.chase(float64(pk.Int("fps_chase")))
		}
	case "stak":
		w.staks++
		corrected := false
		if pk.Has("corr") {
			corrected = pk.Int("corr") != 0
		}
		if pk.Has("chase_fps") {
			w.chase(floatField(pk, "chase_fps"))
			lc := floatField(pk, "local_correction")
			corrected = lc > JumpPx
			if lc > w.maxCorr {
				w.maxCorr = lc
			}
		}
		if corrected {
			w.corrections++
			w.corrEv.add(r.N, r.TS, 0)
		}
	case "crfl":
		w.fileAsked = append(w.fileAsked, r.N)
	case "sfil":
		fc.filePiece(w, r)
	case "sfak":
		if t := w.files[pk.Int("id")]; t != nil && t.ackN == 0 {
			t.ackN, t.ackTS = r.N, r.TS
		}
	case "ping":
		t0 := floatField(pk, "t0")
		w.pings++
		if w.haveT0 && t0 > w.lastT0 {
			if missed := int(math.Round(t0-w.lastT0)) - 1; missed > 0 && missed < 3600 {
				w.lostPings += missed
				w.pingLoss.add(r.N, r.TS, float64(missed))
			}
		}
		w.lastT0, w.haveT0 = t0, true
	case "pong":
		if len(w.pongs) > 64 {
			clear(w.pongs)
		}
		w.pongs[floatField(pk, "t1")] = r.TS
	case "pang":
		if t, ok := w.pongs[floatField(pk, "t1")]; ok && len(w.rtt) < 1<<16 {
			w.rtt = append(w.rtt, float64(r.TS.Sub(t))/1e6)
			delete(w.pongs, floatField(pk, "t1"))
		}
	}
}

func (w *convWatch) chase(fps float64) {
	if !math.IsNaN(fps) && fps > 0 {
		w.chaseSum += fps
		w.chaseN++
	}
}

// transfer is one file sent to a client in sfil pieces.
type transfer struct {
	id                     int64
	count, size            int
	pieces, bytes          int
	firstN, lastN, ackN    int
	firstTS, lastTS, ackTS time.Time
}

// filePiece follows the sfil pieces of a file transfer.
func (fc *findingCollector) filePiece(w *convWatch, r *session.Record) {
	pk := &r.Packet
	id := pk.Int("id")
	if w.files == nil {
		w.files = map[int64]*transfer{}
	}
	t := w.files[id]
	if t == nil {
		if len(w.files) >= 64 {
			return
		}
		t = &transfer{id: id, count: int(pk.Int("count")), size: int(pk.Int("file_size")), firstN: r.N, firstTS: r.TS}
		w.files[id] = t
		w.fileOrder = append(w.fileOrder, id)
	}
	t.pieces++
	t.bytes += int(pk.Int("size"))
	t.lastN, t.lastTS = r.N, r.TS
}

// newConversation reports how a conversation began: a rejoin of a known
// endpoint, two games sharing one, or a capture that starts mid-game.
func (fc *findingCollector) newConversation(w *convWatch, r *session.Record, name string) {
	v := evidence{}
	v.add(r.N, r.TS, 0)
	if prev := fc.byEnd[w.client]; prev != nil && prev != w {
		if prev.server.Addr() != w.server.Addr() && w.server.IsValid() && prev.server.IsValid() {
			f := fc.finding(w, KindSharedEndpoint, SeverityWarning, v, "%s talks to a second server %s (conversation %d talked to %s): two games in one capture share this client endpoint", w.client, w.server.Addr(), prev.conv, prev.server.Addr())
			fc.found(f)
		} else {
			f := fc.finding(w, KindRejoin, SeverityInfo, v, "%s shook hands again: conversation %d starts (conversation %d's last packet was frame %d)", w.client, w.conv, prev.conv, prev.lastN)
			f.Figures["previous_conv"] = float64(prev.conv)
			fc.found(f)
		}
	}
	fc.byEnd[w.client] = w
	switch name {
	case "1234", "5678", "cjon", "CJON", "sjon", "SJON":
		return
	}
	f := fc.finding(w, KindMidGame, SeverityInfo, v, "%s: no handshake in the capture, its first packet is %s (the capture starts mid-game)", w.who(), r.Packet.NameString())
	fc.found(f)
}

// outage reports a time when nothing went either way between a client
// and the server, then the game went on.
func (fc *findingCollector) outage(w *convWatch, from, to time.Time, fromN, toN int) {
	d := to.Sub(from)
	sev := SeverityInfo
	if d >= DropAfter {
		sev = SeverityError
	}
	v := evidence{first: fromN, worst: toN, last: toN, start: from, end: to}
	f := fc.finding(w, KindOutage, sev, v, "nothing went between %s and the server for %.1f s (%d frames), then the game went on", w.who(), d.Seconds(), int(d.Seconds()*GameFPS))
	f.Figures["seconds"] = d.Seconds()
	w.outFrom, w.outTo = from, to
	fc.found(f)
}

// silence reports a silence of one side while the other kept sending.
func (fc *findingCollector) silence(w *convWatch, kind string, from, to time.Time, fromN, toN int, g gap, atEnd bool) {
	d := to.Sub(from)
	if d < SilentAfter {
		return
	}
	// An outage of both directions said most of it already.
	lo, hi := from, to
	if w.outFrom.After(lo) {
		lo = w.outFrom
	}
	if w.outTo.Before(hi) {
		hi = w.outTo
	}
	if hi.Sub(lo) > d*4/5 {
		return
	}
	sev := SeverityInfo
	if d >= DropAfter {
		sev = SeverityError
	}
	v := evidence{first: fromN, worst: g.firstN, last: toN, start: from, end: to}
	if v.worst == 0 {
		v.worst = fromN
	}
	until := "then sent again"
	if atEnd {
		until = "until the capture ends"
	}
	var f *Finding
	if kind == KindSilentClient {
		f = fc.finding(w, kind, sev, v, "%s sent nothing for %.1f s (%d frames) while the server sent %d packets (%d difs, %d keyframes, %d bytes); %s",
			w.who(), d.Seconds(), int(d.Seconds()*GameFPS), g.packets, g.difs, g.keyframes, g.bytes, until)
		f.Figures["difs"], f.Figures["keyframes"], f.Figures["bytes"] = float64(g.difs), float64(g.keyframes), float64(g.bytes)
	} else {
		f = fc.finding(w, kind, sev, v, "the server sent nothing to %s for %.1f s (%d frames) while the client sent %d packets; %s",
			w.who(), d.Seconds(), int(d.Seconds()*GameFPS), g.packets, until)
	}
	f.Figures["seconds"], f.Figures["packets"] = d.Seconds(), float64(g.packets)
	fc.found(f)
}

// stdf follows the dsts of a client's difs: a dst gap that is a multiple
// of the usual step proves difs lost whole.
func (fc *findingCollector) stdf(w *convWatch, r *session.Record) {
	pk := &r.Packet
	src, _ := stdfSrc.Int(pk)
	dst32, _ := stdfDst.Int(pk)
	dst := int32(dst32)
	slsn := -1
	if v, ok := stdfSLSN.Int(pk); ok {
		slsn = int(v)
	}
	if w.known(dst, slsn) {
		return // a piece of a dif seen before
	}
	w.s2c.difs++
	if src == 0 {
		w.s2c.keyframes++
	}
	w.seenDifs++
	newLevel := w.haveLevel && slsn != w.lastSLSN
	if slsn < 0 && w.haveLevel && len(w.pend) > 0 && dst+10*GameFPS < w.pend[len(w.pend)-1].dst {
		newLevel = true // legacy: the frames started again
	}
	if newLevel {
		for _, d := range w.pend {
			fc.settle(w, d)
		}
		w.pend, w.haveDst, w.nsteps, w.suspects = w.pend[:0], false, 0, w.suspects[:0]
		if slsn > w.lastSLSN && w.lastSLSN >= 0 {
			fc.levelChange(w, slsn, dst, r)
		}
	}
	w.lastSLSN, w.haveLevel = slsn, true
	if w.haveDst && dst <= w.lastDst {
		return // later than the difs settled after it
	}
	// Difs may arrive out of order: the newest few wait in dst order, and
	// the gaps are judged once they are settled.
	i, _ := slices.BinarySearchFunc(w.pend, dst, func(d seenDif, t int32) int { return cmp.Compare(d.dst, t) })
	w.pend = slices.Insert(w.pend, i, seenDif{dst, r.N, r.TS})
	if len(w.pend) > reorderDifs {
		fc.settle(w, w.pend[0])
		w.pend = append(w.pend[:0], w.pend[1:]...)
	}
}

// reorderDifs is how many of a client's newest difs wait to be put in dst
// order before their gaps are judged.
const reorderDifs = 8

// seenDif is a dif seen, by its dst and first piece.
type seenDif struct {
	dst int32
	n   int
	ts  time.Time
}

// known reports whether a dif of this dst was seen lately.
func (w *convWatch) known(dst int32, slsn int) bool {
	if !w.haveLevel || slsn != w.lastSLSN {
		return false
	}
	if w.haveDst && dst == w.lastDst {
		return true
	}
	for _, d := range w.pend {
		if d.dst == dst {
			return true
		}
	}
	return false
}

// settle judges the gap before a dif, in dst order: a gap of k usual steps
// is k−1 difs lost whole, once the next gap is the usual step again (a
// client joining or leaving changes the pace).
func (fc *findingCollector) settle(w *convWatch, d seenDif) {
	if !w.haveDst {
		w.lastDst, w.haveDst = d.dst, true
		return
	}
	step := d.dst - w.lastDst
	w.lastDst = d.dst
	usual := int32(0)
	if w.nsteps >= 4 {
		usual = w.usual()
	}
	if len(w.suspects) > 0 && (usual != w.suspects[0].usual || len(w.suspects) >= len(w.steps)) {
		w.suspects = w.suspects[:0] // a new pace, not a loss
	}
	switch {
	case usual <= 0:
	case step == usual:
		for _, p := range w.suspects {
			w.lostWhole += p.lost
			w.longest = max(w.longest, p.lost)
			w.loss.add(p.n, p.ts, float64(p.lost))
		}
		w.suspects = w.suspects[:0]
	case step > usual && step%usual == 0 && step/usual <= 1000:
		w.suspects = append(w.suspects, suspectGap{usual: usual, lost: int(step/usual) - 1, n: d.n, ts: d.ts})
	default:
		w.suspects = w.suspects[:0]
	}
	w.steps[w.nsteps%len(w.steps)] = step
	w.nsteps++
}

// suspectGap is a dst gap that may be difs lost whole.
type suspectGap struct {
	usual int32
	lost  int
	n     int
	ts    time.Time
}

// usual is the most common of the recent dst steps (the smallest of equals).
func (w *convWatch) usual() int32 {
	st := w.steps[:min(w.nsteps, len(w.steps))]
	best, bestN := int32(0), 0
	for _, a := range st {
		n := 0
		for _, b := range st {
			if a == b {
				n++
			}
		}
		if n > bestN || n == bestN && a < best {
			best, bestN = a, n
		}
	}
	return best
}

// levelChange reports a new level sequence, once per game.
func (fc *findingCollector) levelChange(w *convWatch, slsn int, dst int32, r *session.Record) {
	k := levelKey{w.server.Addr(), slsn}
	if fc.levels[k] {
		return
	}
	fc.levels[k] = true
	v := evidence{}
	v.add(r.N, r.TS, 0)
	f := fc.finding(w, KindLevelChange, SeverityInfo, v, "level sequence %d begins (slsn %d → %d): the server's frames start again at %d", slsn, w.lastSLSN, slsn, dst)
	f.Figures["slsn"], f.Figures["first_frame"] = float64(slsn), float64(dst)
	f.Evidence.States = []StateRef{{SLSN: slsn, Frame: dst}}
	if fc.levelOf != nil {
		fc.pendLevels = append(fc.pendLevels, f) // the level is named by the states of the level before
		return
	}
	fc.found(f)
}

// levelNamed reports the level changes whose new level sequence has a
// rebuilt state now (all of them at the end), with the level's number
// when the states of the sequence before named it.
func (fc *findingCollector) levelNamed(conv, slsn int, all bool) {
	k := 0
	for _, f := range fc.pendLevels {
		next := int(f.Figures["slsn"])
		if !all && (f.Conv != conv || slsn < next) {
			fc.pendLevels[k] = f
			k++
			continue
		}
		if lv := fc.levelOf(f.Conv, next-1); lv > 0 {
			f.Figures["level"] = float64(lv)
			f.Summary = fmt.Sprintf("level %d begins (level sequence %d, slsn %d → %d): the server's frames start again at %d",
				lv, next, next-1, next, f.Evidence.States[0].Frame)
		}
		fc.found(f)
	}
	clear(fc.pendLevels[k:])
	fc.pendLevels = fc.pendLevels[:k]
}

// The legacy sdat player-state values that end a player.
const (
	sdatQuit     = 64
	sdatDropSync = 70
	sdatDropAck  = 71
)

// sdat reads the legacy game-move entries that end a player: quit (64) and
// dropped (70: sync over 100 frames, 71: no sdak for 100 frames).
func (fc *findingCollector) sdat(w *convWatch, r *session.Record) {
	pk := &r.Packet
	if len(pk.Entries) == 0 || pk.Layout == nil {
		return
	}
	gi := pk.Layout.Field("entries")
	if gi < 0 {
		return
	}
	sub := len(pk.Layout.Fields[gi].Sub)
	if sub != 4 {
		return
	}
	for i := 0; i+4 <= len(pk.Entries); i += 4 {
		frame, typ, player, val := pk.Entries[i].Int, pk.Entries[i+1].Int, pk.Entries[i+2].Int, pk.Entries[i+3].Int
		if typ != 1 || (val != sdatQuit && val != sdatDropSync && val != sdatDropAck) {
			continue
		}
		key := fmt.Sprintf("sdat %s %d %d", w.server.Addr(), player, val)
		if w.reported[key] {
			continue
		}
		// Every conversation of the game gets the entry: report it once.
		dup := false
		for _, id := range fc.order {
			if o := fc.convs[id]; o.server.Addr() == w.server.Addr() && o.reported[key] {
				dup = true
			}
		}
		w.reported[key] = true
		if dup {
			continue
		}
		v := evidence{}
		v.add(r.N, r.TS, 0)
		var f *Finding
		switch val {
		case sdatQuit:
			if player == 0 {
				f = fc.finding(w, KindLeave, SeverityInfo, v, "the server (player 0) quit at frame %d: the game ended (game-move entry: state 64)", frame)
			} else {
				f = fc.finding(w, KindLeave, SeverityInfo, v, "player %d quit at frame %d (game-move entry: state 64)", player, frame)
			}
		case sdatDropSync:
			f = fc.finding(w, KindDropped, SeverityError, v, "the server dropped player %d at frame %d: out of sync by more than 100 frames (game-move entry: state 70)", player, frame)
		default:
			f = fc.finding(w, KindDropped, SeverityError, v, "the server dropped player %d at frame %d: no sdak for 100 frames (game-move entry: state 71)", player, frame)
		}
		f.Player = int(player)
		if o := fc.playerConv(w.server.Addr(), int(player)); o != nil {
			f.Conv, f.Client = o.conv, o.client
			o.reported["quit"] = true
		}
		f.Figures["frame"], f.Figures["state"] = float64(frame), float64(val)
		fc.found(f)
	}
}

func (fc *findingCollector) playerConv(server netip.Addr, player int) *convWatch {
	var out *convWatch
	for _, id := range fc.order {
		if o := fc.convs[id]; o.server.Addr() == server && o.player == player {
			out = o
		}
	}
	return out
}

// dif takes every dif as it ends.
func (fc *findingCollector) dif(d *Dif, baseReset bool) {
	w := fc.convs[d.Conv]
	if w == nil {
		return
	}
	fc.nextSecond(w, d.Last)
	w.secDifs++
	if baseReset {
		w.resets++
		w.resetBytes += d.Bytes
		w.storm.ev.add(d.LastN, d.Last, 0)
	}
	if d.Status == reassemble.Incomplete {
		w.incompl++
		w.lostPcs += len(d.Missing)
		w.loss.add(d.LastN, d.Last, float64(len(d.Missing))/float64(max(d.Count, 1)))
	}
	w.lastN0, w.lastDifComplete, w.lastDifTS = d.LastN, d.Status == reassemble.Complete, d.Last
}

// ack takes every stak with its latency, when it has one.
func (fc *findingCollector) ack(a Ack, ms float64, measured bool) {
	w := fc.convs[a.Line.Conv]
	if w == nil {
		return
	}
	fc.nextSecond(w, a.TS)
	w.secAcks++
	fc.ackedState(w, replay.Frame{SLSN: a.SLSN, N: a.Frame}, a.N)
	if !measured {
		return
	}
	if len(w.lat) < 1<<16 {
		w.lat = append(w.lat, ms)
	}
	if w.firstAck == 0 {
		w.firstAck = a.N
	}
	w.lastAck = a.N
	if w.ewma > 0 && ms > 3*w.ewma && ms > w.ewma+50 {
		w.spikes++
	}
	if w.ewma == 0 {
		w.ewma = ms
	} else {
		w.ewma = 0.95*w.ewma + 0.05*ms
	}
	if ms > w.worstMs {
		w.worstMs, w.worstN = ms, a.N
	}
}

// nextSecond closes the seconds before ts: slow chase runs and base-reset
// storms are judged a second at a time.
func (fc *findingCollector) nextSecond(w *convWatch, ts time.Time) {
	s := fc.second(ts)
	if s <= w.sec {
		return
	}
	fc.closeSecond(w, s)
}

func (fc *findingCollector) closeSecond(w *convWatch, next int) {
	gapped := next > w.sec+1
	if w.chaseN > 0 && w.chaseSum/float64(w.chaseN) < SlowFPS {
		m := w.chaseSum / float64(w.chaseN)
		r := &w.slow
		if r.secs == 0 {
			r.from, r.min, r.max = w.sec, m, m
		}
		r.to, r.secs = w.sec, r.secs+1
		r.min, r.max = math.Min(r.min, m), math.Max(r.max, m)
		r.difs += w.secDifs
		r.acks += w.secAcks
		if r.ev.first == 0 {
			r.ev.add(w.lastN, w.last, 0)
		}
		r.ev.last, r.ev.end = w.lastN, w.last
	} else {
		fc.endSlow(w)
	}
	if gapped {
		fc.endSlow(w)
	}
	if w.resets >= StormResets {
		r := &w.storm
		if r.secs == 0 {
			r.from = w.sec
		}
		r.to, r.secs = w.sec, r.secs+1
		r.count += w.resets
		r.bytes += w.resetBytes
		r.max = math.Max(r.max, float64(w.resets))
	} else {
		fc.endStorm(w)
	}
	if gapped {
		fc.endStorm(w)
	}
	if w.resets < StormResets && w.storm.secs == 0 {
		w.storm.ev = evidence{}
	}
	w.sec = next
	w.chaseSum, w.chaseN, w.secDifs, w.secAcks, w.resets, w.resetBytes = 0, 0, 0, 0, 0, 0
}

func (fc *findingCollector) at(sec int) time.Time { return fc.t0.Add(time.Duration(sec) * time.Second) }

func (fc *findingCollector) endSlow(w *convWatch) {
	r := w.slow
	w.slow = run{}
	if r.secs == 0 {
		return
	}
	sev := SeverityInfo
	if r.secs >= 3 {
		sev = SeverityWarning
	}
	v := r.ev
	v.start, v.end = fc.at(r.from), fc.at(r.to+1)
	applied := 100.0
	if r.difs > 0 {
		applied = 100 * float64(min(r.acks, r.difs)) / float64(r.difs)
	}
	fps := fmt.Sprintf("%.0f–%.0f", r.min, r.max)
	if fps == fmt.Sprintf("%.0f–%.0f", r.min, r.min) {
		fps = fmt.Sprintf("%.0f", r.min)
	}
	f := fc.finding(w, KindSlowClient, sev, v, "%s ran at %s fps against the server's %d for %d s and acknowledged %.0f %% of the %d difs it was sent",
		w.who(), fps, GameFPS, r.secs, applied, r.difs)
	f.Figures["min_fps"], f.Figures["max_fps"], f.Figures["seconds"] = r.min, r.max, float64(r.secs)
	f.Figures["difs"], f.Figures["acks"], f.Figures["applied_pct"] = float64(r.difs), float64(r.acks), applied
	fc.found(f)
}

func (fc *findingCollector) endStorm(w *convWatch) {
	r := w.storm
	w.storm = run{}
	if r.secs == 0 {
		return
	}
	sev := SeverityInfo
	if r.secs >= StormSeconds {
		sev = SeverityWarning
	}
	v := r.ev
	v.start, v.end = fc.at(r.from), fc.at(r.to+1)
	f := fc.finding(w, KindResetStorm, sev, v, "%s got %d base resets in %d s (up to %.0f a second), %d bytes of keyframes",
		w.who(), r.count, r.secs, r.max, r.bytes)
	f.Figures["base_resets"], f.Figures["seconds"], f.Figures["bytes"], f.Figures["max_per_s"] = float64(r.count), float64(r.secs), float64(r.bytes), r.max
	fc.found(f)
}

// state takes every rebuilt state: an acknowledged state is compared with
// the other clients' acknowledged states of the same frame.
func (fc *findingCollector) state(s *replay.State) {
	if len(fc.pendLevels) > 0 {
		fc.levelNamed(s.Conv, s.SLSN, false)
	}
	w := fc.convs[s.Conv]
	if w == nil || s.Status != replay.OK {
		return
	}
	k := replay.Frame{SLSN: s.SLSN, N: s.Dst}
	if _, ok := w.sums[k]; !ok {
		w.sums[k] = stateSum{s.Sum, s.N}
		w.sumQ = append(w.sumQ, k)
		if len(w.sumQ) > 4096 {
			delete(w.sums, w.sumQ[0])
			w.sumQ = w.sumQ[1:]
		}
	}
	if n, ok := w.acked[k]; ok {
		fc.compare(w, k, s.Sum, n)
	}
}

func (fc *findingCollector) ackedState(w *convWatch, k replay.Frame, n int) {
	if _, ok := w.acked[k]; ok {
		return
	}
	w.acked[k] = n
	w.ackQ = append(w.ackQ, k)
	if len(w.ackQ) > 4096 {
		delete(w.acked, w.ackQ[0])
		w.ackQ = w.ackQ[1:]
	}
	if s, ok := w.sums[k]; ok {
		fc.compare(w, k, s.sum, n)
	}
}

// compare checks an acknowledged state against the game's first
// acknowledged state of that frame.
func (fc *findingCollector) compare(w *convWatch, k replay.Frame, sum [32]byte, n int) {
	g := gameFrame{w.server.Addr(), k.SLSN, k.N}
	o, ok := fc.games[g]
	if !ok {
		fc.games[g] = ackedState{w.conv, sum, n}
		fc.gameQ = append(fc.gameQ, g)
		if len(fc.gameQ) > 1<<16 {
			delete(fc.games, fc.gameQ[0])
			fc.gameQ = fc.gameQ[1:]
		}
		return
	}
	if o.conv == w.conv || o.sum == sum {
		return
	}
	fc.descy++
	if fc.descy > 20 {
		return // enough to see it
	}
	v := evidence{first: min(o.n, n), worst: n, last: max(o.n, n), start: w.last, end: w.last}
	f := fc.finding(w, KindDesync, SeverityError, v, "%s and conversation %d acknowledged different states of level sequence %d frame %d (sha256 %x… and %x…)",
		w.who(), o.conv, k.SLSN, k.N, sum[:4], o.sum[:4])
	f.Figures["other_conv"], f.Figures["frame"] = float64(o.conv), float64(k.N)
	f.Evidence.States = []StateRef{{SLSN: k.SLSN, Frame: k.N}}
	fc.found(f)
}
