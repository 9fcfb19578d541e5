package engine

import (
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// A server of the rewind versions drops a client it got no stak from for
// the version's drop rule (decode.DropRule: 200 frames, checked after
// frame 300 of a level; a game move "player 2 inactive, reason 71" for 4
// frames later, logged as "Server dropped player:N"). Game moves are not
// sent in these versions, but their effect is in the state: the player's
// record is cleared (active 0, control method 0), and the server sends
// that client no dif any more. A quit (a cdat with the menu bit) clears the
// record the same way, 2 frames on.

// dropApply is how many frames after its decision a drop takes effect.
const dropApply = 4

// dropGap is the silence of a client's staks after which a server of
// version v drops it: the drop rule's frames, and the frames before the
// drop is applied.
func dropGap(v decode.Version) time.Duration {
	return time.Duration(v.Drop().Frames+dropApply) * time.Second / GameFPS
}

// findingsExtra carries the players active in a state beside whatever
// the caller's Inspect put in State.Extra.
type findingsExtra struct {
	active uint8 // bit p: player p is active
	ok     bool
	extra  any
}

// inspect runs on the rebuilding goroutines: it reads which players are
// active in the state (modern layouts with a players view).
func (fc *findingCollector) inspect(s *replay.State, st []byte) {
	sch := schema.For(len(st), fc.user)
	v := sch.View
	if v == nil || v.Players == nil || v.Players.Active == "" {
		return
	}
	fx := findingsExtra{extra: s.Extra}
	for p := 0; p < 8; p++ {
		a, ok := sch.Get(st, v.Players.Region, p, v.Players.Active)
		if !ok {
			return
		}
		if a != 0 {
			fx.active |= 1 << p
		}
	}
	fx.ok = true
	s.Extra = fx
}

// playersLeft takes the players active in a rebuilt state of conversation
// w: a player active in its state before and not in this one, of the same
// level sequence, left the game between the two.
func (fc *findingCollector) playersLeft(w *convWatch, s *replay.State, active uint8) {
	if w.era.Sync() != decode.Rewind {
		return // a game-moves server says it in sdat
	}
	if w.haveMask && w.activeSLSN == s.SLSN {
		for p := 1; p < 8; p++ {
			if w.activeMask&(1<<p) != 0 && active&(1<<p) == 0 {
				fc.playerLeft(w, p, s)
			}
		}
	}
	w.activeMask, w.activeSLSN, w.haveMask = active, s.SLSN, true
}

// playerLeft judges a player the states show leaving: dropped when the
// server had no stak from its client for dropGap, a quit when the client
// pressed the menu key just before.
func (fc *findingCollector) playerLeft(w *convWatch, p int, s *replay.State) {
	o := fc.playerConv(w.server.Addr(), p)
	if o == nil || o.reported["quit"] || o.reported["dropped"] {
		return
	}
	v := evidence{}
	v.add(s.N, s.TS, 0)
	// When the server last heard from the client, as its drop rule
	// counts it: its last stak, or, for a client that never sent one,
	// its join (the rule gives a joining client its grace).
	heard, heardN := o.lastStak, o.lastStakN
	if heard.IsZero() && len(o.joinAsks) > 0 {
		grace := time.Duration(o.era.Drop().Grace) * time.Second / GameFPS
		heard, heardN = o.joinAsksAt[0].Add(grace), o.joinAsks[0]
	}
	var f *Finding
	switch {
	case !heard.IsZero() && s.TS.Sub(heard) >= dropGap(o.era):
		v.first, v.start = heardN, heard
		if o.lastStak.IsZero() {
			v.start = o.joinAsksAt[0]
			f = fc.finding(o, KindDropped, SeverityError, v, "the server dropped player %d (%s) at level sequence %d frame %d: no stak from it since it asked to join %.1f s before (the server drops a client after %d frames without one, and gives a new one %d more)",
				p, o.client, s.SLSN, s.Dst, s.TS.Sub(o.joinAsksAt[0]).Seconds(), o.era.Drop().Frames, o.era.Drop().Grace)
			f.Figures["no_stak_s"] = s.TS.Sub(o.joinAsksAt[0]).Seconds()
		} else {
			f = fc.finding(o, KindDropped, SeverityError, v, "the server dropped player %d (%s) at level sequence %d frame %d: no stak from it for %.1f s (the server drops a client after %d frames without one)",
				p, o.client, s.SLSN, s.Dst, s.TS.Sub(o.lastStak).Seconds(), o.era.Drop().Frames)
			f.Figures["no_stak_s"] = s.TS.Sub(o.lastStak).Seconds()
		}
		o.reported["dropped"] = true
	case !o.lastMenu.IsZero() && s.TS.Sub(o.lastMenu) < 2*time.Second:
		f = fc.finding(o, KindLeave, SeverityInfo, v, "player %d (%s) quit at level sequence %d frame %d (menu key, then inactive in the states)", p, o.client, s.SLSN, s.Dst)
		o.reported["quit"] = true
	case o.lastStak.IsZero():
		f = fc.finding(o, KindLeave, SeverityInfo, v, "player %d (%s) became inactive at level sequence %d frame %d (no stak from it seen; no menu key seen)",
			p, o.client, s.SLSN, s.Dst)
		o.reported["quit"] = true
	default:
		f = fc.finding(o, KindLeave, SeverityInfo, v, "player %d (%s) became inactive at level sequence %d frame %d (its staks came until %.1f s before; no menu key seen)",
			p, o.client, s.SLSN, s.Dst, s.TS.Sub(o.lastStak).Seconds())
		o.reported["quit"] = true
	}
	f.Player = p
	f.Figures["frame"], f.Figures["slsn"] = float64(s.Dst), float64(s.SLSN)
	f.Evidence.States = []StateRef{{SLSN: s.SLSN, Frame: s.Dst}}
	fc.found(f)
}

// droppedByDifs finds, without states, a client a rewind server dropped:
// its staks stopped, and dropGap later so did the server's difs to it
// (later still when the level was younger than the rule's first frame: the
// server checks only after it, so the last dif is of that frame), while the
// capture went on.
func (fc *findingCollector) droppedByDifs(w *convWatch, end time.Time) {
	if w.era.Sync() != decode.Rewind || w.reported["dropped"] || w.reported["quit"] || w.lastStak.IsZero() || w.lastDifTS.IsZero() {
		return
	}
	gap := w.lastDifTS.Sub(w.lastStak)
	drop := dropGap(w.era)
	waited := gap > drop && w.lastDifDst >= 0 && w.lastDifDst <= int32(w.era.Drop().After+dropApply+2) // the level's first frames
	if gap < drop-time.Second/GameFPS || gap > drop+time.Second/4 && !waited || end.Sub(w.lastDifTS) < SilentAfter {
		return
	}
	v := evidence{first: w.lastStakN, worst: w.lastN0, last: w.lastN0, start: w.lastStak, end: w.lastDifTS}
	f := fc.finding(w, KindDropped, SeverityError, v, "the server dropped %s: its last stak, then %.1f s later the server's last dif to it (the server drops a client after %d frames without a stak); the capture goes on %.1f s",
		w.who(), gap.Seconds(), w.era.Drop().Frames, end.Sub(w.lastDifTS).Seconds())
	f.Figures["no_stak_s"] = gap.Seconds()
	w.reported["dropped"] = true
	fc.found(f)
}

// unwrapFindings takes the findings' sample out of State.Extra and puts
// back what the caller's Inspect set.
func unwrapFindings(s *replay.State) (uint8, bool) {
	fx, is := s.Extra.(findingsExtra)
	if !is {
		return 0, false
	}
	s.Extra = fx.extra
	return fx.active, fx.ok
}
