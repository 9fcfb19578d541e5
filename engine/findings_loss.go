package engine

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
)

// The packet fields the loss findings read, resolved once.
var (
	serrLateTotal = decode.MustRef("late_total", "serr")
	serrCSync     = decode.MustRef("c_sync", "serr")
	cdatFrame     = decode.MustRoleRef(decode.RoleFrame, "cdat")
	cdatMove      = decode.MustRef("move", "cdat")
	gameMovesAck  = decode.MustKindRoleRef(decode.KindDifAck, decode.RoleFrame)
)

// What the loss findings wait for before they judge.
const (
	// echoWait is how long a ping waits for its pong (and a pong for its
	// pang) before it is taken as lost, if the other side sent something
	// since: the server answers a ping at once, the client a pong too.
	echoWait = 3 * time.Second
	// windowMin is the shortest window with nothing arriving in one
	// direction that the loss finding counts (10 frames), when it is also
	// windowTimes the direction's usual gap between datagrams.
	windowMin   = 250 * time.Millisecond
	windowTimes = 8
	// reorderSeq is how many of the newest sequenced values (serr totals,
	// cdat frames) wait to be put in order before their gaps are judged.
	reorderSeq = 16
	// seqRestart is how far a value may fall below the last one settled
	// before the sequence is taken to have started again (3 s of frames;
	// reordering moves values a few frames).
	seqRestart = 3 * GameFPS
	// minKindSent is the packets of one kind below which its own loss rate
	// does not weigh on the severity (a rate of 1 in 10 proves little).
	minKindSent = 50
	// pingStall is the silence of a client, while the server kept sending,
	// that makes a ping it skipped no proof of loss (half a ping period).
	pingStall = 500 * time.Millisecond
	// pingSlack is how far from a whole number of seconds a gap between
	// two pings' client times may be for the seconds between to be pings
	// lost: the client's pings come 1 s ± 50 ms apart; a ping the client
	// sent late after a stall is not a whole number away.
	pingSlack = 0.12
)

// lossTally counts one packet kind of one direction: the packets that
// arrived, those proven lost, and the longest run of them lost in a row.
type lossTally struct {
	seen, lost, longest int
	ev                  evidence
	probe               *probes // the direction's probes, when the kind is one
}

// saw records a packet that arrived at ts.
func (t *lossTally) saw(ts time.Time) {
	t.seen++
	t.probe.saw(1, ts)
}

// missBetween records k packets lost in a row between two that arrived
// at from and to, proven by the packet at n: the probes count each lost
// one at its share of the time between (a loss is placed when it
// happened, not when a later packet proved it).
func (t *lossTally) missBetween(k, n int, from, to time.Time) {
	if k <= 0 {
		return
	}
	if t.probe != nil && k <= 1000 && to.After(from) {
		step := to.Sub(from) / time.Duration(k+1)
		for i := 1; i <= k; i++ {
			t.probe.miss(1, n, from.Add(time.Duration(i)*step))
		}
		p := t.probe
		t.probe = nil
		t.miss(k, n, to)
		t.probe = p
		return
	}
	t.miss(k, n, to)
}

// miss records k packets lost in a row, proven by the packet at n, ts.
func (t *lossTally) miss(k, n int, ts time.Time) {
	if k <= 0 {
		return
	}
	t.probe.miss(float64(k), n, ts)
	t.lost += k
	t.longest = max(t.longest, k)
	t.ev.add(n, ts, float64(k))
}

// seqItem is one value of a sequence (a serr's running total, a cdat's
// frame), with what is compared between neighbours (a cdat's controls).
type seqItem struct {
	v, aux int64
	n      int
	ts     time.Time
}

// seqOrder puts the newest values of a sequence in order and settles the
// oldest: judge sees each settled value after the one before it.
type seqOrder struct {
	pend []seqItem
	last seqItem
	have bool
}

func (s *seqOrder) add(it seqItem, judge func(prev, cur seqItem)) {
	if s.have && it.v+seqRestart < s.last.v {
		// The values started again (cdat frames at a new level).
		s.flush(judge)
		s.have = false
	}
	if s.have && it.v <= s.last.v {
		return // a duplicate, or later than the values settled after it
	}
	i, found := slices.BinarySearchFunc(s.pend, it.v, func(a seqItem, v int64) int { return cmp.Compare(a.v, v) })
	if found {
		return
	}
	s.pend = slices.Insert(s.pend, i, it)
	if len(s.pend) > reorderSeq {
		s.settle(judge)
	}
}

func (s *seqOrder) settle(judge func(prev, cur seqItem)) {
	it := s.pend[0]
	s.pend = append(s.pend[:0], s.pend[1:]...)
	if s.have {
		judge(s.last, it)
	}
	s.last, s.have = it, true
}

func (s *seqOrder) flush(judge func(prev, cur seqItem)) {
	for len(s.pend) > 0 {
		s.settle(judge)
	}
}

// echoAt is a packet waiting for its echo.
type echoAt struct {
	n  int
	ts time.Time
}

// balanceSec is one second of a request/answer balance (legacy sdat and
// the sdak that answers each): the lowest and the last count of requests
// not answered yet.
type balanceSec struct {
	sec      int
	low, end int32
	n        int
	ts       time.Time
}

// arrivals follows the gaps between the datagrams of one direction, to
// find the windows where nothing arrived.
type arrivals struct {
	last           time.Time
	lastN          int
	usualMs        float64 // moving average of the gaps
	windows        int
	longest, total time.Duration
	short          time.Duration // in the windows under SilentAfter (the longer are outages)
	ev             evidence
}

func (a *arrivals) arrive(n int, ts time.Time, bothLive bool) {
	if !a.last.IsZero() {
		d := sub(ts, a.last)
		ms := float64(d) / 1e6
		if bothLive && d >= windowMin && a.usualMs > 0 && ms >= windowTimes*a.usualMs {
			a.windows++
			a.total += d
			if d < SilentAfter {
				a.short += d
			}
			if d > a.longest {
				a.longest = d
			}
			a.ev.add(a.lastN, a.last, ms)
			a.ev.last, a.ev.end = n, ts
		}
		ms = math.Min(ms, 1000)
		if a.usualMs == 0 {
			a.usualMs = ms
		} else {
			a.usualMs = 0.95*a.usualMs + 0.05*ms
		}
	}
	a.last, a.lastN = ts, n
}

// lossWatch is what the loss findings keep of one conversation, beyond
// the difs lost whole that stdf follows.
type lossWatch struct {
	// client → server
	pings, pangs, sdaks, staks, cdats lossTally
	skippedPings                      int
	stalled                           bool          // the client was silent while the server kept sending, since the last ping
	s2cGap                            time.Duration // the longest the server was silent during the client's silence
	lastT0                            float64
	lastPing                          time.Time // when the newest ping arrived
	haveT0                            bool
	waitPang                          map[float64]echoAt
	cdatSeq                           seqOrder
	// legacy sdat/sdak balance, per second
	owed     int32
	bal      []balanceSec
	lastSdak int // index in bal of the second of the newest sdak, -1 before
	// legacy staks: the frames acknowledged and the difs seen lately
	acked      map[int32]bool
	ackQ       []int32
	difDst     map[int32]bool
	difQ       []int32
	newestFull int32 // the newest dst of a complete dif
	haveFull   bool
	// server → client
	pongs, serrs lossTally
	waitPong     map[float64]echoAt
	serrSeq      seqOrder
	// the windows where nothing arrived either way (a client that stalls
	// while the server sends is no network outage)
	both arrivals
	// the probes of each direction, for the loss estimate and its bursts
	c2sProbes, s2cProbes probes
}

// maxBalanceSecs bounds the balance series of one conversation (a day).
const maxBalanceSecs = 86400

func (l *lossWatch) init() {
	l.waitPang, l.waitPong = map[float64]echoAt{}, map[float64]echoAt{}
	l.acked, l.difDst = map[int32]bool{}, map[int32]bool{}
	l.lastSdak = -1
	l.pings.probe, l.pangs.probe, l.sdaks.probe = &l.c2sProbes, &l.c2sProbes, &l.c2sProbes
	l.pongs.probe, l.serrs.probe = &l.s2cProbes, &l.s2cProbes
}

// c2sArrived notes a datagram from the client, before the silence counters
// are reset: half a second of silence while the server kept sending is a
// stall (or a one-way loss the capture cannot tell from one).
func (fc *findingCollector) c2sArrived(w *convWatch, r *session.Record) {
	l := &w.lw
	if !w.lastC2S.IsZero() && sub(r.TS, w.lastC2S) >= pingStall {
		// The server kept sending through the client's silence: the
		// client stalled (or its packets alone were lost); a network
		// outage silences both.
		trail := sub(r.TS, maxTime(w.lastS2C, w.lastC2S))
		if w.s2c.packets > 0 && max(l.s2cGap, trail) < pingStall {
			l.stalled = true
		}
	}
	l.s2cGap = 0
}

// s2cArrived notes a datagram from the server: the longest the server was
// silent while the client was.
func (fc *findingCollector) s2cArrived(w *convWatch, r *session.Record) {
	if !w.lastC2S.IsZero() {
		w.lw.s2cGap = max(w.lw.s2cGap, sub(r.TS, maxTime(w.lastS2C, w.lastC2S)))
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// arrived notes every datagram of the conversation, for the windows where
// nothing arrived either way; a window counts when both sides were sending
// up to it (one side silent for a second is a silence, not a window).
func (fc *findingCollector) arrived(w *convWatch, r *session.Record) {
	from := w.lw.both.last
	live := !w.lastC2S.IsZero() && !w.lastS2C.IsZero() && sub(from, w.lastC2S) < SilentAfter && sub(from, w.lastS2C) < SilentAfter
	w.lw.both.arrive(r.N, r.TS, live)
}

// lossPacket follows the sequenced packets that prove loss.
func (fc *findingCollector) lossPacket(w *convWatch, r *session.Record) {
	l := &w.lw
	pk := &r.Packet
	switch r.Packet.Kind() {
	case decode.KindProbe:
		t0 := refFloat(pingT0, pk)
		if math.IsNaN(t0) {
			return
		}
		l.pings.saw(r.TS)
		if l.haveT0 && t0 > l.lastT0 {
			// The client pings once a second of its clock.
			gap := t0 - l.lastT0
			if missed := int(math.Round(gap)) - 1; missed > 0 && missed < 3600 {
				if l.stalled || math.Abs(gap-math.Round(gap)) > pingSlack {
					l.skippedPings += missed
				} else {
					l.pings.missBetween(missed, r.N, l.lastPing, r.TS)
				}
			}
		}
		if !l.haveT0 || t0 > l.lastT0 {
			l.lastT0, l.haveT0, l.lastPing = t0, true, r.TS
		}
		l.stalled = false
		fc.expireEchoes(w, r.TS)
		if len(l.waitPong) < 64 {
			l.waitPong[t0] = echoAt{r.N, r.TS}
		}
	case decode.KindProbeReply:
		if _, ok := l.waitPong[refFloat(pingT0, pk)]; ok {
			delete(l.waitPong, refFloat(pingT0, pk))
			l.pongs.saw(r.TS)
		}
		if t1 := refFloat(pongT1, pk); !math.IsNaN(t1) && len(l.waitPang) < 64 {
			l.waitPang[t1] = echoAt{r.N, r.TS}
		}
	case decode.KindProbeEcho:
		if _, ok := l.waitPang[refFloat(pongT1, pk)]; ok {
			delete(l.waitPang, refFloat(pongT1, pk))
			l.pangs.saw(r.TS)
		}
	case decode.KindLateInput:
		if v, ok := serrLateTotal.Int(pk); ok {
			l.serrs.saw(r.TS)
			l.serrSeq.add(seqItem{v: v, n: r.N, ts: r.TS}, l.serrGap)
		}
	case decode.KindInput:
		f, ok1 := cdatFrame.Int(pk)
		mv, ok2 := cdatMove.Int(pk)
		if ok1 && ok2 {
			l.cdats.seen++
			l.cdatSeq.add(seqItem{v: f, aux: mv, n: r.N, ts: r.TS}, l.cdatGap)
		}
	case decode.KindGameMoves:
		l.balance(r, 1)
	case decode.KindGameMovesAck:
		l.sdaks.saw(r.TS)
		l.balance(r, -1)
		l.lastSdak = len(l.bal) - 1
	case decode.KindDifAck:
		if ack, ok := gameMovesAck.Int(pk); ok && pk.Version.Sync() == decode.GameMoves {
			l.legacyStak(int32(ack), r)
		}
	}
}

// serrGap: the legacy serr carries the client's running total of late
// inputs, one serr each, so a value skipped is a serr lost.
func (l *lossWatch) serrGap(prev, cur seqItem) {
	k := int(min(cur.v-prev.v-1, 1<<20))
	l.serrs.missBetween(k, cur.n, prev.ts, cur.ts)
}

// cdatGap: a client sends a cdat only when its controls change, so two
// neighbouring cdats with the same controls had a change lost between.
func (l *lossWatch) cdatGap(prev, cur seqItem) {
	if cur.aux == prev.aux {
		l.cdats.miss(1, cur.n, cur.ts)
	}
}

// balance counts a legacy sdat (+1) or the sdak answering one (−1): the
// client answers every sdat it gets, so what stays owed for good was lost.
func (l *lossWatch) balance(r *session.Record, d int32) {
	l.owed += d
	sec := int(r.TS.Unix())
	if n := len(l.bal); n > 0 && l.bal[n-1].sec == sec {
		b := &l.bal[n-1]
		b.low, b.end = min(b.low, l.owed), l.owed
		return
	}
	if len(l.bal) >= maxBalanceSecs {
		return
	}
	l.bal = append(l.bal, balanceSec{sec: sec, low: l.owed, end: l.owed, n: r.N, ts: r.TS})
}

// sdakLoss judges the balance at the end: the sdats never answered, up to
// the client's last sdak (what came after it may be a client that left),
// are the floor the balance never went below again; each second the floor
// rises, sdaks were lost.
func (l *lossWatch) sdakLoss() {
	if l.lastSdak < 0 {
		return
	}
	bal := l.bal[:l.lastSdak+1]
	floor := make([]int32, len(bal))
	low := int32(math.MaxInt32)
	for i := len(bal) - 1; i >= 0; i-- {
		low = min(low, bal[i].low)
		floor[i] = low
	}
	prev := min(int32(0), floor[0])
	for i, f := range floor {
		if f > prev {
			// The longest run: the most lost in one second (the balance
			// cannot tell which of a second's sdaks were lost).
			// The floor of a second rises with the sdaks lost after the
			// lowest point of the second before: placed half a second
			// back, between the two.
			at := bal[i].ts
			if i > 0 {
				at = bal[i-1].ts.Add(bal[i].ts.Sub(bal[i-1].ts) / 2)
			}
			l.sdaks.probe.miss(float64(f-prev), bal[i].n, at)
			p := l.sdaks.probe
			l.sdaks.probe = nil
			l.sdaks.miss(int(f-prev), bal[i].n, bal[i].ts)
			l.sdaks.probe = p
		}
		prev = max(prev, f)
	}
}

// legacyStak: a legacy client acknowledges every dif it applies at once,
// and re-acknowledges its base when a dif it got cannot be applied. The
// first acknowledgement of a frame that comes after a newer dif arrived
// whole is such a re-acknowledgement: the one sent when the client applied
// that frame was lost.
func (l *lossWatch) legacyStak(ack int32, r *session.Record) {
	l.staks.seen++
	if ack == 0 || l.acked[ack] {
		return
	}
	if l.difDst[ack] && l.haveFull && l.newestFull > ack {
		l.staks.miss(1, r.N, r.TS)
	}
	l.acked[ack] = true
	l.ackQ = append(l.ackQ, ack)
	if len(l.ackQ) > 256 {
		delete(l.acked, l.ackQ[0])
		l.ackQ = l.ackQ[1:]
	}
}

// lossDif follows the legacy difs a client got, for legacyStak.
func (l *lossWatch) lossDif(d *Dif, complete bool) {
	if l.haveFull && d.Dst+decode.LevelRestartGap < l.newestFull {
		l.haveFull = false // the frames started again (a new level)
		clear(l.acked)
		l.ackQ = l.ackQ[:0]
	}
	if !l.difDst[d.Dst] {
		l.difDst[d.Dst] = true
		l.difQ = append(l.difQ, d.Dst)
		if len(l.difQ) > 256 {
			delete(l.difDst, l.difQ[0])
			l.difQ = l.difQ[1:]
		}
	}
	if complete && (!l.haveFull || d.Dst > l.newestFull) {
		l.newestFull, l.haveFull = d.Dst, true
	}
}

// expireEchoes takes the pings (pongs) that waited echoWait for their pong
// (pang) as lost, when the side that should have answered sent something
// since; a side that sent nothing (stalled, gone, the capture ended) is
// not proof.
func (fc *findingCollector) expireEchoes(w *convWatch, now time.Time) {
	l := &w.lw
	for t0, p := range l.waitPong {
		if now.Sub(p.ts) < echoWait {
			continue
		}
		delete(l.waitPong, t0)
		if w.lastS2C.Sub(p.ts) >= echoWait {
			l.pongs.miss(1, p.n, p.ts)
		}
	}
	for t1, p := range l.waitPang {
		if now.Sub(p.ts) < echoWait {
			continue
		}
		delete(l.waitPang, t1)
		if w.lastC2S.Sub(p.ts) >= echoWait {
			l.pangs.miss(1, p.n, p.ts)
		}
	}
}

// lossEnd settles what waits at the end of the capture.
func (fc *findingCollector) lossEnd(w *convWatch) {
	l := &w.lw
	l.serrSeq.flush(l.serrGap)
	l.cdatSeq.flush(l.cdatGap)
	fc.expireEchoes(w, w.last.Add(echoWait))
	l.sdakLoss()
}
