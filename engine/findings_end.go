package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// finish reports what can be judged only over the whole capture: loss
// rates, latency, late inputs, corrections, silences and runs that last
// to the end, and the capture's own problems. The lock is held.
//
// statesIn says whether every state is rebuilt already. When it is not
// (the rebuild runs behind the fast pass), what the states still decide
// waits for statesDone: the late inputs counted in the states, the levels
// the states name, and the players that left or were dropped, which the
// states may show first. Either way the findings are the same in the end.
func (fc *findingCollector) finish(e *Engine, statesIn bool) {
	end := e.cap.last
	fc.waiting = !statesIn
	if statesIn && fc.levelOf != nil {
		fc.levelNamed(0, 0, true)
	}
	for _, id := range fc.order {
		w := fc.convs[id]
		for _, d := range w.pend {
			fc.settle(w, d)
		}
		w.pend = nil
		fc.closeSecond(w, w.sec+1)
		fc.endSlow(w)
		fc.endStorm(w)
		if !w.lastC2S.IsZero() && w.s2c.packets > 0 && w.last.Sub(w.lastC2S) >= SilentAfter {
			fc.silence(w, KindSilentClient, w.lastC2S, w.last, w.lastC2SN, w.lastN, w.s2c, true)
		} else if !w.lastS2C.IsZero() && w.c2s.packets > 0 && w.last.Sub(w.lastS2C) >= SilentAfter {
			fc.silence(w, KindSilentServer, w.lastS2C, w.last, w.lastS2CN, w.lastN, w.c2s, true)
		} else if statesIn {
			fc.leftAtEnd(w, end)
		} else {
			w.leaveWaits = true
		}
		if w.prev != nil {
			fc.sameEndpoint(w)
		}
		if !w.lastDifComplete && w.lastN0 > 0 && end.Sub(w.lastDifTS) < time.Second && w.incompl > 0 {
			v := evidence{first: w.lastN0, worst: w.lastN0, last: w.lastN0, start: w.lastDifTS, end: end}
			fc.found(fc.finding(w, KindCaptureEnd, SeverityInfo, v, "the capture ends in the middle of a dif to %s (its %d missing pieces are not lost)", w.who(), w.lastMissing))
			w.incompl--
			w.lostPcs -= w.lastMissing
		}
		if statesIn {
			fc.droppedByDifs(w, end)
		}
		fc.noVersionFinding(w)
		fc.joinFailed(w, end)
		fc.fileFindings(w, end)
		fc.idleFinding(w)
		fc.lossFinding(w)
		fc.latencyFinding(w, e)
		if statesIn {
			fc.lateFinding(w, e)
		}
		fc.correctionFinding(w)
		fc.skipFinding(w)
	}
	c := e.cap.counters
	v := evidence{start: e.cap.first, end: e.cap.last}
	if c.Truncated > 0 {
		f := fc.finding(nil, KindSnapLength, SeverityWarning, v, "%d frames were cut by the capture's snap length: their packets cannot be decoded whole (capture with -s 0)", c.Truncated)
		f.Figures["frames"] = float64(c.Truncated)
		fc.found(f)
	}
	if c.KernelDropped > 0 {
		f := fc.finding(nil, KindCaptureDrops, SeverityWarning, v, "the capture dropped %d frames (kernel or capture tool): what they held is missing from every figure", c.KernelDropped)
		f.Figures["dropped"], f.Figures["received"] = float64(c.KernelDropped), float64(c.KernelReceived)
		fc.found(f)
	}
}

// statesDone reports, once every state is rebuilt behind the fast pass,
// what finish left to the states, in the order finish reports it. The
// lock is held.
func (fc *findingCollector) statesDone(e *Engine) {
	if !fc.waiting {
		return
	}
	fc.waiting = false
	end := e.cap.last
	if fc.levelOf != nil {
		fc.levelNamed(0, 0, true)
	}
	for _, id := range fc.order {
		w := fc.convs[id]
		if w.leaveWaits {
			w.leaveWaits = false
			fc.leftAtEnd(w, end)
		}
		fc.droppedByDifs(w, end)
		fc.lateFinding(w, e)
	}
}

// leftAtEnd reports a client that sent and got nothing in the capture's
// last DropAfter, unless the states showed it quit.
func (fc *findingCollector) leftAtEnd(w *convWatch, end time.Time) {
	d := end.Sub(w.last)
	if d < DropAfter || w.reported["quit"] {
		return
	}
	v := evidence{first: w.lastN, worst: w.lastN, last: w.lastN, start: w.last, end: w.last}
	f := fc.finding(w, KindLeave, SeverityInfo, v, "%s sent and got nothing in the last %.1f s of the capture: it left", w.who(), d.Seconds())
	f.Figures["seconds_before_end"] = d.Seconds()
	fc.found(f)
}

// lossFinding reports the loss of each direction: an estimate from the
// probes, and what the protocol proves lost. Server → client: difs lost
// whole (dst gaps) and stdf pieces missing, legacy serr (their running
// total skips), modern pongs (a ping that got none). Client → server:
// modern pings (their client time skips a second while the client kept
// sending), pangs (a pong that got none), legacy sdaks (an sdat never
// answered), legacy staks (a frame first acknowledged as a
// re-acknowledgement) and cdats (two in a row with the same controls).
// The windows of concentrated loss are loss-burst findings of their own.
func (fc *findingCollector) lossFinding(w *convWatch) {
	fc.lossEnd(w)
	l := &w.lw
	// The difs that came, whole or not (an incomplete dif whose dst was
	// seen before counts once).
	came := max(w.seenDifs, w.incompl)
	difs := &lossTally{seen: came - w.incompl, lost: w.lostWhole + w.incompl, longest: max(w.longest, min(w.incompl, 1)), ev: w.loss}
	extra := ""
	if difs.lost > 0 {
		extra = fmt.Sprintf("%d difs of %d (%d lost whole, %d incomplete", difs.lost, difs.seen+difs.lost, w.lostWhole, w.incompl)
		if w.lostPcs > 0 {
			extra += fmt.Sprintf(" with %s missing", plural(w.lostPcs, "piece"))
		}
		extra += ")"
	}
	fc.directionLoss(w, false, difs, []kindLoss{
		{"serr", " (late-input reports, by their running total)", &l.serrs},
		{"pongs", " (pings the server got that were not answered)", &l.pongs},
	}, extra, &l.s2cProbes)
	fc.directionLoss(w, true, nil, []kindLoss{
		{"pings", " (the client pings every second)", &l.pings},
		{"pangs", " (pongs not echoed)", &l.pangs},
		{"sdaks", " (sdats never answered)", &l.sdaks},
		{"staks", " (frames first acknowledged again)", &l.staks},
		{"cdats", " (inputs: the same controls twice in a row)", &l.cdats},
	}, "", &l.c2sProbes)
	fc.lossBursts(w, false, &l.s2cProbes)
	fc.lossBursts(w, true, &l.c2sProbes)
}

// lossBursts reports the windows of concentrated loss of one direction.
func (fc *findingCollector) lossBursts(w *convWatch, c2s bool, p *probes) {
	for _, b := range p.bursts() {
		v := evidence{first: b.firstN, worst: b.firstN, last: b.lastN, start: b.start, end: b.end}
		n := b.seen + b.lost
		rate := b.lost / n
		e := estimate(b.lost, n)
		f := fc.finding(w, KindLossBurst, SeverityInfo, v, "%s: %.0f %% lost for %.1f s (%.0f–%.0f %%, %.0f of %.0f probes), against %.1f %% the rest of the game",
			direction(w, c2s), 100*rate, b.end.Sub(b.start).Seconds(), 100*e.Low, 100*e.High, b.lost, n, 100*b.base)
		setDir(f, c2s)
		f.Figures["rate"], f.Figures["rate_low"], f.Figures["rate_high"] = rate, e.Low, e.High
		f.Figures["probes"], f.Figures["probes_lost"], f.Figures["base_rate"] = n, b.lost, b.base
		f.Figures["from_s"], f.Figures["to_s"], f.Figures["seconds"] = b.start.Sub(fc.t0).Seconds(), b.end.Sub(fc.t0).Seconds(), b.end.Sub(b.start).Seconds()
		f.Figures["p_value"] = b.probability
		fc.found(f)
	}
}

// direction names a direction of a conversation: "server → player 1 (…)".
func direction(w *convWatch, c2s bool) string {
	if c2s {
		return fmt.Sprintf("%s → server", w.who())
	}
	return fmt.Sprintf("server → %s", w.who())
}

func setDir(f *Finding, c2s bool) {
	if c2s {
		f.Figures["dir_c2s"] = 1
	} else {
		f.Figures["dir_s2c"] = 1
	}
}

// usualStep is the frames between two difs to this client, 1 when unknown.
func (w *convWatch) usualStep() int {
	if w.nsteps == 0 {
		return 1
	}
	return int(max(slices.Min(w.steps[:min(w.nsteps, len(w.steps))]), 1))
}

func median(v []float64) (med, p95 float64) {
	if len(v) == 0 {
		return 0, 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[len(s)/2], s[len(s)*95/100]
}

// latencyFinding sums up the ack latency (and the modern ping round trip)
// of one client: baseline, spread, spikes.
func (fc *findingCollector) latencyFinding(w *convWatch, e *Engine) {
	if len(w.lat) == 0 {
		return
	}
	med, p95 := median(w.lat)
	sev := SeverityInfo
	v := evidence{first: w.firstAck, worst: w.worstN, last: w.lastAck, start: w.first, end: w.last}
	rtt := ""
	f := fc.finding(w, KindLatency, sev, v, "")
	if len(w.rtt) > 0 {
		rm, rp := median(w.rtt)
		rtt = fmt.Sprintf("; ping round trip %.1f ms (p95 %.1f)", rm, rp)
		f.Figures["rtt_median_ms"], f.Figures["rtt_p95_ms"] = rm, rp
	}
	f.Summary = fmt.Sprintf("%s acknowledged difs in %.1f ms (median), p95 %.1f ms, max %.1f ms, jitter %.1f ms, %d spikes over 3× the baseline%s",
		w.who(), med, p95, w.worstMs, p95-med, w.spikes, rtt)
	f.Figures["median_ms"], f.Figures["p95_ms"], f.Figures["max_ms"], f.Figures["jitter_ms"] = med, p95, w.worstMs, p95-med
	f.Figures["spikes"], f.Figures["acks"] = float64(w.spikes), float64(len(w.lat))
	fc.found(f)
}

// lateFinding reports inputs that reached the server late: legacy serr
// (one per late cdat), modern late_cdats counted in the rebuilt states.
func (fc *findingCollector) lateFinding(w *convWatch, e *Engine) {
	late, src, fromSerr := max(w.late, int(w.lateTotal)), "serr", true
	if late == 0 && e.health != nil {
		fromSerr = false
		for _, l := range e.health.order {
			if x := e.health.lines[l]; x.conv == w.conv {
				for _, s := range x.secs {
					late += s.LateInputs
				}
			}
		}
		src = "late_cdats in the states"
	}
	if late == 0 || w.inputs == 0 {
		return
	}
	rate := float64(late) / float64(w.inputs)
	v := w.lateEv
	if v.first == 0 {
		v = evidence{start: w.first, end: w.last}
	}
	f := fc.finding(w, KindLateInputs, SeverityInfo, v, "%d of %s's %d inputs reached the server after their frame (%.0f %%, from %s)", late, w.who(), w.inputs, 100*rate, src)
	share := rate
	if w.lateKnown > 0 && fromSerr {
		// The serr lost said how late their inputs were to nobody: the
		// share of the serr that arrived stands for them.
		share = float64(w.lateBig) / float64(w.lateKnown) * float64(late) / float64(w.inputs)
		f.Summary += fmt.Sprintf("; %d of the %d serr that arrived say %d frames (%d ms) or more late (%s of the inputs)", w.lateBig, w.lateKnown, LateFrames, LateFrames*1000/GameFPS, pct(share))
		f.Figures["late_big"] = float64(w.lateBig)
	} else {
		f.Summary += "; how late, the protocol does not say"
	}
	f.Figures["late"], f.Figures["inputs"], f.Figures["rate"], f.Figures["late_share"] = float64(late), float64(w.inputs), rate, share
	fc.found(f)
}

// correctionFinding reports how often the server's states overwrote the
// client's own simulation (legacy stak corr; modern local correction over
// JumpPx).
func (fc *findingCollector) correctionFinding(w *convWatch) {
	if w.corrections == 0 || w.staks == 0 {
		return
	}
	rate := float64(w.corrections) / float64(w.staks)
	f := fc.finding(w, KindCorrections, SeverityInfo, w.corrEv, "%d of %s's %d acknowledgements report a correction (%.0f %%)", w.corrections, w.who(), w.staks, 100*rate)
	if w.maxCorr > 0 {
		mins := max(w.last.Sub(w.first).Minutes(), 1.0/60)
		f.Summary += fmt.Sprintf(", largest %.1f px; %d of %d px or more (%.1f a minute)", w.maxCorr, w.bigCorr, CorrectionPx, float64(w.bigCorr)/mins)
		f.Figures["max_px"], f.Figures["big"], f.Figures["big_per_min"] = w.maxCorr, float64(w.bigCorr), float64(w.bigCorr)/mins
	} else {
		f.Summary += " (the legacy stak says that the client corrected its state, not how far)"
	}
	f.Figures["corrections"], f.Figures["acks"], f.Figures["rate"] = float64(w.corrections), float64(w.staks), rate
	fc.found(f)
}

// joinFailed reports a client that asked to join and got no join reply in
// the capture, while the game went on: its reply was lost (in the versions
// without a handshake the server registered the address at the first
// request, so a request retried is not answered again). The difs the
// server sent it say the server took it as a player.
func (fc *findingCollector) joinFailed(w *convWatch, end time.Time) {
	if w.joinSeen || len(w.joinAsks) == 0 || end.Sub(w.joinAsksAt[0]) < saveAnswerWait {
		return
	}
	n := len(w.joinAsks)
	v := evidence{first: w.joinAsks[0], worst: w.joinAsks[n-1], last: w.joinAsks[n-1], start: w.joinAsksAt[0], end: w.joinAsksAt[n-1]}
	asked := "once"
	if n > 1 {
		asked = fmt.Sprintf("%d times (retried after %.1f s)", n, w.joinAsksAt[1].Sub(w.joinAsksAt[0]).Seconds())
	}
	took := "the server sent it nothing: it did not take the client"
	if w.s2c.difs > 0 || w.seenDifs > 0 {
		took = fmt.Sprintf("the server took it as a player all the same and sent it %d difs", w.seenDifs)
	}
	f := fc.finding(w, KindJoinFailed, SeverityError, v, "%s asked to join %s and no join reply reached it: its reply was lost, and it never played; %s", w.who(), asked, took)
	f.Figures["requests"], f.Figures["difs"] = float64(n), float64(w.seenDifs)
	fc.found(f)
}

// saveResult is a server's answer to a file request (srrf).
type saveResult struct {
	n      int
	ts     time.Time
	result int64
}

// saveAnswerWait is how long a server's answer to a file request takes at
// most: it saves its game moves, then answers at once.
const saveAnswerWait = 2 * time.Second

// fileFindings reports the files the server sent a client (the game-moves
// file a client asks for with crfl) and, in the versions whose server
// answers every request (srrf), each answer, or a request without one.
func (fc *findingCollector) fileFindings(w *convWatch, end time.Time) {
	if w.era.Has(decode.KindSaveResult) {
		next := 0
		for i, n := range w.fileAsked {
			for next < len(w.saveResults) && w.saveResults[next].n < n {
				next++
			}
			v := evidence{first: n, worst: n, last: n, start: w.fileAskedAt[i], end: w.fileAskedAt[i]}
			if next < len(w.saveResults) && (i+1 == len(w.fileAsked) || w.saveResults[next].n < w.fileAsked[i+1]) {
				a := w.saveResults[next]
				next++
				v.last, v.end = a.n, a.ts
				what := "the file follows"
				if ev, ok := decode.SaveResults.Lookup(a.result); ok && ev.Name != "saved" {
					what = "no file follows: " + ev.Doc
				}
				name := fmt.Sprint(a.result)
				if ev, ok := decode.SaveResults.Lookup(a.result); ok {
					name = fmt.Sprintf("%d (%s)", a.result, ev.Name)
				}
				f := fc.finding(w, KindFileTransfer, SeverityInfo, v, "%s asked for the game-moves file (crfl); the server answered srrf %s %.0f ms later: %s",
					w.who(), name, float64(a.ts.Sub(w.fileAskedAt[i]))/float64(time.Millisecond), what)
				f.Figures["result"] = float64(a.result)
				fc.found(f)
				continue
			}
			if end.Sub(w.fileAskedAt[i]) < saveAnswerWait {
				continue // the capture ended before an answer was due
			}
			f := fc.finding(w, KindFileTransfer, SeverityWarning, v, "%s asked for the game-moves file (crfl) and the server did not answer (no srrf): the request or its answer was lost", w.who())
			fc.found(f)
		}
	}
	for _, id := range w.fileOrder {
		t := w.files[id]
		v := evidence{first: t.firstN, worst: t.firstN, last: t.lastN, start: t.firstTS, end: t.lastTS}
		for _, n := range w.fileAsked {
			if n < t.firstN {
				v.first = n // the request that this transfer answered
			}
		}
		acked, ack := "never acknowledged", 0.0
		if t.ackN > 0 {
			ack = 1
			acked = fmt.Sprintf("acknowledged (sfak) at frame %d", t.ackN)
			v.last, v.end = max(v.last, t.ackN), t.ackTS
		}
		resent := ""
		if t.count > 0 && t.pieces > t.count {
			resent = fmt.Sprintf(", %d pieces sent again", t.pieces-t.count)
		}
		f := fc.finding(w, KindFileTransfer, SeverityInfo, v, "the server sent %s a %d-byte file (transfer %d, %d pieces, %d compressed bytes%s), %s",
			w.who(), t.size, t.id, t.count, t.bytes, resent, acked)
		f.Figures["file_size"], f.Figures["pieces"], f.Figures["count"], f.Figures["bytes"] = float64(t.size), float64(t.pieces), float64(t.count), float64(t.bytes)
		f.Figures["acked"] = ack
		fc.found(f)
	}
}

// idleFinding reports a client that played without touching its controls:
// a playing client changes them several times a second.
func (fc *findingCollector) idleFinding(w *convWatch) {
	d := w.last.Sub(w.first)
	if d < 2*IdleEvery || float64(w.inputs) >= d.Seconds()/IdleEvery.Seconds() {
		return
	}
	v := evidence{first: w.firstN, worst: w.firstN, last: w.lastN, start: w.first, end: w.last}
	f := fc.finding(w, KindIdleClient, SeverityInfo, v, "%s sent %d inputs in %.0f s: an idle player", w.who(), w.inputs, d.Seconds())
	f.Figures["inputs"], f.Figures["seconds"] = float64(w.inputs), d.Seconds()
	fc.found(f)
}

// plural is n and a noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// kindLoss is one line of a loss finding: a packet kind and its tally.
type kindLoss struct {
	name, what string
	t          *lossTally
}

// directionLoss reports the loss of one direction of one conversation: the
// estimate from its probes, with its interval and what it rests on; then
// what is proven lost, by kind, the longest run and the windows where
// nothing arrived.
func (fc *findingCollector) directionLoss(w *convWatch, c2s bool, difs *lossTally, kinds []kindLoss, extra string, pr *probes) {
	sent, lost, longest := 0, 0, 0
	var parts []string
	var v evidence
	merge := func(e evidence) {
		if e.first == 0 {
			return
		}
		if v.first == 0 || e.first < v.first {
			v.first, v.start = e.first, e.start
		}
		if e.last > v.last {
			v.last, v.end = e.last, e.end
		}
		if e.worstV > v.worstV {
			v.worst, v.worstV = e.worst, e.worstV
		}
	}
	var probeKinds []string
	if difs != nil && difs.seen+difs.lost > 0 {
		sent += difs.seen + difs.lost
		lost += difs.lost
		longest = max(longest, difs.longest)
		merge(difs.ev)
		probeKinds = append(probeKinds, "dif pieces")
	}
	for _, k := range kinds {
		if k.t.seen+k.t.lost == 0 {
			continue
		}
		if k.t.probe != nil {
			probeKinds = append(probeKinds, strings.TrimSuffix(k.name, "s"))
		}
		sent += k.t.seen + k.t.lost
		lost += k.t.lost
		longest = max(longest, k.t.longest)
		if k.t.lost > 0 {
			name := k.name
			if k.t.lost == 1 {
				name = strings.TrimSuffix(name, "s") // 1 cdat, 1 serr
			}
			parts = append(parts, fmt.Sprintf("%d %s of %d%s", k.t.lost, name, k.t.seen+k.t.lost, k.what))
			merge(k.t.ev)
		}
	}
	l := &w.lw
	arr := &l.both
	outage := 0.0
	if span := w.last.Sub(w.first); span > 0 {
		outage = float64(arr.short) / float64(span)
	}
	if lost == 0 && (!c2s || l.skippedPings == 0) && outage < OutageWarn {
		return
	}
	proven := 0.0
	if sent > 0 {
		proven = float64(lost) / float64(sent)
	}
	seen, plost := pr.totals()
	est := estimate(plost, seen+plost)
	who := direction(w, c2s)
	var summary string
	if est.Probes > 0 {
		summary = fmt.Sprintf("%s: ≈ %s lost (%s–%s, from %.0f of %.0f probes: %s); %s of %d proven lost",
			who, pct(est.Rate), pct(est.Low), pct(est.High), est.Lost, est.Probes, strings.Join(probeKinds, ", "), plural(lost, "datagram"), sent)
	} else {
		summary = fmt.Sprintf("%s: loss rate unknown (no packet of this direction shows its loss in full); %s of %d proven lost (a lower bound)",
			who, plural(lost, "datagram"), sent)
	}
	if extra != "" {
		parts = append([]string{extra}, parts...)
	}
	if len(parts) > 0 {
		summary += ": " + strings.Join(parts, ", ")
	}
	if lost > 0 {
		summary += fmt.Sprintf("; longest run %d in a row", longest)
	}
	if arr.windows > 0 {
		summary += fmt.Sprintf("; %s with nothing arriving either way (longest %.2f s, %.1f s in all)", plural(arr.windows, "window"), arr.longest.Seconds(), arr.total.Seconds())
	}
	if c2s && l.skippedPings > 0 {
		summary += fmt.Sprintf("; %s missing while the client sent nothing and the server kept sending (a stall, or loss the capture cannot prove)", plural(l.skippedPings, "ping"))
	}
	if v.first == 0 {
		v = evidence{first: w.firstN, worst: w.firstN, last: w.lastN, start: w.first, end: w.last}
	}
	f := fc.finding(w, KindLoss, SeverityInfo, v, "%s", summary)
	setDir(f, c2s)
	f.Figures["sent"], f.Figures["lost"], f.Figures["proven_rate"], f.Figures["longest_run"] = float64(sent), float64(lost), proven, float64(longest)
	if est.Probes > 0 {
		f.Figures["rate"], f.Figures["rate_low"], f.Figures["rate_high"] = est.Rate, est.Low, est.High
		f.Figures["probes"], f.Figures["probes_lost"] = est.Probes, est.Lost
	}
	f.Figures["outage_share"] = outage
	for _, k := range kinds {
		key := strings.ReplaceAll(k.name, " ", "_")
		f.Figures[key], f.Figures[key+"_lost"] = float64(k.t.seen+k.t.lost), float64(k.t.lost)
	}
	f.Figures["windows"], f.Figures["longest_window_s"], f.Figures["window_s"] = float64(arr.windows), arr.longest.Seconds(), arr.total.Seconds()
	if c2s {
		f.Figures["pings_skipped"] = float64(l.skippedPings)
	}
	if difs != nil {
		total := difs.seen + difs.lost
		f.Figures["difs"], f.Figures["difs_lost"], f.Figures["lost_whole"], f.Figures["incomplete"] = float64(total), float64(w.lostWhole+w.incompl), float64(w.lostWhole), float64(w.incompl)
		f.Figures["lost_pieces"], f.Figures["longest_dif_run"] = float64(w.lostPcs), float64(w.longest)
		f.Figures["longest_lost_frames"] = float64(w.longest * w.usualStep())
		if total > 0 {
			f.Figures["dif_rate"] = float64(w.lostWhole+w.incompl) / float64(total)
		}
		f.Evidence.Frames = w.lostFrames
	}
	fc.found(f)
}

// pct prints a share as a percentage, to a tenth under 10 %.
func pct(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.1f %%", 100*x)
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}
