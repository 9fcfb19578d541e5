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
)

// packetsModel is the packet list: a window over the packet index.
//
// The list is written here rather than with bubbles' table or list: those
// hold every row as a string, and a capture has millions of packets. This
// one keeps only positions (none at all without a filter), and formats
// only the rows on the screen, from the index, at every render.
type packetsModel struct {
	rows      []int32 // the positions that match the filter; nil: every packet
	filter    *filter.Filter
	running   bool   // the filter is still running
	writeTo   string // where to write the packets shown once the filter is done
	cancel    context.CancelFunc
	gen       int
	scanned   int // packets the filter has gone through
	cur, top  int // selected row and first row shown
	atEnd     bool
	hex       bool
	moved     bool           // a packet was selected since the states last followed the list
	marks     map[string]int // mark → packet position
	history   []string
	histPos   int
	detailAt  int  // position of the detail's packet
	detailHex bool // and whether it is its hex dump
	detail    []string
	pend      string // a key waiting for a mark's letter (m, ')
	keep      int    // the packet to keep selected when a filter's matches come
	placed    bool   // the selection was placed among the matches
	first     int    // the oldest position the index keeps (a live capture's ring drops older ones)
	wrapped   bool   // the ring has dropped packets: said once
}

func (p *packetsModel) init() {
	p.marks = map[string]int{}
	p.detailAt = -1
}

func (p *packetsModel) index(c *env) *engine.PacketIndex { return c.e.Index() }

// n is the number of rows of the list.
func (p *packetsModel) n(c *env) int {
	if p.filter != nil {
		return len(p.rows)
	}
	if x := p.index(c); x != nil {
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
func (p *packetsModel) rowOf(c *env, pos int) int {
	if p.filter == nil {
		return clamp(pos-p.first, 0, max(p.n(c)-1, 0))
	}
	r := sort.Search(len(p.rows), func(i int) bool { return int(p.rows[i]) >= pos })
	return min(r, max(len(p.rows)-1, 0))
}

func (p *packetsModel) listRows(c *env) int { return c.lay.list.h - 1 }

// setCur selects a row and scrolls it into view.
func (p *packetsModel) setCur(c *env, row int) { p.setCurOf(c, row, p.n(c)) }

// toEnd selects the last row. The index grows while the engine reads, so
// the rows are counted once: the last row is the last of the same count.
func (p *packetsModel) toEnd(c *env) {
	n := p.n(c)
	p.setCurOf(c, n-1, n)
}

// setCurOf is setCur with the rows counted (n).
func (p *packetsModel) setCurOf(c *env, row, n int) {
	row = clamp(row, 0, max(n-1, 0))
	p.cur = row
	p.moved = true
	p.atEnd = n > 0 && row == n-1
	vis := max(p.listRows(c), 1)
	if p.cur < p.top {
		p.top = p.cur
	}
	if p.cur >= p.top+vis {
		p.top = p.cur - vis + 1
	}
	p.top = clamp(p.top, 0, max(n-vis, 0))
}

func (p *packetsModel) move(c *env, d int) { p.setCur(c, p.cur+d) }

func (p *packetsModel) clickRow(c *env, r int) {
	if r >= 0 && p.top+r < p.n(c) {
		p.setCur(c, p.top+r)
	}
}

// onGrow follows the end of a growing capture when the last row is
// selected (as tail -f does).
func (p *packetsModel) onGrow(c *env) tea.Cmd {
	p.dropOld(c)
	if p.atEnd {
		p.toEnd(c)
	}
	if p.filter != nil && !p.running {
		// packets indexed since the filter ran: go on from there
		if x := p.index(c); x != nil && x.Len() > p.scanned {
			return p.runFilter(c, p.filter, p.scanned)
		}
	}
	return nil
}

// dropOld follows the index's ring: rows of packets it dropped go, and the
// selection stays on its packet (or the oldest kept). The first time, it
// says so.
func (p *packetsModel) dropOld(c *env) {
	x := p.index(c)
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
		c.setMsg("the packet ring is full (--keep %s): the oldest packets are dropped as new ones come", what)
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

func (p *packetsModel) update(c *env, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if p.pend != "" {
			p.onMarkKey(c, msg.String())
			return nil
		}
		return p.onKey(c, msg)
	case tea.MouseWheelMsg:
		p.move(c, wheelStep(msg, 3))
	case tea.MouseClickMsg:
		if l := c.lay.list; l.contains(msg.X, msg.Y) && msg.Y > l.y {
			p.clickRow(c, msg.Y-l.y-1)
		}
	}
	return nil
}

func (p *packetsModel) help(k *keyMap) []group { return []group{k.packetKeys()} }

func (p *packetsModel) onKey(c *env, k tea.KeyPressMsg) tea.Cmd {
	keys := &c.keys
	page := max(p.listRows(c)-1, 1)
	switch {
	case key.Matches(k, keys.Up):
		p.move(c, -1)
	case key.Matches(k, keys.Down):
		p.move(c, 1)
	case key.Matches(k, keys.PageUp):
		p.move(c, -page)
	case key.Matches(k, keys.PageDown):
		p.move(c, page)
	case key.Matches(k, keys.Top):
		p.setCur(c, 0)
	case key.Matches(k, keys.Bottom):
		p.toEnd(c)
	case key.Matches(k, keys.Filter):
		text := ""
		if p.filter != nil {
			text = p.filter.String()
		}
		p.histPos = len(p.history)
		c.nav.openPrompt(promptFilter, "/ ", text)
	case key.Matches(k, keys.Goto):
		c.nav.openPrompt(promptPacket, "go to packet number: ", "")
	case key.Matches(k, keys.Write):
		c.nav.openPrompt(promptWrite, "write the packets shown to (pcap, or pcapng by extension; enter: "+defaultWrite+"): ", "")
	case key.Matches(k, keys.NextName):
		p.seek(c, 1, sameName)
	case key.Matches(k, keys.PrevName):
		p.seek(c, -1, sameName)
	case key.Matches(k, keys.NextConv):
		p.seek(c, 1, sameConv)
	case key.Matches(k, keys.PrevConv):
		p.seek(c, -1, sameConv)
	case key.Matches(k, keys.Mark):
		p.pend = "m"
		c.setMsg("mark: press a letter")
	case key.Matches(k, keys.Jump):
		p.pend = "'"
		c.setMsg("jump to mark: press its letter")
	case key.Matches(k, keys.Follow):
		return p.follow(c)
	case key.Matches(k, keys.ToState):
		if p.n(c) > 0 {
			return p.toState(c, p.pos(p.cur), viewTimeline)
		}
	case key.Matches(k, keys.Detail):
		p.hex = !p.hex
	}
	return nil
}

// onMarkKey is the letter after m or '.
func (p *packetsModel) onMarkKey(c *env, k string) {
	pend := p.pend
	p.pend = ""
	if len(k) != 1 || k[0] < 'a' || k[0] > 'z' {
		c.setMsg("marks are the letters a-z")
		return
	}
	if p.n(c) == 0 {
		return
	}
	if pend == "m" {
		pos := p.pos(p.cur)
		p.marks[k] = pos
		c.setMsg("mark %s: packet %d", k, p.index(c).Entry(pos).N)
		return
	}
	pos, ok := p.marks[k]
	if !ok {
		c.setMsg("no mark %s", k)
		return
	}
	r := p.rowOf(c, pos)
	if p.n(c) > 0 && p.pos(r) != pos {
		c.setMsg("mark %s (packet %d) is not shown by the filter: nearest shown", k, p.index(c).Entry(pos).N)
	} else {
		c.msg = ""
	}
	p.setCur(c, r)
}

// gotoNumber jumps to a capture frame number.
func (p *packetsModel) gotoNumber(c *env, v string) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		c.setErr(fmt.Errorf("%q is not a packet number", v))
		return
	}
	x := p.index(c)
	if x == nil || x.Len() == 0 {
		return
	}
	if p.n(c) == 0 {
		c.setMsg("no packet is shown to go to")
		return
	}
	pos := x.Search(n)
	if pos >= x.Len() {
		c.setErr(fmt.Errorf("no game packet at or after number %d (the last is %d)", n, x.Entry(x.Len()-1).N))
		return
	}
	r := p.rowOf(c, pos)
	p.setCur(c, r)
	if got := int(x.Entry(p.pos(r)).N); got != n {
		c.setMsg("packet %d is not a game packet shown: nearest is %d", n, got)
	} else {
		c.msg = ""
	}
}

func sameName(a, b *engine.IndexEntry) bool { return a.Name == b.Name }
func sameConv(a, b *engine.IndexEntry) bool { return a.Conv == b.Conv }

// seek moves to the next (dir 1) or previous (-1) row whose packet is like
// the selected one.
func (p *packetsModel) seek(c *env, dir int, like func(a, b *engine.IndexEntry) bool) {
	n := p.n(c)
	if n == 0 {
		return
	}
	x := p.index(c)
	ref := x.Entry(p.pos(p.cur))
	r := seek(p.cur+dir, dir, 0, n, func(r int) bool {
		e := x.Entry(p.pos(r))
		return like(&ref, &e)
	})
	if r < 0 {
		c.setMsg("no other such packet that way")
		return
	}
	p.setCur(c, r)
	c.msg = ""
}

// follow shows only the selected packet's conversation, or everything
// again.
func (p *packetsModel) follow(c *env) tea.Cmd {
	if p.filter != nil && strings.HasPrefix(p.filter.String(), "conv == ") {
		return p.applyFilter(c, "")
	}
	if p.n(c) == 0 {
		return nil
	}
	conv := p.index(c).Entry(p.pos(p.cur)).Conv
	if conv == 0 {
		c.setMsg("this packet belongs to no conversation")
		return nil
	}
	return p.applyFilter(c, fmt.Sprintf("conv == %d", conv))
}
