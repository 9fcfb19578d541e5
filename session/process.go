package session

import (
	"fmt"
	"net/netip"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/source"
)

// Process looks at one datagram and returns the record for it. The record is
// valid until the next call.
func (t *Tracker) Process(d *source.Datagram) *Record {
	r := &t.rec
	r.N, r.TS, r.Src, r.Dst = d.N, d.TS, d.Src, d.Dst
	r.Kind, r.Era, r.Dir, r.Conv, r.Client, r.Player = NonGame, decode.EraUnknown, decode.DirUnknown, nil, netip.AddrPort{}, -1
	p := d.Payload
	if len(p) < 4 {
		return t.nonGame(r, p)
	}
	dir := decode.DirOf(p)
	if dir == decode.DirUnknown {
		// Unknown name: a game packet only if it is on a game conversation.
		if !printable(p) || !t.onGameEndpoint(d) {
			return t.nonGame(r, p)
		}
		r.Kind = Unknown
		decode.Decode(&r.Packet, p, decode.Modern) // fills Name, Raw and ErrUnknown
		c := t.convs[d.Src]
		if c == nil {
			c = t.convs[d.Dst]
		}
		r.Conv = c
		if c != nil {
			r.Era, r.Player, r.Client = c.Era, c.Player, c.Client
			if c.Client == d.Src {
				r.Dir = decode.C2S
			} else {
				r.Dir = decode.S2C
			}
			t.touch(c, d)
		}
		t.Stats.add(r, len(p))
		return r
	}
	client, server := d.Src, d.Dst
	if dir == decode.S2C {
		client, server = d.Dst, d.Src
	}
	existing := t.lookup(client)
	named := dir // the direction the packet's name is sent in
	if existing == nil || server != existing.Server && server != existing.Listen {
		// The name says one direction, but a known conversation's
		// addresses say the other (a malformed stak the server sent, say):
		// the addresses tell.
		if c := t.convs[server]; c != nil && (client == c.Server || client == c.Listen) {
			client, server, existing = server, client, c
			if dir == decode.C2S {
				dir = decode.S2C
			} else {
				dir = decode.C2S
			}
		}
	}
	session := 1
	if existing != nil && existing.joined && string(p[:4]) == "1234" && dir == decode.C2S {
		// A new handshake from a client that had joined: a new session
		// (it rejoined, or the next input file is another game). Its era,
		// player and frames start afresh, in a new conversation while the
		// bounds allow; past them the last conversation goes on.
		existing.joined = false
		if existing.Session < MaxSessions && len(t.order) < MaxConversations {
			t.forget(client, existing)
			session = existing.Session + 1
			existing = nil
		} else {
			t.Stats.Untracked.Rejoins++
		}
	}
	era, strong := t.decode(&r.Packet, existing, p)
	if r.Packet.Err != nil && generic(p) && existing == nil && !t.servers[server] && server.Port() != decode.ListenPort {
		// A common word or number that does not fit, outside any game
		// conversation and off the game's port: other traffic ("1234…",
		// a "ping"), not a malformed game packet. Names like stdf or cdat
		// are the game's wherever they are.
		return t.nonGame(r, p)
	}
	c := t.conv(client, d.TS, session)
	r.Conv, r.Dir, r.Era, r.Client = c, dir, era, client
	r.Kind = Game
	if d.Truncated() {
		r.Packet.Err = fmt.Errorf("truncated by the capture's snap length: %d of %d payload bytes captured", len(p), d.Length)
	}
	if dir != named && r.Packet.Err == nil {
		r.Packet.Err = fmt.Errorf("%s is sent %s; this one went %s", r.Packet.NameString(), named.Arrow(), dir.Arrow())
	}
	if r.Packet.Err != nil {
		r.Kind = Malformed
	}
	if strong && r.Kind == Game && t.force == decode.EraUnknown {
		c.evidence[era]++
		if c.Era != era && c.evidence[era] >= c.evidence[c.Era] {
			c.Era = era
		}
		t.global = era
	}
	if t.force != decode.EraUnknown {
		c.Era = t.force
	}
	if !strong && c.Era == decode.EraUnknown && t.global == decode.EraUnknown && t.force == decode.EraUnknown {
		r.Era = decode.EraUnknown // nothing in the packet or before it tells
	}
	t.learn(c, r, server)
	t.touch(c, d)
	r.Player = c.Player
	if pl, ok := r.Packet.Player(); ok && r.Kind == Game {
		r.Player = pl
	}
	t.Stats.add(r, len(p))
	return r
}

// nonGame finishes the record of a datagram that is not game traffic: its
// packet is empty, not the previous datagram's or a failed decoding.
func (t *Tracker) nonGame(r *Record, p []byte) *Record {
	pk := &r.Packet
	*pk = decode.Packet{Values: pk.Values[:0], Entries: pk.Entries[:0], Raw: p}
	copy(pk.Name[:], p)
	t.Stats.nonGame(len(p))
	return r
}

func (t *Tracker) touch(c *Conversation, d *source.Datagram) {
	// Earliest and latest: inputs need not be in time order.
	if d.TS.Before(c.First) {
		c.First = d.TS
	}
	if d.TS.After(c.Last) {
		c.Last = d.TS
	}
	c.Packets++
	c.Bytes += len(d.Payload)
}

// onGameEndpoint reports whether a datagram travels between a client and
// its server (or to the game's port from a known game endpoint), so that a
// packet with an unknown name on it is the game's, not other traffic of the
// same host.
func (t *Tracker) onGameEndpoint(d *source.Datagram) bool {
	pair := func(client, server netip.AddrPort) bool {
		c := t.convs[client]
		return c != nil && (server == c.Server || server == c.Listen)
	}
	if pair(d.Src, d.Dst) || pair(d.Dst, d.Src) {
		return true
	}
	return d.Dst.Port() == decode.ListenPort
}

// generic reports whether a packet name is also a common word or number.
func generic(name []byte) bool {
	switch string(name[:4]) {
	case "ping", "pong", "pang", "JUNK":
		return true
	}
	return allDigits(name)
}

// decode decodes a payload with a known name into pk, choosing the era: a
// forced era, else the conversation's, else whichever era's layout fits.
// It reports the era used and whether the packet itself proves it (the
// other era's layout does not fit it).
func (t *Tracker) decode(pk *decode.Packet, c *Conversation, p []byte) (decode.Era, bool) {
	if t.force != decode.EraUnknown {
		decode.Decode(pk, p, t.force)
		return t.force, false
	}
	other := func(e decode.Era) decode.Era {
		if e == decode.Legacy {
			return decode.Modern
		}
		return decode.Legacy
	}
	if c != nil && c.Era != decode.EraUnknown {
		if decode.Decode(pk, p, c.Era) == nil {
			return c.Era, false
		}
		o := other(c.Era)
		if decode.Lookup(o, p) != nil && decode.Decode(&t.scratch, p, o) == nil {
			decode.Decode(pk, p, o)
			return o, true
		}
		if decode.Lookup(c.Era, p) == nil {
			decode.Decode(pk, p, o)
			return o, false
		}
		decode.Decode(pk, p, c.Era)
		return c.Era, false
	}
	var fits []decode.Era
	var frames [3]int64 // the game frame each fitting era reads, if any
	var hasFrame [3]bool
	for _, e := range decode.Eras {
		if decode.Lookup(e, p) != nil && decode.Decode(&t.scratch, p, e) == nil {
			fits = append(fits, e)
			frames[e], hasFrame[e] = t.scratch.Frame()
		}
	}
	var era decode.Era
	switch {
	case len(fits) == 1:
		decode.Decode(pk, p, fits[0])
		return fits[0], true
	case len(fits) == 0:
		// Malformed in every era: decode in the most likely one to say why.
		era = decode.Modern
		for _, e := range []decode.Era{t.global, decode.Modern, decode.Legacy} {
			if e != decode.EraUnknown && decode.Lookup(e, p) != nil {
				era = e
				break
			}
		}
	case t.global != decode.EraUnknown:
		// Both eras fit (1234, cdat): the capture decides, then the values.
		era = t.global
	default:
		era = plausibleEra(frames, hasFrame)
	}
	decode.Decode(pk, p, era)
	return era, false
}

// plausibleEra guesses the era of a packet that fits both eras (a cdat)
// from the game frame each era reads in it: game frames are small positive
// numbers, so the byte order that reads a smaller one is the right one.
func plausibleEra(frames [3]int64, has [3]bool) decode.Era {
	if has[decode.Legacy] && has[decode.Modern] && uint32(frames[decode.Legacy]) < uint32(frames[decode.Modern]) {
		return decode.Legacy
	}
	return decode.Modern
}

// learn updates the conversation from what the packet says about it.
func (t *Tracker) learn(c *Conversation, r *Record, server netip.AddrPort) {
	pk := &r.Packet
	name := ""
	if pk.Layout != nil { // nil for a name of the other era when the era is forced
		name = pk.Layout.Name
	}
	if name == "1234" {
		c.Listen = server
		t.addServer(server)
		return
	}
	if name != "5678" {
		c.joined = true
	}
	if c.Server != server {
		c.Server = server
		t.addServer(server)
	}
	if r.Kind != Game {
		return
	}
	switch name {
	case "CJON", "cjon", "SJON", "sjon": // the join packets
		if learnJoin(c, pk) {
			return
		}
	}
	if r.Dir == decode.C2S {
		if pl, ok := pk.Player(); ok && decode.ClientPlayer(pl) {
			c.Player = pl
		}
	}
}

// learnJoin learns from a join request (hostname, color) or reply (player,
// color, level); it reports whether pk is one.
func learnJoin(c *Conversation, pk *decode.Packet) bool {
	if host, ok := joinHostname.Text(pk); ok {
		// A join request.
		c.Hostname = host
		if col, _ := joinColor.Int(pk); c.Color == 0 {
			c.Color = int(col)
		}
		return true
	}
	if pl, ok := joinPlayer.Int(pk); ok {
		// A join reply.
		if pl != decode.PlayerServerFull {
			c.Player = int(pl)
			col, _ := joinColor.Int(pk)
			c.Color = int(col)
		}
		lv, _ := joinLevel.Int(pk)
		c.Level = int(lv)
		if slsn, ok := joinSLSN.Int(pk); ok {
			c.SLSN = int(slsn)
		}
		return true
	}
	return false
}

// The join packets' fields, resolved once: a name the layouts lack stops
// the program (and every test) at start-up.
var (
	joinHostname = decode.MustRef(decode.EraUnknown, "hostname", "CJON", "cjon")
	joinColor    = decode.MustRef(decode.EraUnknown, "color", "CJON", "cjon", "SJON", "sjon")
	joinPlayer   = decode.MustRef(decode.EraUnknown, "player", "SJON", "sjon")
	joinLevel    = decode.MustRef(decode.EraUnknown, "level", "SJON", "sjon")
	joinSLSN     = decode.MustRef(decode.Modern, "slsn", "sjon")
)
