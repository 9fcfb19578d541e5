package engine

import (
	"time"

	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// state takes every rebuilt state: an acknowledged state is compared with
// the other clients' acknowledged states of the same frame.
func (fc *findingCollector) state(s *replay.State) {
	active, haveActive := unwrapFindings(s)
	if len(fc.pendLevels) > 0 {
		fc.levelNamed(s.Conv, s.SLSN, false)
	}
	w := fc.conv(s.Conv)
	if w == nil || s.Status != replay.OK {
		return
	}
	if haveActive {
		fc.playersLeft(w, s, active)
	}
	k := replay.Frame{SLSN: s.SLSN, N: s.Dst}
	w.sums.add(k, stateSum{s.Hash, s.N})
	if a, ok := w.acked.get(k); ok {
		fc.compare(w, k, s.Hash, a)
	}
}

func (fc *findingCollector) ackedState(w *convWatch, k replay.Frame, n int, ts time.Time) {
	if !w.acked.add(k, ackAt{n, stampOf(ts)}) {
		return
	}
	if s, ok := w.sums.get(k); ok {
		fc.compare(w, k, s.sum, ackAt{n, stampOf(ts)})
	}
}

// ackAt is where and when a state was acknowledged.
type ackAt struct {
	n  int
	ts stamp
}

// sameGame is how close in time two clients' acknowledgements of one frame
// are when they are of one game (a server's frame comes once).
const sameGame = 10 * time.Second

// compare checks an acknowledged state against the game's first
// acknowledged state of that frame.
func (fc *findingCollector) compare(w *convWatch, k replay.Frame, sum statedif.Hash, a ackAt) {
	n := a.n
	g := gameFrame{w.server.Addr(), k.SLSN, k.N}
	o, ok := fc.games[g]
	ts := a.ts.time()
	if d := ts.Sub(o.ts); ok && (d > sameGame || d < -sameGame) {
		ok = false // another game of the same server: start afresh
	}
	if !ok {
		fc.games[g] = ackedState{w.conv, sum, n, ts}
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
	f := fc.finding(w, KindDesync, SeverityError, v, "%s and conversation %d acknowledged different states of level sequence %d frame %d",
		w.who(), o.conv, k.SLSN, k.N)
	f.Figures["other_conv"], f.Figures["frame"] = float64(o.conv), float64(k.N)
	f.Evidence.States = []StateRef{{SLSN: k.SLSN, Frame: k.N}}
	fc.found(f)
}
