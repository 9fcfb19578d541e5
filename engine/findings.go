package engine

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/statedif"
)

// The packet fields the findings read by name, resolved once.
var (
	sjonPlayer    = decode.MustRoleRef(decode.RolePlayer, "SJON", "sjon")
	sjonFrame     = decode.MustRoleRef(decode.RoleFrame, "SJON", "sjon")
	sjonLevel     = decode.MustRef("level", "SJON", "sjon")
	fileID        = decode.MustRef("id", "sfil", "sfak")
	filePieces    = decode.MustRoleRef(decode.RolePieceCount, "sfil")
	filePieceSize = decode.MustRoleRef(decode.RoleSize, "sfil")
	fileSize      = decode.MustRef("file_size", "sfil")
	saveResultOf  = decode.MustKindRef(decode.KindSaveResult, "result")
)

// findingCollector finds what went wrong, from what the engine sees: the
// packet headers (fast), the difs' headers and acks, and, when states are
// rebuilt, the states.
type findingCollector struct {
	found  func(*Finding)
	t0     time.Time
	clock  secondClock
	convs  map[int]*convWatch
	byID   []*convWatch // the same, by conversation id below maxLineMemos
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
	// waiting is set when finish left what the states decide to
	// statesDone (the rebuild runs behind the fast pass).
	waiting bool
	user    *schema.Schema // the caller's state layouts, beside the built-in ones
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
	sum  statedif.Hash
	n    int
	ts   time.Time
}

// gap counts what one side sent while the other was silent.
type gap struct {
	packets, difs, keyframes, bytes int
	firstN                          int
	frames                          []FrameRange // the game frames of the difs sent, per level sequence
}

// convWatch is what the findings keep of one conversation.
type convWatch struct {
	conv           int
	client, server netip.AddrPort
	player         int
	era            decode.Version
	first, last    time.Time
	firstN, lastN  int
	joinSeen       bool
	joinAsks       []int // capture frames of its join requests (up to 8)
	joinAsksAt     []time.Time
	reported       map[string]bool

	outFrom, outTo     time.Time  // the last outage reported
	prev               *convWatch // the conversation of the same client endpoint before, until judged
	prevN              int
	prevTS             time.Time
	lastC2S, lastS2C   time.Time
	lastC2SN, lastS2CN int
	s2c, c2s           gap // sent by the server since the client's last packet, and the other way

	// difs lost whole, from the dst gaps of the stdf pieces
	lastDst    int32
	lastSLSN   int
	haveDst    bool
	steps      [16]int32
	nsteps     int
	seenDifs   int
	lostWhole  int
	longest    int
	suspects   []suspectGap
	lostFrames []FrameRange // the first runs of difs lost whole
	// the level sequence of the newest dif (legacy: counted from frame
	// restarts, as the states' level sequences are)
	seqNow, legacyLevel int
	pend                []seenDif
	haveLevel           bool
	loss                evidence
	incompl             int
	lostPcs             int
	// the ping round trip (modern), and what proves loss
	pongs echoes
	rtt   []float64
	lw    lossWatch
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
	// the difs sent and which were acknowledged, acks that went back
	sent                *recentFrames[bool] // the last 512 difs sent, true once acknowledged
	secApplied          int
	secRewinds, secBack int
	secToZero           int
	ackedLast           replay.Frame
	haveAck             bool
	rewinds, rewindBack int // over the whole game
	// late inputs, corrections
	inputs, late       int
	lateEv             evidence
	lateKnown, lateBig int   // late inputs whose lateness the serr says, and those LateFrames or more late
	lateTotal          int64 // the highest running total of late inputs a serr carried
	bigCorr            int   // corrections of CorrectionPx or more
	skip               skips
	staks, corrections int
	maxCorr            float64
	corrEv             evidence
	// desync: this conversation's rebuilt and acknowledged states
	sums  *recentFrames[stateSum] // the last 4096
	acked *recentFrames[ackAt]    // the last 4096
	// players active in the newest rebuilt state, and the client's last
	// stak and menu input (modern), for the players the server drops
	activeMask         uint8
	activeSLSN         int
	haveMask           bool
	lastStak, lastMenu time.Time
	lastStakN          int
	fileAsked          []int               // frames of crfl requests
	fileAskedAt        []time.Time         // and their times
	saveResults        []saveResult        // the server's answers to them (srrf)
	files              map[int64]*transfer // file transfers by id
	fileOrder          []int64
	lastN0             int // last piece of the newest dif
	lastDifComplete    bool
	lastMissing        int
	lastDifTS          time.Time
	lastDifDst         int32 // the frame of the last dif
	leaveWaits         bool  // finish left the leave at the capture's end to statesDone
	// of no known version: why (the conversation's Unrecognised, as of
	// its last packet), its packets (counted here: the conversation's
	// counts of a later stage's copy are not kept up), and those that fit
	// no version
	unrecognised string
	packets      int
	noVersion    evidence
	noVersionN   int
}

type stateSum struct {
	sum statedif.Hash
	n   int
}

// evidence gathers the capture frames of one finding.
type evidence struct {
	first, worst, last int
	start, end         time.Time
	worstV             float64
}

func (v *evidence) add(n int, ts time.Time, weight float64) {
	// Evidence may come out of capture order (difs put back in dst order).
	if v.first == 0 || n < v.first {
		v.first, v.start = n, ts
	}
	if n >= v.last {
		v.last, v.end = n, ts
	}
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
	applied    int // difs acknowledged (the others were replaced before they were applied)
	rewinds    int // acknowledgements that went back
	back       int // the most frames one went back
	toZero     int // of the rewinds, those to frame 0
	bytes      int
	count      int
	ev         evidence
}

// SortFindings sorts findings in place by severity (the worst first), then
// start time, then conversation, and returns them: the order doctor and the
// terminal UI list them in. Findings alike in those are ordered by kind,
// end, first frame and summary, so that the order does not depend on the
// order they were found in (which differs when the states are rebuilt
// behind the fast pass).
func SortFindings(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case a.Severity != b.Severity:
			return int(b.Severity) - int(a.Severity)
		case !a.Start.Equal(b.Start):
			return a.Start.Compare(b.Start)
		case a.Conv != b.Conv:
			return a.Conv - b.Conv
		case a.Kind != b.Kind:
			return strings.Compare(a.Kind, b.Kind)
		case !a.End.Equal(b.End):
			return a.End.Compare(b.End)
		case a.Evidence.First != b.Evidence.First:
			return a.Evidence.First - b.Evidence.First
		}
		return strings.Compare(a.Summary, b.Summary)
	})
	return fs
}

func newFindingCollector(found func(*Finding)) *findingCollector {
	return &findingCollector{found: found, convs: map[int]*convWatch{}, levels: map[levelKey]bool{},
		byEnd: map[netip.AddrPort]*convWatch{}, games: map[gameFrame]ackedState{}}
}

// found records a finding and reports it as an event (the lock is held).
func (e *Engine) found(f *Finding) {
	if f.End.Before(f.Start) {
		f.End = f.Start // time going back (captures read one after another)
	}
	if len(e.findings) >= MaxFindings {
		if len(e.findings) == MaxFindings {
			e.findings = append(e.findings, Finding{Kind: "too-many-findings", Severity: SeverityWarning, Start: f.Start, End: f.End, Player: -1,
				Summary: fmt.Sprintf("more than %d findings: the later ones are not kept", MaxFindings), Figures: map[string]float64{}})
		}
		return
	}
	f.Severity = max(f.Severity, Judge(f))
	e.findings = append(e.findings, *f)
	if e.wants(FindingEvents) {
		e.emit(FindingEvent{Finding: f})
	}
}

// FindingCounts counts findings by severity.
type FindingCounts struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Info     int `json:"info"`
}

func countFindings(fs []Finding) *FindingCounts {
	var c FindingCounts
	for _, f := range fs {
		switch f.Severity {
		case SeverityError:
			c.Errors++
		case SeverityWarning:
			c.Warnings++
		default:
			c.Info++
		}
	}
	return &c
}

// MaxFindings bounds the findings an engine keeps (a hostile or endless
// capture); past it one last finding says so.
const MaxFindings = 100000

// conv returns the watch of conversation id, nil if none.
func (fc *findingCollector) conv(id int) *convWatch {
	if id >= 0 && id < len(fc.byID) {
		return fc.byID[id] // every watch of an id below len(byID) is in it
	}
	return fc.convs[id]
}

func (fc *findingCollector) watch(c *session.Conversation) *convWatch {
	w := fc.conv(c.ID)
	if w == nil {
		w = &convWatch{conv: c.ID, client: c.Client, player: -1, reported: map[string]bool{},
			sums: newRecentFrames[stateSum](4096), acked: newRecentFrames[ackAt](4096), pongs: map[float64]time.Time{}, sent: newRecentFrames[bool](512)}
		w.lw.init()
		fc.convs[c.ID] = w
		if c.ID >= 0 && c.ID < maxLineMemos {
			for len(fc.byID) <= c.ID {
				fc.byID = append(fc.byID, nil)
			}
			fc.byID[c.ID] = w
		}
		fc.order = append(fc.order, c.ID)
	}
	w.server, w.era, w.unrecognised = c.Server, c.Version, c.Unrecognised
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
	return fc.clock.second(fc.t0, ts)
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
	if w.firstN == 0 {
		w.first, w.firstN = r.TS, r.N
		fc.newConversation(w, r)
	}
	if d := sub(r.TS, w.last); !w.last.IsZero() && d >= SilentAfter && w.lastN != r.N {
		fc.outage(w, w.last, r.TS, w.lastN, r.N)
	}
	w.last, w.lastN = r.TS, r.N
	w.packets++
	fc.arrived(w, r)
	if w.prev != nil && w.era != decode.VersionUnknown {
		fc.sameEndpoint(w)
	}
	if r.Dir == decode.C2S {
		fc.c2sArrived(w, r)
		if !w.lastC2S.IsZero() && w.s2c.packets > 0 {
			fc.silence(w, KindSilentClient, w.lastC2S, r.TS, w.lastC2SN, r.N, w.s2c, false)
		}
		w.lastC2S, w.lastC2SN, w.s2c = r.TS, r.N, gap{frames: w.s2c.frames[:0]}
		w.c2s.packets++
	} else if r.Dir == decode.S2C {
		fc.s2cArrived(w, r)
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
		fc.noVersionPacket(w, r)
		return
	}
	fc.lossPacket(w, r)
	switch r.Packet.Kind() {
	case decode.KindJoinRequest:
		if len(w.joinAsks) < 8 {
			w.joinAsks, w.joinAsksAt = append(w.joinAsks, r.N), append(w.joinAsksAt, r.TS)
		}
	case decode.KindJoinReply:
		w.joinSeen = true
		if pl, ok := sjonPlayer.Int(pk); ok && pl != 99 {
			w.player = int(pl)
			v := evidence{}
			v.add(r.N, r.TS, 0)
			level := refInt(sjonLevel, pk)
			f := fc.finding(w, KindJoin, SeverityInfo, v, "%s joined as player %d (level %d, server frame %d)", w.client, w.player, level, refInt(sjonFrame, pk))
			f.Figures["level"] = float64(level)
			if slsn, ok := sjonSLSN.Int(pk); ok {
				f.Figures["slsn"] = float64(slsn)
				fc.levels[levelKey{w.server.Addr(), int(slsn)}] = true
			}
			fc.found(f)
		}
	case decode.KindDifPiece:
		fc.stdf(w, r)
	case decode.KindInput:
		w.inputs++
		if mv, ok := cdatMove.Int(pk); ok && pk.Version.InMenu(mv) {
			w.lastMenu = r.TS
		}
	case decode.KindLateInput:
		if v, ok := serrLateTotal.Int(pk); ok && v > w.lateTotal && v < 1<<30 {
			w.lateTotal = v // the client's running total: the serr lost count too
		}
		w.late++
		w.lateEv.add(r.N, r.TS, 0)
		if c, ok := serrCSync.Int(pk); ok {
			w.lateKnown++
			if c != 0 {
				c = decode.RecoverNegative(uint32(c)) // c_sync is sent as the legacy negative
			}
			if -c >= LateFrames {
				w.lateBig++
			}
		}
	case decode.KindGameMoves:
		fc.sdat(w, r)
	case decode.KindGameMovesAck:
		if fps, ok := sdakChase.Int(pk); ok {
			w.chase(float64(fps))
		}
		if f, ok := sdakFrame.Int(pk); ok {
			if k, ok := sdakSkipped.Int(pk); ok {
				w.skip.sdak(f, k, r.N, r.TS)
			}
		}
	case decode.KindDifAck:
		w.staks++
		w.lastStak, w.lastStakN = r.TS, r.N
		corrected := false
		if c, ok := stakCorr.Int(pk); ok {
			corrected = c != 0
		}
		if stakChase.Has(pk) {
			w.chase(refFloat(stakChase, pk))
			lc := refFloat(stakLocal, pk)
			corrected = lc > JumpPx
			if lc > w.maxCorr {
				w.maxCorr = lc
			}
			if lc >= CorrectionPx {
				w.bigCorr++
			}
		}
		if corrected {
			w.corrections++
			w.corrEv.add(r.N, r.TS, 0)
		}
	case decode.KindFileRequest:
		if len(w.fileAsked) < 64 {
			w.fileAsked = append(w.fileAsked, r.N)
			w.fileAskedAt = append(w.fileAskedAt, r.TS)
		}
	case decode.KindFilePiece:
		fc.filePiece(w, r)
	case decode.KindSaveResult:
		if len(w.saveResults) < 64 {
			res, _ := saveResultOf.Int(pk)
			w.saveResults = append(w.saveResults, saveResult{n: r.N, ts: r.TS, result: res})
		}
	case decode.KindFileAck:
		if t := w.files[refInt(fileID, pk)]; t != nil && t.ackN == 0 {
			t.ackN, t.ackTS = r.N, r.TS
		}
	case decode.KindProbeReply:
		w.pongs.sent(refFloat(pongT1, pk), r.TS)
	case decode.KindProbeEcho:
		if len(w.rtt) < 1<<16 {
			if ms, ok := w.pongs.echoed(refFloat(pongT1, pk), r.TS); ok {
				w.rtt = append(w.rtt, ms)
			}
		}
	}
}

func (w *convWatch) chase(fps float64) {
	if !math.IsNaN(fps) && fps > 0 {
		w.chaseSum += fps
		w.chaseN++
	}
}
