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
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
)

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
	Version  decode.Version
	Dir      decode.Dir
	Conv     *Conversation // nil for NonGame
	// Client is the client endpoint of the datagram (Src or Dst, by its
	// direction), also when Conv is the shared overflow conversation;
	// invalid for NonGame and for an unknown name off any conversation.
	Client netip.AddrPort
	Player int // -1 when not known
}

// Err is the reason a Malformed or Unknown record is not a clean packet.
func (r *Record) Err() error { return r.Packet.Err }

// Conversation is one client's conversation with the server. It is keyed by
// the client's endpoint.
type Conversation struct {
	ID      int            // 1-based, in order of first appearance; 0 for the overflow conversation
	Client  netip.AddrPort // the client's endpoint (invalid for the overflow conversation)
	Session int            // 1 for the endpoint's first conversation, 2 after it rejoined once, …
	Server  netip.AddrPort // the server endpoint that talks to this client (its per-client port, or the one server socket)
	Listen  netip.AddrPort // where the client's 1234 went (the server's listening port), if seen
	// Version is the conversation's wire version: the likeliest of
	// Versions, VersionUnknown until evidence was seen or when its packets
	// fit no known version (then Unrecognised says why).
	Version decode.Version
	// Versions are the versions that fit the evidence best: the packets
	// that tell versions apart, and the state size once known.
	Versions decode.VersionSet
	// StateSize is the size of the conversation's states, once the engine
	// saw one (LearnStateSize); 0 before.
	StateSize int
	// Unrecognised says why the conversation is of no known version (most
	// of its game packets fit none), "" when it is not.
	Unrecognised string
	Player       int    // player number, -1 until known
	Hostname     string // from the join request
	Name         string // the player's name, from the join request of the versions that send it
	Color        int    // from the join reply (or request), 0 until known
	Level        int    // from the join reply
	SLSN         int    // level-sequence number from the join reply
	// Joins counts the conversation's join requests; JoinReplies its join
	// replies (a join request retried without a reply is a failed join).
	Joins, JoinReplies int
	joined             bool      // a join reply or game traffic was seen
	First              time.Time // earliest packet
	Last               time.Time // latest packet
	Packets            int
	Bytes              int
	score              [decode.MaxVersions]int32 // packets that told versions apart, per version they fit
	fitted, misfits    [decode.MaxNames]int32    // packets of each known name that fit some version, none
	misfitName         int                       // the name that made the conversation of no known version
	told               int32                     // packets (and other evidence) that told versions apart
	shared             bool                      // the server sent from its listening port (learnSharedSocket)
	looked             [decode.MaxNames]uint8    // packets of each name checked against every version
}

// Tracker recognises game packets and follows conversations.
//
// Everything it keeps is bounded, whatever the input: at most
// MaxConversations conversations, MaxSessions of them per client endpoint,
// MaxServers server endpoints and MaxNames per-name counts. What goes past
// a bound is counted in Stats.Untracked.
type Tracker struct {
	force decode.Version
	convs map[netip.AddrPort]*Conversation
	order []*Conversation
	// servers are endpoints known to be game servers.
	servers  map[netip.AddrPort]bool
	global   decode.Version // the era last proven by any conversation
	rec      Record
	scratch  decode.Packet
	fresh    Conversation               // the evidence of a packet that may start a conversation
	recent   [recentConvs]*Conversation // conversations found lately, by recentSlot of their client
	overflow *Conversation              // shared by clients beyond MaxConversations
	// Distinct values past the bounds, counted exactly up to MaxUntracked.
	lostClients distinct[netip.AddrPort]
	lostServers distinct[netip.AddrPort]
	Stats       Stats
}

// NewTracker returns a tracker. A forced era (not EraUnknown) overrides
// inference for every conversation.
func NewTracker(force decode.Version) *Tracker {
	return &Tracker{
		force:   force,
		convs:   map[netip.AddrPort]*Conversation{},
		servers: map[netip.AddrPort]bool{},
		Stats:   newStats(),
	}
}

// Bounds of what a Tracker keeps, so that a hostile capture (a million
// client or server endpoints, endless rejoins) costs bounded memory and
// output. A game has one server endpoint per client and at most
// decode.MaxPlayer clients, so real captures stay far below them.
const (
	// MaxConversations bounds the conversations a Tracker follows one by
	// one; the packets of clients beyond it go to one overflow conversation
	// with ID 0 and no client endpoint (each Record still names its client).
	MaxConversations = 1024
	// MaxSessions bounds the conversations of one client endpoint: a
	// handshake past it does not start a new conversation but goes on with
	// the endpoint's last one.
	MaxSessions = 64
	// MaxServers bounds the server endpoints a Tracker remembers.
	MaxServers = 1024
	// MaxNames bounds the pairs of an unknown name and a direction counted
	// one by one in Stats.ByName (known names are always counted); packets
	// of further unknown names are counted together in
	// Stats.Untracked.Names.
	MaxNames = 256
	// MaxUntracked bounds the distinct values Untracked counts exactly;
	// past it the counts are lower bounds (Untracked.AtLeast).
	MaxUntracked = 1 << 14
)

// Conversations returns every conversation seen, in order of appearance,
// and last the overflow conversation if there was one.
func (t *Tracker) Conversations() []*Conversation {
	if t.overflow != nil {
		return append(t.order[:len(t.order):len(t.order)], t.overflow)
	}
	return t.order
}

// Conversation returns conversation id (0: the overflow conversation), or
// nil when there is none. Conversations are numbered in order of
// appearance, so the lookup is an index, not a scan.
func (t *Tracker) Conversation(id int) *Conversation {
	if id == 0 {
		return t.overflow
	}
	if id < 0 || id > len(t.order) {
		return nil
	}
	return t.order[id-1]
}

func (t *Tracker) conv(client netip.AddrPort, ts time.Time, session int) *Conversation {
	c := t.lookup(client)
	if c == nil && len(t.order) >= MaxConversations {
		// A capture with endless distinct clients (hostile or not a game)
		// must not grow memory without bound: the rest share one record.
		if t.overflow == nil {
			t.overflow = &Conversation{ID: 0, Player: -1, First: ts}
		}
		t.lostClients.add(client)
		t.Stats.Untracked.Conversations = t.lostClients.n
		t.Stats.Untracked.AtLeast = t.Stats.Untracked.AtLeast || t.lostClients.full()
		return t.overflow
	}
	if c == nil {
		c = &Conversation{ID: len(t.order) + 1, Client: client, Session: session, Player: -1, First: ts}
		t.convs[client] = c
		t.order = append(t.order, c)
		t.recent[recentSlot(client)] = c
	}
	return c
}

// addServer remembers a server endpoint, within MaxServers.
func (t *Tracker) addServer(server netip.AddrPort) {
	if t.servers[server] {
		return
	}
	if len(t.servers) >= MaxServers {
		t.lostServers.add(server)
		t.Stats.Untracked.Servers = t.lostServers.n
		t.Stats.Untracked.AtLeast = t.Stats.Untracked.AtLeast || t.lostServers.full()
		return
	}
	t.servers[server] = true
}

// distinct counts distinct values, keeping at most MaxUntracked of them.
type distinct[K comparable] struct {
	seen map[K]struct{}
	n    int
}

func (d *distinct[K]) add(k K) {
	if _, ok := d.seen[k]; ok {
		return
	}
	if d.full() {
		return
	}
	if d.seen == nil {
		d.seen = map[K]struct{}{}
	}
	d.seen[k] = struct{}{}
	d.n++
}

func (d *distinct[K]) full() bool { return d.n >= MaxUntracked }

// recentConvs is how many conversations found lately a Tracker keeps
// beside its map: the clients of a game take turns, 8 at most.
const recentConvs = 16

// recentSlot is a client's slot among the conversations found lately: its
// port and the last byte of its address, which tell the clients of a game
// apart.
func recentSlot(client netip.AddrPort) int {
	a := client.Addr().AsSlice()
	h := uint(client.Port())
	if len(a) > 0 {
		h ^= uint(a[len(a)-1]) * 7
	}
	return int(h % recentConvs)
}

// lookup finds a client's conversation; the ones found lately are checked
// first.
func (t *Tracker) lookup(client netip.AddrPort) *Conversation {
	i := recentSlot(client)
	if c := t.recent[i]; c != nil && c.Client == client {
		return c
	}
	c := t.convs[client]
	if c != nil {
		t.recent[i] = c
	}
	return c
}

// forget forgets client's conversation c.
func (t *Tracker) forget(client netip.AddrPort, c *Conversation) {
	delete(t.convs, client)
	if i := recentSlot(client); t.recent[i] == c {
		t.recent[i] = nil
	}
}

func printable(name []byte) bool {
	for _, b := range name[:4] {
		if b < 0x21 || b > 0x7e {
			return false
		}
	}
	return true
}
