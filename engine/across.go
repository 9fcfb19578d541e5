package engine

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/pmdump/pmdump/reassemble"
)

// Game is the clients of one game that have states: the conversations
// with one server host whose states overlap in the capture (by capture
// frame number, so the same game read twice over is two games). A client
// that joined late or left early is in the game of the clients whose
// states its own overlap.
type Game struct {
	ID    int                // 1-based, in order of the game's first state
	Lines []reassemble.Chain // its clients, in order of their first state
}

func (g Game) String() string {
	cs := make([]string, len(g.Lines))
	for i, l := range g.Lines {
		cs[i] = fmt.Sprint(l.Conv)
	}
	return fmt.Sprintf("game %d (conversations %s)", g.ID, strings.Join(cs, ", "))
}

// Games groups the lines with states into games.
func (e *Engine) Games() []Game {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return nil
	}
	hosts := map[int]netip.Addr{}
	e.trackMu.Lock()
	for _, c := range e.tracker.Conversations() {
		hosts[c.ID] = c.Server.Addr()
	}
	e.trackMu.Unlock()
	type span struct {
		l           reassemble.Chain
		order       int
		host        netip.Addr
		first, last int32
	}
	var spans []span
	for i, l := range e.timeline.Lines() {
		es := e.timeline.Entries(l)
		if len(es) == 0 {
			continue
		}
		s := span{l: l, order: i, host: hosts[l.Conv], first: es[0].CaptureN, last: es[0].CaptureN}
		for _, x := range []int32{es[0].CaptureN, es[len(es)-1].CaptureN} {
			s.first, s.last = min(s.first, x), max(s.last, x)
		}
		spans = append(spans, s)
	}
	// Per host, in order of the first state: a line whose states start
	// before the game's states end joins it.
	slices.SortStableFunc(spans, func(a, b span) int {
		if c := a.host.Compare(b.host); c != 0 {
			return c
		}
		return int(a.first) - int(b.first)
	})
	var groups [][]span
	var end int32
	for i, s := range spans {
		if i == 0 || s.host != spans[i-1].host || s.first > end {
			groups = append(groups, nil)
			end = s.last
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], s)
		end = max(end, s.last)
	}
	for _, g := range groups {
		slices.SortFunc(g, func(a, b span) int { return a.order - b.order })
	}
	slices.SortFunc(groups, func(a, b []span) int { return a[0].order - b[0].order })
	games := make([]Game, len(groups))
	for i, g := range groups {
		games[i].ID = i + 1
		for _, s := range g {
			games[i].Lines = append(games[i].Lines, s.l)
		}
	}
	return games
}

// GameChoiceError is a request for every client at a frame when the
// capture holds several games and none was picked.
type GameChoiceError struct{ Games []Game }

func (e *GameChoiceError) Error() string {
	gs := make([]string, len(e.Games))
	for i, g := range e.Games {
		gs[i] = g.String()
	}
	return fmt.Sprintf("the capture holds %d games: %s", len(e.Games), strings.Join(gs, "; "))
}

// Across is what every client of one game held at one frame, as
// Engine.AcrossClients finds it.
type Across struct {
	Game Game
	// Picks are the clients' states, the reference client's first; a
	// client that holds no state at the frame is in Missing instead.
	Picks   []PickedState
	Missing []error
	// Pending is set while the rebuild behind the fast pass has not taken
	// every client past the frame: a client not rebuilt to it yet is in
	// Missing (a NotRebuiltError), the reference's pick may change, and a
	// client none of whose states is in yet may join the game.
	Pending bool
}

// NotRebuiltError is a client whose states the rebuild behind the fast
// pass has not rebuilt to a frame yet.
type NotRebuiltError struct {
	Line        reassemble.Chain
	SLSN, Frame int
}

func (e *NotRebuiltError) Error() string {
	return fmt.Sprintf("%s: not rebuilt to frame %d of level sequence %d yet", e.Line, e.Frame, e.SLSN)
}

// AcrossClients picks the state every client of one game held at frame n
// of level sequence slsn (-1: the one the reference client's states span):
// the reference client is the one sel picks (the game's first client when
// sel selects any, which the capture must then hold one game for), and the
// game is its game.
//
// One rule for every front end: each client's state is the newest one at
// or before the frame that it acknowledged (as Engine.Pick without sent), so
// acknowledgement lag never shows as desync; with sent, each client's
// newest state the server sent at or before the frame. Never a sent state
// against acknowledged ones.
func (e *Engine) AcrossClients(sel Selector, n, slsn int, sent bool) (Across, error) {
	var out Across
	games := e.Games()
	if len(games) == 0 {
		return out, &NotFoundError{sel}
	}
	var ref reassemble.Chain
	if sel.Any() {
		if len(games) > 1 {
			return out, &GameChoiceError{games}
		}
		out.Game = games[0]
	} else {
		l, err := e.LineOf(sel)
		if err != nil {
			return out, err
		}
		ref = l
		for _, g := range games {
			if slices.Contains(g.Lines, l) {
				out.Game = g
			}
		}
	}
	lines := out.Game.Lines
	if sel.Any() {
		// The first client that holds a state at the frame is the reference.
		for _, l := range lines {
			if _, err := e.Pick(l, n, slsn, sent); err == nil {
				ref = l
				break
			}
		}
		if !ref.Client.IsValid() {
			ref = lines[0]
		}
	}
	p, err := e.Pick(ref, n, slsn, sent)
	if err != nil {
		if slsn >= 0 && !e.Settled(ref, slsn, int32(n), !sent) {
			return out, &NotRebuiltError{Line: ref, SLSN: slsn, Frame: n}
		}
		return out, err
	}
	out.Picks = append(out.Picks, p)
	out.Pending = p.Pending
	// While the rebuild runs, a client none of whose states is in yet may
	// turn out to be of this game.
	if e.Rebuilding() && e.linesToCome() {
		out.Pending = true
	}
	for _, l := range lines {
		if l == ref {
			continue
		}
		q, err := e.Pick(l, n, p.SLSN, sent)
		if (err != nil || q.Pending) && !e.Settled(l, p.SLSN, int32(n), !sent) {
			out.Pending = true
			out.Missing = append(out.Missing, &NotRebuiltError{Line: l, SLSN: p.SLSN, Frame: n})
			continue
		}
		if err != nil {
			out.Missing = append(out.Missing, fmt.Errorf("%s: %w", l, err))
			continue
		}
		out.Picks = append(out.Picks, q)
	}
	return out, nil
}

// linesToCome reports whether a line of the timeline has no state in yet.
func (e *Engine) linesToCome() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return false
	}
	for _, l := range e.timeline.Lines() {
		if len(e.timeline.Entries(l)) == 0 {
			return true
		}
	}
	return false
}
