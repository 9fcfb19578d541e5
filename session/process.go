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
	r.Kind, r.Version, r.Dir, r.Conv, r.Client, r.Player = NonGame, decode.VersionUnknown, decode.DirUnknown, nil, netip.AddrPort{}, -1
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
			r.Version, r.Player, r.Client = c.Version, c.Player, c.Client
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
	kind := decode.KindOf(p)
	if existing != nil && existing.joined && dir == decode.C2S && t.restarts(existing, kind) {
		// A new handshake (or, in the versions without one, a new join
		// request after a join reply) from a client that had joined: a
		// new session (it rejoined, or the next input file is another
		// game). Its version, player and frames start afresh, in a new
		// conversation while the bounds allow; past them the last
		// conversation goes on.
		existing.joined = false
		if existing.Session < MaxSessions && len(t.order) < MaxConversations {
			t.forget(client, existing)
			session = existing.Session + 1
			existing = nil
		} else {
			t.Stats.Untracked.Rejoins++
		}
	}
	c := existing
	if c == nil {
		// Evidence for a conversation that starts with this packet, if it
		// turns out to be a game packet.
		t.fresh = Conversation{Player: -1}
		c = &t.fresh
	}
	if server.Port() == decode.ListenPort && kind != decode.KindHandshake && kind != decode.KindHandshakeReply && t.force == decode.VersionUnknown {
		// Only a server with one socket for every client talks to its
		// clients on its listening port (the others answer from a port
		// of each client's, after the handshake).
		c.learnSharedSocket()
	}
	era, told := t.decode(&r.Packet, c, p, d.Truncated())
	if r.Packet.Err != nil && decode.CommonWord(p) && existing == nil && !t.servers[server] && server.Port() != decode.ListenPort {
		// A common word or number that does not fit, outside any game
		// conversation and off the game's port: other traffic ("1234…",
		// a "ping"), not a malformed game packet. Names like stdf or cdat
		// are the game's wherever they are.
		return t.nonGame(r, p)
	}
	if c == &t.fresh {
		c = t.conv(client, d.TS, session)
		if c != t.overflow {
			c.takeEvidence(&t.fresh)
		}
	}
	r.Conv, r.Dir, r.Version, r.Client = c, dir, era, client
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
	if t.force != decode.VersionUnknown {
		c.Version, c.Versions = t.force, decode.Of(t.force)
	} else if told && r.Kind == Game && c.Version != decode.VersionUnknown {
		t.global = c.Version
	}
	if !told && c.Version == decode.VersionUnknown && t.global == decode.VersionUnknown && t.force == decode.VersionUnknown && r.Packet.Err == nil {
		r.Version = decode.VersionUnknown // nothing in the packet or before it tells
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

// restarts reports whether a packet of kind k from the client of c starts a
// new session: a handshake, or a join request after a join reply in a
// version without a handshake.
func (t *Tracker) restarts(c *Conversation, k decode.Kind) bool {
	switch k {
	case decode.KindHandshake:
		return true
	case decode.KindJoinRequest:
		return c.JoinReplies > 0 && c.Version != decode.VersionUnknown && !c.Version.Has(decode.KindHandshake)
	}
	return false
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

// looks is how many packets of each name of a conversation are checked
// against every version even when they decode in the conversation's own:
// enough to see the packets that tell versions apart early (a join
// request, the first pieces), few enough to cost nothing later.
const looks = 4

// decode decodes a payload with a known name into pk, choosing the
// version: a forced one; else the conversation's (or, for a conversation
// without one, the version last told), when the packet decodes and agrees
// with it; else the version the packet's own bytes point to, as evidence
// for the conversation. It reports the version used and whether the packet
// told versions apart (some version that has its name does not fit it).
func (t *Tracker) decode(pk *decode.Packet, c *Conversation, p []byte, truncated bool) (decode.Version, bool) {
	if t.force != decode.VersionUnknown {
		decode.Decode(pk, p, t.force)
		return t.force, false
	}
	v := t.global
	if c != nil && (c.Version != decode.VersionUnknown || c.Unrecognised != "") {
		v = c.Version
	}
	if truncated {
		// Cut by the snap length: what is left says nothing of the
		// version; it is decoded as far as it goes in the likeliest one.
		if v == decode.VersionUnknown || decode.Lookup(v, p) == nil {
			if c != nil && c.Versions != 0 {
				v = c.Versions.Best()
			}
			if decode.Lookup(v, p) == nil {
				v = decode.Fits(p, &t.scratch).Named.Best()
			}
		}
		decode.Decode(pk, p, v)
		return v, false
	}
	id := decode.NameID(p)
	if v != decode.VersionUnknown && (c == nil || id < 0 || c.looked[id] >= looks) {
		if decode.Decode(pk, p, v) == nil && decode.Agrees(pk, v) {
			if c != nil && id >= 0 {
				c.fitted[id]++
			}
			return v, false
		}
	}
	if c != nil && id >= 0 && c.looked[id] < looks {
		c.looked[id]++
	}
	fit := decode.Fits(p, &t.scratch)
	best := fit.Best()
	// A packet tells versions apart when it rules some out and leaves one
	// byte order: one that fits both (a 1234, a 10-byte cdat) says
	// nothing for sure; the byte order that reads a plausible frame scores.
	told := best != 0 && best != decode.All() && best.OneByteOrder()
	if !best.OneByteOrder() {
		best = decode.Plausible(p, best, &t.scratch)
	}
	if c != nil {
		c.learnFit(id, best, told, p, &t.scratch)
	}
	switch {
	case best == 0:
		return t.misfit(pk, c, p, v, fit)
	case best.Has(v): // the conversation's version, or the one last told
	case c != nil && best&c.Versions != 0:
		v = (best & c.Versions).Best()
	default:
		v = best.Best()
	}
	decode.Decode(pk, p, v)
	return v, told
}

// misfit decodes a packet that fits no version: in the conversation's
// version (or the one last told), to say what is wrong with it; or, for a
// conversation of no known version, not at all, with the reason.
func (t *Tracker) misfit(pk *decode.Packet, c *Conversation, p []byte, v decode.Version, fit decode.Fit) (decode.Version, bool) {
	if c != nil && c.Unrecognised != "" {
		decode.DecodeUnrecognised(pk, p)
		return decode.VersionUnknown, false
	}
	if v == decode.VersionUnknown || !fit.Named.Has(v) {
		v = fit.Named.Best()
	}
	decode.Decode(pk, p, v)
	return v, false
}

// learnFit takes what a packet of name id says: best, the versions it
// fits (none for a misfit), and whether that told versions apart (it
// rules some version out, and leaves one byte order). Every packet that
// fits scores for the versions it fits; the conversation's version is not
// named until a packet told versions apart.
//
// A conversation is of no known version once, of its packets of known
// names, those that fit none outnumber those that fit (twice at least),
// or once two packets of one name fit none and none of that name fits (a
// build that changed one packet, a new stdf header, while its other
// packets still fit); a few damaged packets among good ones of their
// name do not make it so. It is of a version again once the packets of
// the name that told fit as often as not.
func (c *Conversation) learnFit(id int, best decode.VersionSet, told bool, p []byte, scratch *decode.Packet) {
	if id < 0 {
		return
	}
	if best == 0 {
		c.misfits[id]++
		if c.Unrecognised == "" && c.misfits[id] >= 2 && (c.fitted[id] == 0 || c.mostMisfit()) {
			reason, _ := decode.Explain(p, scratch)
			c.Unrecognised, c.misfitName = reason, id
			c.Version, c.Versions = decode.VersionUnknown, 0
		}
		return
	}
	c.fitted[id]++
	if c.Unrecognised != "" && id == c.misfitName && c.fitted[id] >= c.misfits[id] {
		c.Unrecognised = "" // the packets of that name that fit caught up
	}
	if told {
		c.told++
	}
	for _, v := range best.Versions() {
		c.score[v]++
	}
	c.choose()
}

// mostMisfit reports whether more of the conversation's packets of known
// names fit no version than fit some.
func (c *Conversation) mostMisfit() bool {
	var fitted, misfits int32
	for i := range c.fitted {
		fitted += c.fitted[i]
		misfits += c.misfits[i]
	}
	return misfits > fitted
}

// learnSharedSocket takes the evidence that the server sends this
// conversation's packets from its listening port: only a server with one
// socket for every client does (the others answer from a port of each
// client's), so it counts once, for those versions.
func (c *Conversation) learnSharedSocket() {
	if c.shared || c.Unrecognised != "" {
		return
	}
	c.shared = true
	for _, v := range decode.Versions() {
		if v.Info().SharedServerSocket {
			c.score[v]++
		}
	}
	c.told++
	c.choose()
}

// takeEvidence takes the evidence gathered in f, a conversation's first
// packet seen before the conversation was made.
func (c *Conversation) takeEvidence(f *Conversation) {
	c.Version, c.Versions, c.Unrecognised = f.Version, f.Versions, f.Unrecognised
	c.score, c.fitted, c.misfits, c.misfitName, c.looked, c.told, c.shared = f.score, f.fitted, f.misfits, f.misfitName, f.looked, f.told, f.shared
}

// choose sets Versions to the versions of the best score (of those with
// the conversation's state size, once known, when any has it) and, once a
// packet told versions apart, Version to the likeliest of them.
func (c *Conversation) choose() {
	if c.Unrecognised != "" {
		return
	}
	pick := func(sized bool) decode.VersionSet {
		var top int32
		var set decode.VersionSet
		for _, v := range decode.Versions() {
			if sized && !v.StateSize(c.StateSize) {
				continue
			}
			switch s := c.score[v]; {
			case s > top:
				top, set = s, decode.Of(v)
			case s == top && s > 0:
				set = set.With(v)
			}
		}
		return set
	}
	set := decode.VersionSet(0)
	if c.StateSize > 0 {
		set = pick(true)
	}
	if set == 0 {
		set = pick(false)
	}
	if set == 0 {
		return
	}
	c.Versions = set
	if c.told > 0 {
		c.Version = set.Best()
	}
}

// learn updates the conversation from what the packet says about it.
func (t *Tracker) learn(c *Conversation, r *Record, server netip.AddrPort) {
	pk := &r.Packet
	kind := pk.Kind() // unknown for a name the (forced) version lacks
	if kind == decode.KindHandshake {
		c.Listen = server
		t.addServer(server)
		return
	}
	if kind != decode.KindHandshakeReply {
		c.joined = true
	}
	if c.Server != server {
		c.Server = server
		t.addServer(server)
	}
	switch kind {
	case decode.KindJoinRequest:
		c.Joins++
	case decode.KindJoinReply:
		c.JoinReplies++
	}
	if r.Kind != Game {
		return
	}
	switch kind {
	case decode.KindJoinRequest:
		if host, ok := joinHostname.Text(pk); ok {
			c.Hostname = host
		}
		if name, ok := joinName.Text(pk); ok {
			c.Name = name
		}
		if col, _ := joinColor.Int(pk); c.Color == 0 {
			c.Color = int(col)
		}
		return
	case decode.KindJoinReply:
		if pl, _ := joinPlayer.Int(pk); pl != decode.PlayerServerFull {
			c.Player = int(pl)
			col, _ := joinColor.Int(pk)
			c.Color = int(col)
		}
		lv, _ := joinLevel.Int(pk)
		c.Level = int(lv)
		if slsn, ok := joinSLSN.Int(pk); ok {
			c.SLSN = int(slsn)
		}
		return
	}
	if r.Dir == decode.C2S {
		if pl, ok := pk.Player(); ok && decode.ClientPlayer(pl) {
			c.Player = pl
		}
	}
}

// LearnStateSize tells the tracker the size of the states of conversation
// id (the engine learns it from a dif it inflated): the versions of the
// conversation are narrowed to those whose states have that size, the
// only thing that tells some of them apart.
func (t *Tracker) LearnStateSize(id, size int) {
	c := t.Conversation(id)
	if c == nil || c.StateSize == size || size <= 0 || t.force != decode.VersionUnknown {
		return
	}
	c.StateSize = size
	c.choose()
}

// The join packets' fields, resolved once: a name the layouts lack stops
// the program (and every test) at start-up.
var (
	joinHostname = decode.MustKindRef(decode.KindJoinRequest, "hostname")
	joinName     = decode.MustKindRef(decode.KindJoinRequest, "name")
	joinColor    = decode.MustRef("color", "CJON", "cjon", "SJON", "sjon")
	joinPlayer   = decode.MustKindRoleRef(decode.KindJoinReply, decode.RolePlayer)
	joinLevel    = decode.MustKindRoleRef(decode.KindJoinReply, decode.RoleLevel)
	joinSLSN     = decode.MustKindRoleRef(decode.KindJoinReply, decode.RoleLevelSeq)
)
