package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/pmdump/pmdump/packetfmt"
	"github.com/pmdump/pmdump/session"
)

// rowCells is one packet of the list, cell by cell, in the forms pmdump
// read prints them.
type rowCells struct {
	n, time, src, dst, conv, dir, player, name, info string
}

// cells formats a record's cells, its time with line's formatter.
func cells(line *packetfmt.Line, r *session.Record) rowCells {
	c := rowCells{
		n:      strconv.Itoa(r.N),
		time:   string(line.AppendTime(nil, r.TS)),
		src:    r.Src.String(),
		dst:    r.Dst.String(),
		dir:    r.Dir.Arrow(),
		player: string(packetfmt.AppendPlayer(nil, r.Player)),
		name:   string(packetfmt.AppendName(nil, r.Packet.Name[:])),
		info:   strings.TrimPrefix(string(packetfmt.AppendInfo(nil, r.Kind, &r.Packet)), " "),
	}
	c.conv = "-"
	if r.Conv != nil && r.Conv.ID > 0 {
		c.conv = strconv.Itoa(r.Conv.ID)
	}
	return c
}

// listColumns sizes the columns of the packet list to the rows on the
// screen, as Wireshark's list does: every column as wide as its widest
// cell (and its title), the key fields taking what is left. A list too
// narrow for both addresses and some key fields shows the conversation's
// number instead of the addresses.
type listColumns struct {
	n, time, src, dst, conv, dir, player, name int
	addrs                                      bool
}

// minInfo is the room the key fields should have before the addresses are
// shown.
const minInfo = 40

// fit widens the columns to a row's cells.
func (c *listColumns) fit(r *rowCells) {
	w := ansi.StringWidth
	c.n = max(c.n, w(r.n), 3)
	c.time = max(c.time, w(r.time), 4)
	c.src = max(c.src, w(r.src), 6)
	c.dst = max(c.dst, w(r.dst), 11)
	c.conv = max(c.conv, w(r.conv), 4)
	c.dir = max(c.dir, w(r.dir), 3)
	c.player = max(c.player, w(r.player), 6)
	c.name = max(c.name, w(r.name), 4)
}

// choose says whether the addresses fit in width columns.
func (c *listColumns) choose(width int) {
	if c.n == 0 { // no rows: the titles' widths
		c.fit(&rowCells{})
	}
	fixed := c.n + 1 + c.time + 1 + c.dir + 1 + c.player + 1 + c.name + 1
	c.addrs = fixed+c.src+3+c.dst+1+minInfo <= width
}

// cells lays out one line of cells.
func (c *listColumns) cells(n, time, src, dst, conv, dir, player, name, info string) string {
	var b []byte
	pad := func(s string, w int, right bool) {
		gap := max(w-ansi.StringWidth(s), 0)
		if right {
			b = append(b, strings.Repeat(" ", gap)...)
		}
		b = append(b, s...)
		if !right {
			b = append(b, strings.Repeat(" ", gap)...)
		}
	}
	pad(n, c.n, true)
	b = append(b, ' ')
	pad(time, c.time, false)
	b = append(b, ' ')
	if c.addrs {
		pad(src, c.src, false)
		b = append(b, " → "...)
		pad(dst, c.dst, false)
	} else {
		pad(conv, c.conv, true)
	}
	b = append(b, ' ')
	pad(dir, c.dir, false)
	b = append(b, ' ')
	pad(player, c.player, false)
	b = append(b, ' ')
	pad(name, c.name, false)
	b = append(b, ' ')
	b = append(b, info...)
	return strings.TrimRight(string(b), " ")
}

// header is the titles' line.
func (c *listColumns) header() string {
	return c.cells("No.", "Time", "Source", "Destination", "Conv", "Dir", "Player", "Name", "Key fields")
}

// line is a row's line.
func (c *listColumns) line(r *rowCells) string {
	return c.cells(r.n, r.time, r.src, r.dst, r.conv, r.dir, r.player, r.name, r.info)
}
