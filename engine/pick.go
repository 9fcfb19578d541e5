package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"

	"github.com/pmdump/pmdump/internal/timefmt"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// Selector picks conversations: by number, client endpoint or player
// number. Zero values (Conv 0, an invalid Client, Player -1) select any.
type Selector struct {
	Conv   int
	Client netip.AddrPort
	Player int
}

// Any reports whether the selector selects every conversation.
func (s Selector) Any() bool { return s.Conv == 0 && !s.Client.IsValid() && s.Player < 0 }

// Match reports whether a state's line and player are selected.
func (s Selector) Match(l reassemble.Chain, player int) bool {
	return (s.Conv == 0 || l.Conv == s.Conv) && (!s.Client.IsValid() || l.Client == s.Client) && (s.Player < 0 || player == s.Player)
}

func (s Selector) String() string {
	var parts []string
	if s.Conv != 0 {
		parts = append(parts, fmt.Sprintf("conversation %d", s.Conv))
	}
	if s.Client.IsValid() {
		parts = append(parts, "client "+s.Client.String())
	}
	if s.Player >= 0 {
		parts = append(parts, fmt.Sprintf("player %d", s.Player))
	}
	if len(parts) == 0 {
		return "any client"
	}
	return strings.Join(parts, ", ")
}

// AmbiguousError is a selector that matches several conversations.
type AmbiguousError struct {
	Sel        Selector
	Candidates []reassemble.Chain
}

func (e *AmbiguousError) Error() string {
	var cs []string
	for _, l := range e.Candidates {
		cs = append(cs, fmt.Sprintf("%d (%s)", l.Conv, l.Client))
	}
	return fmt.Sprintf("%s matches %d conversations: %s", e.Sel, len(e.Candidates), strings.Join(cs, ", "))
}

// NotFoundError is a selector that matches no conversation with states.
type NotFoundError struct{ Sel Selector }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no states of %s in the capture", e.Sel) }

// LineOf returns the one line with states that the selector picks: an
// *AmbiguousError lists the candidates when it picks several, a
// *NotFoundError says when it picks none.
func (e *Engine) LineOf(sel Selector) (reassemble.Chain, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return reassemble.Chain{}, errNoTimeline
	}
	var found []reassemble.Chain
	for _, l := range e.timeline.Lines() {
		es := e.timeline.Entries(l)
		player := -1
		if len(es) > 0 {
			player = int(es[len(es)-1].Player)
		}
		if sel.Match(l, player) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return reassemble.Chain{}, &NotFoundError{sel}
	case 1:
		return found[0], nil
	}
	return reassemble.Chain{}, &AmbiguousError{sel, found}
}

// PickSettle is how far past a frame (10 s of game frames) a level sequence
// must have moved before nothing later in the capture changes which state
// Engine.Pick finds at that frame: the acknowledgements that decide it
// arrive well within it.
const PickSettle = 10 * GameFPS

// PastPick reports whether state s lies beyond what a pick of frame n in
// level sequence slsn can need: it is of a later level sequence, or more
// than PickSettle frames past n in the same one. Rebuilding the picked
// conversation's states can stop at the first such state.
func PastPick(s *replay.State, slsn, n int) bool {
	return s.SLSN > slsn || s.SLSN == slsn && int(s.Dst) > n+PickSettle
}

// PickedState is the state a client held at a frame, as Engine.Pick finds it.
type PickedState struct {
	Line  reassemble.Chain
	SLSN  int
	Frame int // the frame asked for
	Index int // the entry in the line's timeline
	Entry replay.Entry
	Sent  bool // any state the server sent counts, not only acknowledged ones
	// Newer is the entry of the newest state the server sent at or before
	// the frame when it is newer than the acknowledged one picked (its stak
	// was lost, or the client never applied it); -1 otherwise.
	Newer      int
	NewerEntry replay.Entry
	// Past is set when the frame is past the last state of the level
	// sequence: the state is the level's last.
	Past bool
	// Pending is set while the rebuild behind the fast pass has not taken
	// the line past the frame (see Engine.Settled): a newer state may
	// still come for it.
	Pending bool
}

// SLSNChoiceError is a frame that exists in several level sequences.
type SLSNChoiceError struct {
	Frame int
	SLSNs []int
}

func (e *SLSNChoiceError) Error() string {
	s := make([]string, len(e.SLSNs))
	for i, k := range e.SLSNs {
		s[i] = fmt.Sprint(k)
	}
	return fmt.Sprintf("frame %d exists in level sequences %s", e.Frame, strings.Join(s, ", "))
}

// Pick finds the state line l held at frame n of level sequence slsn (-1:
// the only one whose states span n): the newest state at or before n that
// the client acknowledged, or with sent any the server sent.
func (e *Engine) Pick(l reassemble.Chain, n, slsn int, sent bool) (PickedState, error) {
	p := PickedState{Line: l, SLSN: slsn, Frame: n, Sent: sent, Newer: -1}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timeline == nil {
		return p, errNoTimeline
	}
	tl := e.timeline
	if p.SLSN < 0 {
		ks := tl.SLSNs(l, int32(n))
		switch len(ks) {
		case 0:
			return p, fmt.Errorf("frame %d: no state of %s rebuilt at or around it", n, l)
		case 1:
			p.SLSN = ks[0]
		default:
			return p, &SLSNChoiceError{n, ks}
		}
	}
	p.Index = tl.Find(l, p.SLSN, int32(n), !sent)
	if p.Index < 0 {
		what := "acknowledged"
		if sent {
			what = "rebuilt"
		}
		return p, fmt.Errorf("no state of %s %s at or before frame %d of level sequence %d", l, what, n, p.SLSN)
	}
	es := tl.Entries(l)
	p.Entry = es[p.Index]
	if !sent {
		if i := tl.Find(l, p.SLSN, int32(n), false); i >= 0 && es[i].Frame.N > p.Entry.Frame.N {
			p.Newer, p.NewerEntry = i, es[i]
		}
	}
	last := int32(-1)
	for i := range es {
		if es[i].Status == replay.OK && es[i].SLSN == p.SLSN && es[i].Frame.N > last {
			last = es[i].Frame.N
		}
	}
	p.Past = int32(n) > last
	p.Pending = !e.settled(l, p.SLSN, int32(n), !sent)
	return p, nil
}

// Settled reports whether line l's states at and before frame n of level
// sequence slsn are all in the timeline, and with acked their
// acknowledgements: always once the rebuild is over (and without a
// rebuild behind the fast pass); while it runs, once the line has a state
// past the frame (acknowledged, with acked). A front end says of what is
// not settled that it may still change ("not acked" may be "no ack in
// yet").
func (e *Engine) Settled(l reassemble.Chain, slsn int, n int32, acked bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settled(l, slsn, n, acked)
}

// settled is Settled under the engine's lock.
func (e *Engine) settled(l reassemble.Chain, slsn int, n int32, acked bool) bool {
	if e.bh == nil || e.timeline == nil {
		return true
	}
	select {
	case <-e.bh.done:
		return true
	default:
	}
	// The line's states come in capture order, and their acks too (those
	// of a line rebuilt first are held until their turn): from the newest
	// back to the frame.
	es := e.timeline.Entries(l)
	for i := len(es) - 1; i >= 0; i-- {
		x := &es[i]
		if x.SLSN < slsn || x.SLSN == slsn && x.Frame.N <= n {
			break
		}
		if !acked || x.Acked() {
			return true
		}
	}
	return false
}

// Describe says which state a pick is, in one line (Summary), and on the
// following lines what a user should know about it (NewerNote, PastNote).
func (p PickedState) Describe(state []byte) string {
	s := p.Summary(state)
	if n := p.NewerNote(); n != "" {
		s += "\nnote: " + n
	}
	if n := p.PastNote(); n != "" {
		s += "\nnote: " + n
	}
	return s
}

// Summary says which state a pick is, in one line, given the state (its
// size and sha256).
func (p PickedState) Summary(state []byte) string {
	e := p.Entry
	acked := "never acknowledged"
	if e.Acked() {
		acked = "acknowledged " + string(timefmt.AppendTime(nil, e.AckTime(), 6))
	}
	sum := sha256.Sum256(state)
	return fmt.Sprintf("%s slsn %d frame %d: the state of frame %d (dif %d → %d, capture frame %d, %s), %d bytes, sha256 %s",
		p.Line, p.SLSN, p.Frame, e.Frame.N, e.Src, e.Frame.N, e.CaptureN, acked, len(state), hex.EncodeToString(sum[:]))
}

// NewerNote says, when the server sent a newer state the client never
// acknowledged, which one ("" otherwise): picking the states sent (Pick's
// sent) gives it.
func (p PickedState) NewerNote() string {
	if p.Newer < 0 {
		return ""
	}
	return fmt.Sprintf("the server sent a newer state, of frame %d (capture frame %d), that the client never acknowledged (its stak was lost, or it did not apply it)", p.NewerEntry.Frame.N, p.NewerEntry.CaptureN)
}

// PastNote says, when the frame is past the level sequence's last state,
// so ("" otherwise).
func (p PickedState) PastNote() string {
	if !p.Past {
		return ""
	}
	return fmt.Sprintf("frame %d is past the last state of level sequence %d: this is the level's last state", p.Frame, p.SLSN)
}
