package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
)

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
	if slsn < 0 && w.haveLevel && len(w.pend) > 0 && dst+decode.LevelRestartGap < w.pend[len(w.pend)-1].dst {
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
		if slsn < 0 {
			w.legacyLevel++ // as replay.LevelInference counts them
		}
	}
	w.lastSLSN, w.haveLevel = slsn, true
	w.seqNow = slsn
	if slsn < 0 {
		w.seqNow = w.legacyLevel
	}
	w.s2c.frames = addFrame(w.s2c.frames, w.seqNow, dst)
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

// addFrame adds a game frame to frame ranges, one per level sequence (at
// most 4: a silence spans few level changes).
func addFrame(rs []FrameRange, slsn int, f int32) []FrameRange {
	if n := len(rs); n > 0 && rs[n-1].SLSN == slsn {
		rs[n-1].From, rs[n-1].To = min(rs[n-1].From, f), max(rs[n-1].To, f)
		return rs
	}
	if len(rs) >= 4 {
		return rs
	}
	return append(rs, FrameRange{SLSN: slsn, From: f, To: f})
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
			// A dif of k pieces is lost whole with chance p^k: nearly
			// always a dif of one piece.
			w.lw.s2cProbes.miss(float64(p.lost), p.n, p.ts)
			w.longest = max(w.longest, p.lost)
			w.loss.add(p.n, p.ts, float64(p.lost))
			if len(w.lostFrames) < 16 {
				w.lostFrames = append(w.lostFrames, FrameRange{SLSN: w.seqNow, From: p.from, To: p.to})
			}
		}
		w.suspects = w.suspects[:0]
	case step > usual && step%usual == 0 && step/usual <= 1000:
		w.suspects = append(w.suspects, suspectGap{usual: usual, lost: int(step/usual) - 1, n: d.n, ts: d.ts, from: d.dst - step + usual, to: d.dst - usual})
	default:
		w.suspects = w.suspects[:0]
	}
	w.steps[w.nsteps%len(w.steps)] = step
	w.nsteps++
}

// suspectGap is a dst gap that may be difs lost whole.
type suspectGap struct {
	usual    int32
	from, to int32 // the dsts lost
	lost     int
	n        int
	ts       time.Time
}

// usual is the most common of the recent dst steps (the smallest of equals).
func (w *convWatch) usual() int32 {
	st := w.steps[:min(w.nsteps, len(w.steps))]
	if len(st) > 0 && allEqual(st) {
		return st[0] // the steady pace: no need to count
	}
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

func allEqual(st []int32) bool {
	for _, b := range st[1:] {
		if b != st[0] {
			return false
		}
	}
	return true
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

// dif takes every dif as it ends.
func (fc *findingCollector) dif(d *Dif, baseReset bool) {
	w := fc.conv(d.Conv)
	if w == nil {
		return
	}
	fc.nextSecond(w, d.Last)
	w.secDifs++
	w.sentDif(replay.Frame{SLSN: d.SLSN, N: d.Dst})
	if baseReset {
		w.resets++
		w.resetBytes += d.Bytes
		w.storm.ev.add(d.LastN, d.Last, 0)
	}
	w.lw.s2cProbes.saw(float64(d.Pieces), d.Last)
	if d.Status == reassemble.Incomplete {
		w.lw.s2cProbes.miss(float64(len(d.Missing)), d.LastN, d.Last)
		w.incompl++
		w.lostPcs += len(d.Missing)
		w.loss.add(d.LastN, d.Last, float64(len(d.Missing))/float64(max(d.Count, 1)))
	}
	w.lastN0, w.lastDifComplete, w.lastDifTS, w.lastMissing = d.LastN, d.Status == reassemble.Complete, d.Last, len(d.Missing)
	w.lastDifDst = d.Dst
	if w.era.Sync() == decode.GameMoves {
		w.lw.lossDif(d, d.Status == reassemble.Complete)
	}
}

// ack takes every stak with its latency, when it has one.
func (fc *findingCollector) ack(a Ack, ms float64, measured bool) {
	w := fc.conv(a.Line.Conv)
	if w == nil {
		return
	}
	fc.nextSecond(w, a.TS)
	w.secAcks++
	w.acked1(replay.Frame{SLSN: a.SLSN, N: a.Frame})
	fc.ackedState(w, replay.Frame{SLSN: a.SLSN, N: a.Frame}, a.N, a.TS)
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
	if w.chaseN > 0 && w.chaseSum/float64(w.chaseN) < SlowFPS || w.secRewinds > 0 {
		m := float64(GameFPS)
		if w.chaseN > 0 {
			m = w.chaseSum / float64(w.chaseN)
		}
		r := &w.slow
		if r.secs == 0 {
			r.from, r.min, r.max = w.sec, m, m
		}
		r.to, r.secs = w.sec, r.secs+1
		r.min, r.max = math.Min(r.min, m), math.Max(r.max, m)
		r.difs += w.secDifs
		r.acks += w.secAcks
		r.applied += w.secApplied
		r.rewinds += w.secRewinds
		r.back = max(r.back, w.secBack)
		r.toZero += w.secToZero
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
	w.secApplied, w.secRewinds, w.secBack, w.secToZero = 0, 0, 0, 0
}

func (fc *findingCollector) at(sec int) time.Time { return fc.t0.Add(time.Duration(sec) * time.Second) }

func (fc *findingCollector) endSlow(w *convWatch) {
	r := w.slow
	w.slow = run{}
	if r.secs == 0 {
		return
	}
	sev := SeverityInfo
	v := r.ev
	v.start, v.end = fc.at(r.from), fc.at(r.to+1)
	applied := 100.0
	if r.difs > 0 {
		applied = 100 * float64(min(r.applied, r.difs)) / float64(r.difs)
	}
	fps := fmt.Sprintf("%.0f–%.0f", r.min, r.max)
	if fps == fmt.Sprintf("%.0f–%.0f", r.min, r.min) {
		fps = fmt.Sprintf("%.0f", r.min)
	}
	var f *Finding
	if r.min >= SlowFPS {
		// Not slow: its acknowledgements went back.
		f = fc.finding(w, KindSlowClient, sev, v, "%s's acknowledged frame went back %s in %d s (%s) and it applied %.0f %% of the %d difs it was sent",
			w.who(), times(r.rewinds), r.secs, r.rewound(), applied, r.difs)
	} else {
		f = fc.finding(w, KindSlowClient, sev, v, "%s ran at %s fps against the server's %d for %d s and applied %.0f %% of the %d difs it was sent",
			w.who(), fps, GameFPS, r.secs, applied, r.difs)
		if r.difs > r.applied {
			f.Summary += fmt.Sprintf(" (%d replaced by newer ones before it applied them)", r.difs-min(r.applied, r.difs))
		}
		if r.rewinds > 0 {
			f.Summary += fmt.Sprintf("; its acknowledged frame went back %s (%s)", times(r.rewinds), r.rewound())
		}
	}
	f.Figures["min_fps"], f.Figures["max_fps"], f.Figures["seconds"] = r.min, r.max, float64(r.secs)
	if r.min < SlowFPS {
		f.Figures["slow_seconds"] = float64(r.secs)
	}
	f.Figures["difs"], f.Figures["acks"], f.Figures["applied"], f.Figures["applied_pct"] = float64(r.difs), float64(r.acks), float64(r.applied), applied
	f.Figures["rewinds"], f.Figures["max_rewind_frames"], f.Figures["rewinds_to_zero"] = float64(r.rewinds), float64(r.back), float64(r.toZero)
	fc.found(f)
}

// rewound says how far a run's acknowledgements went back.
func (r *run) rewound() string {
	s := fmt.Sprintf("up to %d frames", r.back)
	if r.toZero > 0 {
		s += fmt.Sprintf(", %s to frame 0: it held no state any more", times(r.toZero))
	}
	return s
}

// times says how many times: once, twice, n times.
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// sentDif records a dif sent to the client, until it is acknowledged.
func (w *convWatch) sentDif(k replay.Frame) {
	w.sent.add(k, false)
}

// acked1 takes an acknowledgement: the first of a dif sent is a dif
// applied; one of an older frame than the last, in the same level
// sequence, is a rewind.
func (w *convWatch) acked1(k replay.Frame) {
	if !w.sent.has(k) {
		// Around a level change the engine's level sequence of an
		// acknowledgement may be one off: the dif sent says.
		for _, d := range []int{-1, 1} {
			if w.sent.has(replay.Frame{SLSN: k.SLSN + d, N: k.N}) {
				k.SLSN += d
				break
			}
		}
	}
	if done, ok := w.sent.get(k); ok && !done {
		w.sent.set(k, true)
		w.secApplied++
	}
	if w.haveAck && k.SLSN == w.ackedLast.SLSN && k.N < w.ackedLast.N {
		w.secRewinds++
		w.rewinds++
		back := int(w.ackedLast.N - k.N)
		w.secBack = max(w.secBack, back)
		w.rewindBack = max(w.rewindBack, back)
		if k.N == 0 {
			w.secToZero++
		}
	}
	w.ackedLast, w.haveAck = k, true
}

func (fc *findingCollector) endStorm(w *convWatch) {
	r := w.storm
	w.storm = run{}
	if r.secs == 0 {
		return
	}
	sev := SeverityInfo
	v := r.ev
	v.start, v.end = fc.at(r.from), fc.at(r.to+1)
	f := fc.finding(w, KindResetStorm, sev, v, "%s got %d base resets in %d s (up to %.0f a second), %d bytes of keyframes",
		w.who(), r.count, r.secs, r.max, r.bytes)
	f.Figures["base_resets"], f.Figures["seconds"], f.Figures["bytes"], f.Figures["max_per_s"] = float64(r.count), float64(r.secs), float64(r.bytes), r.max
	fc.found(f)
}
