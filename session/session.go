// Package session recognises game packets among a capture's UDP datagrams
// and follows the game's conversations: which endpoint is the server, which
// are clients, which protocol era each conversation speaks, and which player,
// hostname and color each client has.
//
// A Tracker is fed datagrams in capture order (from a file or a live source
// alike) and returns one Record per datagram, with the packet decoded and
// tagged with its direction, client and player.
package session

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/source"
)

// ListenPort is the port a game server listens on by default.
const ListenPort = 24785

// Kind says what a datagram turned out to be.
type Kind uint8

const (
	// NonGame is UDP that is not Purple Martians traffic; it is skipped.
	NonGame Kind = iota
	// Game is a game packet that decoded cleanly.
	Game
	// Malformed is a game packet that does not fit its layout.
	Malformed
	// Unknown is a packet with a name no era knows, seen on a game conversation.
	Unknown
)

func (k Kind) String() string {
	return [...]string{"non-game", "game", "malformed", "unknown"}[k]
}

// Record is one datagram as the tracker understood it. The tracker reuses
// the Record and its Packet for the next datagram.
type Record struct {
	N        int
	TS       time.Time
	Src, Dst netip.AddrPort
	Kind     Kind
	Packet   decode.Packet
	Era      decode.Era
	Dir      decode.Dir
	Conv     *Conversation // nil for NonGame
	Player   int           // -1 when not known
}

// Err is the reason a Malformed or Unknown record is not a clean packet.
func (r *Record) Err() error { return r.Packet.Err }

// Conversation is one client's conversation with the server. It is keyed by
// the client's endpoint.
type Conversation struct {
	ID       int            // 1-based, in order of first appearance
	Client   netip.AddrPort // the client's endpoint
	Server   netip.AddrPort // the server endpoint that talks to this client (its per-client port)
	Listen   netip.AddrPort // where the client's 1234 went (the server's listening port), if seen
	Era      decode.Era     // the conversation's era, once evidence was seen
	Player   int            // player number, -1 until known
	Hostname string         // from the join request
	Color    int            // from the join reply (or request), 0 until known
	Level    int            // from the join reply
	SLSN     int            // level-sequence number from the modern join reply
	joined   bool           // a join reply or game traffic was seen
	First    time.Time      // earliest packet
	Last     time.Time      // latest packet
	Packets  int
	Bytes    int
	evidence [3]int // strong evidence per era
}

// Tracker recognises game packets and follows conversations.
type Tracker struct {
	force decode.Era
	convs map[netip.AddrPort]*Conversation
	order []*Conversation
	// servers are endpoints known to be game servers.
	servers  map[netip.AddrPort]bool
	global   decode.Era // the era last proven by any conversation
	rec      Record
	scratch  decode.Packet
	last     *Conversation // the conversation found last
	overflow *Conversation // shared by clients beyond MaxConversations
	Stats    Stats
}

// NewTracker returns a tracker. A forced era (not EraUnknown) overrides
// inference for every conversation.
func NewTracker(force decode.Era) *Tracker {
	return &Tracker{
		force:   force,
		convs:   map[netip.AddrPort]*Conversation{},
		servers: map[netip.AddrPort]bool{},
		Stats:   newStats(),
	}
}

// MaxConversations bounds the conversations a Tracker follows one by one;
// clients beyond it share one overflow conversation with ID 0 and no
// client endpoint.
const MaxConversations = 4096

// Conversations returns every conversation seen, in order of appearance,
// and last the overflow conversation if there was one.
func (t *Tracker) Conversations() []*Conversation {
	if t.overflow != nil {
		return append(t.order[:len(t.order):len(t.order)], t.overflow)
	}
	return t.order
}

func (t *Tracker) conv(client netip.AddrPort, ts time.Time) *Conversation {
	c := t.lookup(client)
	if c == nil && len(t.order) >= MaxConversations {
		// A capture with endless distinct clients (hostile or not a game)
		// must not grow memory without bound: the rest share one record.
		if t.overflow == nil {
			t.overflow = &Conversation{ID: 0, Player: -1, First: ts}
		}
		return t.overflow
	}
	if c == nil {
		c = &Conversation{ID: len(t.order) + 1, Client: client, Player: -1, First: ts}
		t.convs[client] = c
		t.order = append(t.order, c)
		t.last = c
	}
	return c
}

// lookup finds a client's conversation; consecutive packets are mostly of
// the same one, so the last one found is checked first.
func (t *Tracker) lookup(client netip.AddrPort) *Conversation {
	if t.last != nil && t.last.Client == client {
		return t.last
	}
	c := t.convs[client]
	if c != nil {
		t.last = c
	}
	return c
}

func printable(name []byte) bool {
	for _, b := range name[:4] {
		if b < 0x21 || b > 0x7e {
			return false
		}
	}
	return true
}

func allDigits(name []byte) bool {
	for _, b := range name[:4] {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// Process looks at one datagram and returns the record for it. The record is
// valid until the next call.
func (t *Tracker) Process(d *source.Datagram) *Record {
	r := &t.rec
	r.N, r.TS, r.Src, r.Dst = d.N, d.TS, d.Src, d.Dst
	r.Kind, r.Era, r.Dir, r.Conv, r.Player = NonGame, decode.EraUnknown, decode.DirUnknown, nil, -1
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
			r.Era, r.Player = c.Era, c.Player
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
	if existing != nil && existing.ID != 0 && existing.joined && len(p) >= 4 && string(p[:4]) == "1234" && dir == decode.C2S {
		// A new handshake from a client that had joined: a new session
		// (it rejoined, or the next input file is another game). Its era,
		// player and frames start afresh.
		delete(t.convs, client)
		if t.last == existing {
			t.last = nil
		}
		existing = nil
	}
	era, strong := t.decode(&r.Packet, existing, p)
	if r.Packet.Err != nil && generic(p) && existing == nil && !t.servers[server] && server.Port() != ListenPort {
		// A common word or number that does not fit, outside any game
		// conversation and off the game's port: other traffic ("1234…",
		// a "ping"), not a malformed game packet. Names like stdf or cdat
		// are the game's wherever they are.
		return t.nonGame(r, p)
	}
	c := t.conv(client, d.TS)
	r.Conv, r.Dir, r.Era = c, dir, era
	r.Kind = Game
	if d.Truncated() {
		r.Packet.Err = fmt.Errorf("truncated by the capture's snap length: %d of %d payload bytes captured", len(p), d.Length)
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
	return d.Dst.Port() == ListenPort
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
	for _, e := range decode.Eras {
		if decode.Lookup(e, p) != nil && decode.Decode(&t.scratch, p, e) == nil {
			fits = append(fits, e)
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
		era = plausibleEra(p)
	}
	decode.Decode(pk, p, era)
	return era, false
}

// plausibleEra guesses the era of a packet that fits both eras from its
// frame number: game frames are small positive numbers, so the byte order
// that reads a smaller one is the right one.
func plausibleEra(p []byte) decode.Era {
	if len(p) >= 9 {
		be := uint32(p[5])<<24 | uint32(p[6])<<16 | uint32(p[7])<<8 | uint32(p[8])
		le := uint32(p[8])<<24 | uint32(p[7])<<16 | uint32(p[6])<<8 | uint32(p[5])
		if be < le {
			return decode.Legacy
		}
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
		t.servers[server] = true
		return
	}
	if name != "5678" {
		c.joined = true
	}
	if c.Server != server && name != "1234" {
		c.Server = server
		t.servers[server] = true
	}
	if r.Kind != Game {
		return
	}
	switch name {
	case "CJON", "cjon":
		c.Hostname = pk.Values[1].Text()
		if c.Color == 0 {
			c.Color = int(pk.Int("color"))
		}
	case "SJON", "sjon":
		if pl := int(pk.Int("player")); pl != 99 {
			c.Player = pl
			c.Color = int(pk.Int("color"))
		}
		c.Level = int(pk.Int("level"))
		if pk.Has("slsn") {
			c.SLSN = int(pk.Int("slsn"))
		}
	default:
		if r.Dir == decode.C2S {
			if pl, ok := pk.Player(); ok && pl >= 1 && pl <= 7 {
				c.Player = pl
			}
		}
	}
}
