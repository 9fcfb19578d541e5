package tui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/filter"
	"github.com/pmdump/pmdump/packetfmt"
	"github.com/pmdump/pmdump/session"
)

// packetsModel is the packet list: a window over the packet index.
//
// The list is written here rather than with bubbles' table or list: those
// hold every row as a string, and a capture has millions of packets. This
// one keeps only positions (none at all without a filter), and formats
// only the rows on the screen, from the index, at every render.
type packetsModel struct {
	rows     []int32 // the positions that match the filter; nil: every packet
	filter   *filter.Filter
	running  bool // the filter is still running
	cancel   context.CancelFunc
	gen      int
	scanned  int // packets the filter has gone through
	cur, top int // selected row and first row shown
	atEnd    bool
	hex      bool
	moved    bool           // a packet was selected since the states last followed the list
	marks    map[string]int // mark → packet position
	history  []string
	histPos  int
	line     packetfmt.Line
	rec      session.Record
	detailAt int // position of the detail's packet
	detail   []string
	keep     int  // the packet to keep selected when a filter's matches come
	placed   bool // the selection was placed among the matches
	first    int  // the oldest position the index keeps (a live capture's ring drops older ones)
	wrapped  bool // the ring has dropped packets: said once
}

func (p *packetsModel) init() {
	p.marks = map[string]int{}
	p.detailAt = -1
}

func (p *packetsModel) index(m *Model) *engine.PacketIndex { return m.e.Index() }

// n is the number of rows of the list.
func (p *packetsModel) n(m *Model) int {
	if p.filter != nil {
		return len(p.rows)
	}
	if x := p.index(m); x != nil {
		return x.Len() - p.first
	}
	return 0
}

// pos is the packet position of a row.
func (p *packetsModel) pos(row int) int {
	if p.filter != nil {
		return int(p.rows[row])
	}
	return row + p.first
}

// rowOf is the row showing packet position pos, or the first after it.
func (p *packetsModel) rowOf(m *Model, pos int) int {
	if p.filter == nil {
		return clamp(pos-p.first, 0, max(p.n(m)-1, 0))
	}
	r := sort.Search(len(p.rows), func(i int) bool { return int(p.rows[i]) >= pos })
	return min(r, max(len(p.rows)-1, 0))
}

func (p *packetsModel) listRows(m *Model) int { return m.layout().list.h - 1 }

// setCur selects a row and scrolls it into view.
func (p *packetsModel) setCur(m *Model, row int) {
	n := p.n(m)
	row = clamp(row, 0, max(n-1, 0))
	p.cur = row
	p.moved = true
	p.atEnd = n > 0 && row == n-1
	vis := max(p.listRows(m), 1)
	if p.cur < p.top {
		p.top = p.cur
	}
	if p.cur >= p.top+vis {
		p.top = p.cur - vis + 1
	}
	p.top = clamp(p.top, 0, max(n-vis, 0))
}

func (p *packetsModel) move(m *Model, d int) { p.setCur(m, p.cur+d) }

func (p *packetsModel) clickRow(m *Model, r int) {
	if r >= 0 && p.top+r < p.n(m) {
		p.setCur(m, p.top+r)
	}
}

// onGrow follows the end of a growing capture when the last row is
// selected (as tail -f does).
func (p *packetsModel) onGrow(m *Model) tea.Cmd {
	p.dropOld(m)
	if p.atEnd {
		p.setCur(m, p.n(m)-1)
	}
	if p.filter != nil && !p.running {
		// packets indexed since the filter ran: go on from there
		if x := p.index(m); x != nil && x.Len() > p.scanned {
			return p.runFilter(m, p.filter, p.scanned)
		}
	}
	return nil
}

// dropOld follows the index's ring: rows of packets it dropped go, and the
// selection stays on its packet (or the oldest kept). The first time, it
// says so.
func (p *packetsModel) dropOld(m *Model) {
	x := p.index(m)
	if x == nil {
		return
	}
	first := x.First()
	if first == p.first {
		return
	}
	if !p.wrapped {
		p.wrapped = true
		lim := x.Limit()
		what := fmt.Sprintf("%d packets", lim.Packets)
		if lim.Bytes > 0 && (lim.Packets == 0 || lim.Bytes < int64(lim.Packets)*1000) {
			what = fmt.Sprintf("%d MiB", lim.Bytes>>20)
		}
		m.setMsg("the packet ring is full (--keep %s): the oldest packets are dropped as new ones come", what)
	}
	d := first - p.first
	p.first = first
	if p.filter == nil {
		p.cur, p.top = max(p.cur-d, 0), max(p.top-d, 0)
		return
	}
	k := 0
	for k < len(p.rows) && int(p.rows[k]) < first {
		k++
	}
	p.rows = p.rows[k:]
	p.cur, p.top = max(p.cur-k, 0), max(p.top-k, 0)
}

func (p *packetsModel) onKey(m *Model, k tea.KeyPressMsg) tea.Cmd {
	keys := m.keys
	page := max(p.listRows(m)-1, 1)
	switch {
	case key.Matches(k, keys.Up):
		p.move(m, -1)
	case key.Matches(k, keys.Down):
		p.move(m, 1)
	case key.Matches(k, keys.PageUp):
		p.move(m, -page)
	case key.Matches(k, keys.PageDown):
		p.move(m, page)
	case key.Matches(k, keys.Top):
		p.setCur(m, 0)
	case key.Matches(k, keys.Bottom):
		p.setCur(m, p.n(m)-1)
	case key.Matches(k, keys.Filter):
		text := ""
		if p.filter != nil {
			text = p.filter.String()
		}
		p.histPos = len(p.history)
		return m.openPrompt(promptFilter, "/ ", text)
	case key.Matches(k, keys.Goto):
		return m.openPrompt(promptPacket, "go to packet number: ", "")
	case key.Matches(k, keys.Write):
		return m.openPrompt(promptWrite, "write the packets shown to (pcap, or pcapng by extension): ", "packets.pcap")
	case key.Matches(k, keys.NextName):
		p.seek(m, 1, sameName)
	case key.Matches(k, keys.PrevName):
		p.seek(m, -1, sameName)
	case key.Matches(k, keys.NextConv):
		p.seek(m, 1, sameConv)
	case key.Matches(k, keys.PrevConv):
		p.seek(m, -1, sameConv)
	case key.Matches(k, keys.Mark):
		m.pend = "m"
		m.setMsg("mark: press a letter")
	case key.Matches(k, keys.Jump):
		m.pend = "'"
		m.setMsg("jump to mark: press its letter")
	case key.Matches(k, keys.Follow):
		return p.follow(m)
	case key.Matches(k, keys.ToState):
		if p.n(m) > 0 {
			return m.toState(p.pos(p.cur), viewTimeline)
		}
	case key.Matches(k, keys.Detail):
		p.hex = !p.hex
		p.detailAt = -1
	}
	return nil
}

// onMarkKey is the letter after m or '.
func (p *packetsModel) onMarkKey(m *Model, pend, k string) tea.Cmd {
	if len(k) != 1 || k[0] < 'a' || k[0] > 'z' {
		m.setMsg("marks are the letters a-z")
		return nil
	}
	if p.n(m) == 0 {
		return nil
	}
	if pend == "m" {
		pos := p.pos(p.cur)
		p.marks[k] = pos
		m.setMsg("mark %s: packet %d", k, p.index(m).Entry(pos).N)
		return nil
	}
	pos, ok := p.marks[k]
	if !ok {
		m.setMsg("no mark %s", k)
		return nil
	}
	r := p.rowOf(m, pos)
	if p.n(m) > 0 && p.pos(r) != pos {
		m.setMsg("mark %s (packet %d) is not shown by the filter: nearest shown", k, p.index(m).Entry(pos).N)
	} else {
		m.msg = ""
	}
	p.setCur(m, r)
	return nil
}

// gotoNumber jumps to a capture frame number.
func (p *packetsModel) gotoNumber(m *Model, v string) tea.Cmd {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		m.setErr(fmt.Errorf("%q is not a packet number", v))
		return nil
	}
	x := p.index(m)
	if x == nil || x.Len() == 0 {
		return nil
	}
	if p.n(m) == 0 {
		m.setMsg("no packet is shown to go to")
		return nil
	}
	pos := x.Search(n)
	if pos >= x.Len() {
		m.setErr(fmt.Errorf("no game packet at or after number %d (the last is %d)", n, x.Entry(x.Len()-1).N))
		return nil
	}
	r := p.rowOf(m, pos)
	p.setCur(m, r)
	if got := int(x.Entry(p.pos(r)).N); got != n {
		m.setMsg("packet %d is not a game packet shown: nearest is %d", n, got)
	} else {
		m.msg = ""
	}
	return nil
}

func sameName(a, b *engine.IndexEntry) bool { return a.Name == b.Name }
func sameConv(a, b *engine.IndexEntry) bool { return a.Conv == b.Conv }

// seek moves to the next (dir 1) or previous (-1) row whose packet is like
// the selected one.
func (p *packetsModel) seek(m *Model, dir int, like func(a, b *engine.IndexEntry) bool) {
	n := p.n(m)
	if n == 0 {
		return
	}
	x := p.index(m)
	ref := x.Entry(p.pos(p.cur))
	r := seek(p.cur+dir, dir, 0, n, func(r int) bool {
		e := x.Entry(p.pos(r))
		return like(&ref, &e)
	})
	if r < 0 {
		m.setMsg("no other such packet that way")
		return
	}
	p.setCur(m, r)
	m.msg = ""
}

// follow shows only the selected packet's conversation, or everything
// again.
func (p *packetsModel) follow(m *Model) tea.Cmd {
	if p.filter != nil && strings.HasPrefix(p.filter.String(), "conv == ") {
		return p.applyFilter(m, "")
	}
	if p.n(m) == 0 {
		return nil
	}
	c := p.index(m).Entry(p.pos(p.cur)).Conv
	if c == 0 {
		m.setMsg("this packet belongs to no conversation")
		return nil
	}
	return p.applyFilter(m, fmt.Sprintf("conv == %d", c))
}
