package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
)

// The links between the packet list and the states, as Wireshark's "go
// to linked packet": a stdf piece or a stak leads to its state, a state
// to its pieces and its ack.

// linkWindow is how many states after (or before) a packet's moment its
// state is looked for: a dif's last piece comes within a few states of its
// first, an ack within a few of its state.
const linkWindow = 256

// packetLink is the state a packet leads to.
type packetLink struct {
	line   reassemble.Chain // the packet's client
	li, at int              // the line's index (-1: no state of it is in yet) and its entry
	n      int              // the packet's number in the capture
	what   string           // what the state is to the packet
	// ready: the state is rebuilt, or will not be (its client's states
	// are all in); else at is the newest state of the line rebuilt so far.
	ready bool
}

// awaitLink is a packet whose state is shown once it is rebuilt.
type awaitLink struct {
	pos  int              // the packet's position in the index; -1: a frame's state
	n    int              // its number in the capture
	line reassemble.Chain // its client
	msg  string           // what the status line says of it
	// The frame asked for with : (pos -1).
	slsn, frame int
}

// awaitingOther reports whether the state awaited is of a client none of
// whose states is in yet, so that the line shown is another.
func (s *stateCursor) awaitingOther() bool { return s.await != nil && s.await.line != s.line() }

// link finds the state packet pos is about: a stdf piece's dif, the state
// a stak acknowledges, or for any other packet of a conversation the
// newest state the server had sent its client by then. It says why there
// is none when there is none.
func (s *stateCursor) link(c *env, pos int) (packetLink, string) {
	x := c.e.Index()
	if x == nil {
		return packetLink{}, "no packets yet"
	}
	var r session.Record
	if err := x.Record(pos, &r); err != nil {
		return packetLink{}, err.Error()
	}
	if r.Conv == nil {
		return packetLink{}, fmt.Sprintf("packet %d belongs to no conversation", r.N)
	}
	li := s.lineOf(r.Conv.ID)
	if li < 0 {
		// No state of it in the timeline yet: it may have difs still to
		// rebuild.
		for _, lp := range c.e.Progress().Lines {
			if lp.Line.Conv == r.Conv.ID && c.lineProgress(lp.Line) != "" {
				return packetLink{line: lp.Line, li: -1, n: r.N}, ""
			}
		}
		return packetLink{}, fmt.Sprintf("conversation %d has no states", r.Conv.ID)
	}
	l := s.lines[li]
	n := c.e.EntryCount(l)
	entry := func(i int) replay.Entry { return c.e.Entries(nil, l, i, i+1)[0] }
	// k: the first state whose dif ended at or after the packet.
	k := sort.Search(n, func(i int) bool { return int(entry(i).CaptureN) >= r.N })
	lk := packetLink{line: l, li: li, at: max(k-1, 0), n: r.N, what: "the state its client held then"}
	switch {
	case k < n && int(entry(k).CaptureN) == r.N:
		lk.at, lk.what = k, "the state of this dif"
	case k == 0:
		lk.what = "its client held no state yet: its first state"
	}
	frame, hasFrame := r.Packet.Frame()
	isFrame := func(i int) bool { return int64(entry(i).N) == frame }
	found, piece := false, false
	switch kind := r.Packet.Kind(); {
	case !hasFrame || r.Kind != session.Game:
	case kind == decode.KindDifPiece:
		piece = true
		if i := seek(k, 1, 0, min(n, k+linkWindow), isFrame); i >= 0 {
			e := entry(i)
			lk.at, lk.what, found = i, fmt.Sprintf("the dif %d→%d this piece is of", e.Src, e.N), true
		}
	case kind == decode.KindDifAck:
		if i := seek(k-1, -1, max(0, k-linkWindow), n, isFrame); i >= 0 {
			lk.at, lk.what, found = i, fmt.Sprintf("the state of frame %d this stak acknowledges", entry(i).N), true
		}
	}
	// Without a state after the packet (or, for a piece, within the
	// window its dif ends in) the state may still be rebuilt.
	lk.ready = found || c.lineProgress(l) == "" || k < n && (!piece || k+linkWindow <= n)
	if n == 0 && lk.ready {
		return packetLink{}, fmt.Sprintf("conversation %d has no states", r.Conv.ID)
	}
	return lk, ""
}

// toPacket puts the scrubber on the state packet pos is about (see link),
// or while that state is not rebuilt yet on the newest one rebuilt, and
// moves to it once it is (see refreshLines). It says what it found, or why
// there is none.
func (s *stateCursor) toPacket(c *env, pos int) (string, bool) {
	lk, why := s.link(c, pos)
	s.await = nil
	if why != "" {
		return why, false
	}
	if lk.li >= 0 {
		s.toLine(c, lk.li)
		s.setI(c, lk.at)
	}
	if !lk.ready {
		msg := fmt.Sprintf("packet %d: its state shows here once client %d is rebuilt to it", lk.n, lk.line.Conv)
		s.await = &awaitLink{pos: pos, n: lk.n, line: lk.line, msg: msg}
		return msg, true
	}
	return fmt.Sprintf("packet %d: %s", lk.n, lk.what), true
}

// awaited moves the scrubber to the state it awaits once it is rebuilt.
func (s *stateCursor) awaited(c *env) {
	a := s.await
	if a == nil {
		return
	}
	if a.pos < 0 {
		if s.line() != a.line {
			s.await = nil
			return
		}
		s.await = nil
		s.toFrame(c, a.slsn, a.frame) // awaits again while not rebuilt
		return
	}
	lk, why := s.link(c, a.pos)
	switch {
	case why != "":
		s.await = nil
		c.setMsg("%s", why)
	case lk.ready:
		s.toLine(c, lk.li) // forgets the await
		s.setI(c, lk.at)
		c.setMsg("packet %d: %s", lk.n, lk.what)
	case lk.li >= 0 && lk.li != s.li:
		// The client's first states are in: its newest is shown while
		// the one awaited is rebuilt.
		msg := c.msg
		s.toLine(c, lk.li)
		s.setI(c, lk.at)
		s.await, c.msg = a, msg
	case lk.li == s.li && lk.at != s.i:
		s.setI(c, lk.at) // its newest so far
	}
}

// toState shows packet pos's state in view v.
func (p *packetsModel) toState(c *env, pos int, v int) tea.Cmd {
	msg, ok := c.cursor.toPacket(c, pos)
	if !ok {
		c.setMsg("%s", msg)
		return nil
	}
	p.moved = false
	cmd := c.nav.show(v)
	c.setMsg("%s", msg)
	return cmd
}

// piecesFilter is the display filter that lists a state's pieces and its
// acks: the stdf packets of its conversation for its frame (in the modern
// era, of its level sequence), and the stak packets for its frame after its
// dif ended (at capture packet CaptureN) and, when next > 0, before the
// next level sequence's first state (at capture packet next): a stak does
// not say its level sequence.
func piecesFilter(l reassemble.Chain, e *replay.Entry, next int) string {
	acks := fmt.Sprintf("stak and num > %d", e.CaptureN)
	if next > 0 {
		acks += fmt.Sprintf(" and num < %d", next)
	}
	return fmt.Sprintf(`conv == %d and frame == %d and (stdf and (slsn == %d or era in [%s]) or %s)`, l.Conv, e.N, e.SLSN, noLevelSeq, acks)
}

// noLevelSeq lists, for a filter, the versions whose pieces carry no level
// sequence: "legacy".
var noLevelSeq = func() string {
	var names []string
	for _, v := range decode.Versions() {
		if !v.LevelSeqOn(decode.KindDifPiece) {
			names = append(names, strconv.Quote(v.String()))
		}
	}
	return strings.Join(names, ", ")
}()

// toPieces lists the shown state's pieces and acks in the packet list,
// the dif's last piece selected.
func (s *stateCursor) toPieces(c *env) tea.Cmd {
	if s.n == 0 || s.line().Conv == 0 {
		c.setMsg("no state to list the packets of")
		return nil
	}
	e := s.ent
	pos := 0
	if x := c.e.Index(); x != nil {
		pos = x.Search(int(e.CaptureN))
	}
	next := 0
	if i := s.scan(c, s.i+1, 1, func(_ int, x, _ *replay.Entry) bool { return x.SLSN != e.SLSN }); i >= 0 {
		next = int(s.entry(c, i).CaptureN)
	}
	return c.nav.listPackets(piecesFilter(s.line(), &e, next), pos)
}
