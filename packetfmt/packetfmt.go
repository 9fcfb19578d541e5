// Package packetfmt formats game packets as text: the one-line form of
// pmdump read (number, time, endpoints, direction, player, name and key
// fields), the header of a packet's field tree and a hex dump. The command
// line and the terminal UI print packets through it, so they read alike.
package packetfmt

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/decimal"
	"github.com/pmdump/pmdump/internal/timefmt"
	"github.com/pmdump/pmdump/session"
)

// Line formats packets in the one-line form. The zero value shows times of
// day; it keeps the text of recent endpoints, and the time formatter
// remembers the previous packet (-t d), so one Line formats one stream of
// packets (it is not safe for concurrent use).
type Line struct {
	// Time is a time format of pmdump read -t: a (time of day, UTC, the
	// default), ad, r, d or e (see package timefmt).
	Time string
	// T0 is the zero of relative times (the capture's first packet).
	T0 time.Time
	// Digits is the number of fraction digits of the times (the capture's
	// resolution: 6 for microseconds, 9 for nanoseconds); 0 means 6, microseconds.
	Digits int

	tf     *timefmt.Formatter
	routes routeCache
}

// AppendTime appends a capture time stamp in the Line's time format.
func (l *Line) AppendTime(b []byte, ts time.Time) []byte {
	if l.tf == nil {
		f, err := timefmt.ParseFormat(l.Time)
		if err != nil || l.Time == "" {
			f = timefmt.Absolute
		}
		digits := l.Digits
		if digits <= 0 {
			digits = 6
		}
		l.tf = timefmt.New(f, digits)
		l.tf.SetFirst(l.T0)
	}
	return l.tf.Append(b, ts)
}

// routeCache keeps the text of the few routes a capture's packets take
// ("SRC → DST DIR pPLAYER "), so each line copies it instead of formatting
// it again: a table indexed by a hash of the ports, a newer route
// taking the place of an older one with the same hash.
type routeCache struct {
	slots [64]route
}

type route struct {
	src, dst netip.AddrPort
	dir      decode.Dir
	player   int
	text     []byte // nil: the slot is empty
}

func (c *routeCache) append(b []byte, r *session.Record) []byte {
	h := uint(r.Src.Port())*31 + uint(r.Dst.Port())
	rt := &c.slots[(h^h>>6)%uint(len(c.slots))]
	if rt.text == nil || rt.src != r.Src || rt.dst != r.Dst || rt.dir != r.Dir || rt.player != r.Player {
		rt.src, rt.dst, rt.dir, rt.player = r.Src, r.Dst, r.Dir, r.Player
		t := r.Src.AppendTo(rt.text[:0])
		t = append(t, " → "...)
		t = r.Dst.AppendTo(t)
		t = append(t, ' ')
		t = append(t, r.Dir.Arrow()...)
		t = append(t, ' ')
		t = AppendPlayer(t, r.Player)
		rt.text = append(t, ' ')
	}
	return append(b, rt.text...)
}

// AppendPad appends n right-aligned in width columns.
func AppendPad(b []byte, n int64, width int) []byte {
	return decimal.AppendPadded(b, n, width)
}

// Append appends the one-line form of a record, with a newline:
//
//	N TIME SRC → DST DIR pPLAYER NAME key=value…
func (l *Line) Append(b []byte, r *session.Record) []byte {
	b = decimal.AppendPadded(b, int64(r.N), 6)
	b = append(b, ' ')
	b = l.AppendTime(b, r.TS)
	b = append(b, ' ')
	b = l.routes.append(b, r)
	b = AppendName(b, r.Packet.Name[:])
	b = AppendInfo(b, r.Kind, &r.Packet)
	return append(b, '\n')
}

// AppendPlayer appends "pN", or "p?" for a player not known (negative).
func AppendPlayer(b []byte, player int) []byte {
	if player >= 0 {
		b = append(b, 'p')
		return decimal.AppendInt(b, int64(player))
	}
	return append(b, "p?"...)
}

// AppendInfo appends what the one-line form says after a packet's name:
// its key fields, why it is malformed, or the bytes of an unknown packet,
// each after a space (nothing for a packet with no key fields).
func AppendInfo(b []byte, kind session.Kind, p *decode.Packet) []byte {
	switch kind {
	case session.Unknown:
		b = append(b, " [unknown packet, "...)
		b = strconv.AppendInt(b, int64(len(p.Raw)), 10)
		b = append(b, " bytes] "...)
		return AppendHexBytes(b, p.Raw, 32)
	case session.Malformed:
		b = appendSummary(b, p)
		b = append(b, " [malformed: "...)
		if p.Err != nil {
			b = append(b, p.Err.Error()...)
		}
		return append(b, ']')
	}
	return appendSummary(b, p)
}

// appendSummary appends a space and the packet's key fields, if it has any.
func appendSummary(b []byte, p *decode.Packet) []byte {
	n := len(b)
	b = p.AppendSummary(append(b, ' '))
	if len(b) == n+1 {
		return b[:n]
	}
	return b
}

// AppendName appends a packet name, escaping bytes that are not printable.
func AppendName(b []byte, name []byte) []byte {
	if len(name) == 4 && printable(name[0]) && printable(name[1]) && printable(name[2]) && printable(name[3]) {
		return append(b, name...) // every known name, and most others
	}
	for _, c := range name {
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
		} else {
			b = append(b, fmt.Sprintf(`\x%02x`, c)...)
		}
	}
	return b
}

func printable(c byte) bool { return c >= 0x20 && c < 0x7f }

// AppendHexBytes appends up to max bytes of raw in hex, and "…" when raw is
// longer.
func AppendHexBytes(b []byte, raw []byte, max int) []byte {
	n := len(raw)
	if n > max {
		n = max
	}
	b = hex.AppendEncode(b, raw[:n])
	if len(raw) > max {
		b = append(b, "…"...)
	}
	return b
}

// AppendTreeHeader appends the first line of a packet's field tree (-V):
// its name, version, size, direction and conversation, and its error if
// any.
func AppendTreeHeader(b []byte, r *session.Record) []byte {
	b = append(b, "  Purple Martians "...)
	b = AppendName(b, r.Packet.Name[:])
	b = append(b, ", "...)
	if r.Version.Known() {
		b = append(b, r.Version.Label()...)
	} else {
		b = append(b, "unknown era"...) // as the text has always said
	}
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(len(r.Packet.Raw)), 10)
	b = append(b, " bytes, "...)
	b = append(b, r.Dir.Arrow()...)
	if c := r.Conv; c != nil {
		b = append(b, ", conversation "...)
		b = strconv.AppendInt(b, int64(c.ID), 10)
		b = append(b, " (client "...)
		b = r.Client.AppendTo(b)
		if c.Player >= 0 {
			b = append(b, " player "...)
			b = strconv.AppendInt(b, int64(c.Player), 10)
		}
		if c.Hostname != "" {
			b = append(b, " host "...)
			b = strconv.AppendQuote(b, c.Hostname)
		}
		b = append(b, ')')
	}
	if r.Packet.Err != nil {
		b = append(b, "\n  error: "...)
		b = append(b, r.Packet.Err.Error()...)
	}
	return append(b, '\n')
}

// AppendHex appends a hex dump of raw (as hex.Dump), each line indented by
// four spaces.
func AppendHex(b []byte, raw []byte) []byte {
	d := hex.Dump(raw)
	for len(d) > 0 {
		i := 0
		for i < len(d) && d[i] != '\n' {
			i++
		}
		b = append(b, "    "...)
		b = append(b, d[:i]...)
		b = append(b, '\n')
		if i < len(d) {
			i++
		}
		d = d[i:]
	}
	return b
}
