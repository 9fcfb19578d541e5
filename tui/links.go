package tui

import (
	"fmt"
	"sort"

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

// toPacket puts the scrubber on the state packet pos is about: a stdf
// piece's dif, the state a stak acknowledges, or for any other packet of a
// conversation the newest state the server had sent its client by then. It
// says what it found, or why there is none.
func (s *stateCursor) toPacket(c *env, pos int) (string, bool) {
	x := c.e.Index()
	if x == nil {
		return "", false
	}
	var r session.Record
	if err := x.Record(pos, &r); err != nil {
		return err.Error(), false
	}
	if r.Conv == nil {
		return fmt.Sprintf("packet %d belongs to no conversation", r.N), false
	}
	li := s.lineOf(r.Conv.ID)
	if li < 0 {
		return fmt.Sprintf("conversation %d has no states", r.Conv.ID), false
	}
	l := s.lines[li]
	n := c.e.EntryCount(l)
	entry := func(i int) replay.Entry { return c.e.Entries(nil, l, i, i+1)[0] }
	// k: the first state whose dif ended at or after the packet.
	k := sort.Search(n, func(i int) bool { return int(entry(i).CaptureN) >= r.N })
	at, what := max(k-1, 0), "the state its client held then"
	if k < n && int(entry(k).CaptureN) == r.N {
		at, what = k, "the state of this dif"
	}
	frame, hasFrame := r.Packet.Frame()
	isFrame := func(i int) bool { return int64(entry(i).N) == frame }
	switch name := r.Packet.NameString(); {
	case !hasFrame || r.Kind != session.Game:
	case name == "stdf":
		if i := seek(k, 1, 0, min(n, k+linkWindow), isFrame); i >= 0 {
			e := entry(i)
			at, what = i, fmt.Sprintf("the dif %d→%d this piece is of", e.Src, e.N)
		}
	case name == "stak":
		if i := seek(k-1, -1, max(0, k-linkWindow), n, isFrame); i >= 0 {
			at, what = i, fmt.Sprintf("the state of frame %d this stak acknowledges", entry(i).N)
		}
	}
	if n == 0 {
		return fmt.Sprintf("conversation %d has no states yet", r.Conv.ID), false
	}
	s.toLine(c, li)
	s.setI(c, at)
	return fmt.Sprintf("packet %d: %s", r.N, what), true
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
// acks: the stdf and stak packets of its conversation for its frame (in
// the modern era, of its level sequence).
func piecesFilter(l reassemble.Chain, e *replay.Entry) string {
	return fmt.Sprintf(`conv == %d and frame == %d and (stak or stdf and (slsn == %d or era == "%s"))`, l.Conv, e.N, e.SLSN, decode.Legacy)
}

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
	return c.nav.listPackets(piecesFilter(s.line(), &e), pos)
}
