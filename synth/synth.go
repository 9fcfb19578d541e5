// Package synth generates the network traffic of a synthetic Purple
// Martians LAN game, in any wire version of the game, together with its
// ground truth.
//
// Generate runs a small discrete-time simulation of one server and 1..7
// clients. The server runs a toy game whose state (in the era's state
// layout and size) evolves like a real one: players run and jump according
// to their controls, enemies, lifts and items move, shots fly, and in the
// modern era the level changes once. The two sides talk exactly as the game
// does on the wire:
//
//   - join: 1234 to the server's port 24785, 5678 back from a new ephemeral
//     per-client server port, then CJON/SJON (legacy) or cjon/sjon (modern)
//     on that port;
//   - cdat whenever a client's controls change;
//   - legacy: sdat with the game-move entries a client has not acknowledged,
//     sdak answers (the first one 21 bytes, later 25), serr for late cdats
//     (c_sync encoded the game's non-two's-complement way);
//   - the rewind versions: ping, pong and pang once a second; the level
//     sequence on cdat and stak where the version carries it; a clog for
//     every netgame log line in the version whose clients always send them;
//   - stdf state difs, dif = base − new bytewise, compressed with zlib level
//     7 and cut into pieces of the version's size (compressed/size + 1 of them), built
//     against the client's last acknowledged state among the last 8 the
//     server sent it, or against zeros (src = 0) when it has none; one dif
//     every 5 frames round robin (legacy) or one per frame to every client
//     with dst = server frame + 1 (modern);
//   - stak for every dif a client applies, and a re-ack of its newest state
//     when a dif's base is missing.
//
// Datagrams are dropped at the configured loss rate in both directions, except
// for the four join packets (the game's join has no retransmission, and the
// real lossy captures impaired only the play). Everything is deterministic
// for a given Config: the same seed gives the same bytes.
//
// The datagrams go to a PacketWriter, usually a CaptureWriter that frames
// them as Ethernet/IPv4/UDP in a pcap or pcapng file; the ground truth (the
// sha256 of every state the server sent and every state each client applied)
// goes to a TruthSink, in memory (Truth) or streamed to CSV files in the
// formats of the real captures' ground truth (CSVWriter).
package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// Config describes the game to generate.
type Config struct {
	Era      decode.Version // the wire version to generate
	Players  int            // number of clients, 1..7 (the server is player 0)
	Duration time.Duration  // game time to generate, from the server's start
	Loss     float64        // fraction of datagrams dropped, in [0, 1)
	Seed     int64          // seeds every random choice and the start time
	// LevelChange is when the level change of a rewind version happens,
	// counted from the start: 0 means half-way through Duration, a
	// negative value means no level change. The legacy era has none.
	LevelChange time.Duration
	// Faults are impairments injected for single clients (see Faults).
	Faults Faults
}

// MaxClients is the largest number of clients a game has.
const MaxClients = 7

// FrameTime is the duration of one game frame (40 frames a second).
const FrameTime = 25 * time.Millisecond

// ListenPort is the server's listening port, also bound by every client of
// the versions whose clients use the game's port.
const ListenPort = decode.ListenPort

// Validate reports whether the configuration can be generated.
func (c Config) Validate() error {
	switch {
	case !c.Era.Known():
		return fmt.Errorf("the version must be one of %s", strings.Join(decode.VersionNames(), ", "))
	case c.Players < 1 || c.Players > MaxClients:
		return fmt.Errorf("players must be 1..%d, not %d", MaxClients, c.Players)
	case c.Duration <= 0:
		return fmt.Errorf("duration must be positive, not %v", c.Duration)
	case !(c.Loss >= 0 && c.Loss < 1):
		return fmt.Errorf("loss must be in [0, 1), not %v", c.Loss)
	}
	return c.Faults.Validate(c.Players)
}

// Epoch is the wall-clock time of the server's start for a seed:
// 2026-01-01 00:00:00 UTC plus the seed (modulo 2^31) in seconds.
func Epoch(seed int64) time.Time {
	s := seed % (1 << 31)
	if s < 0 {
		s += 1 << 31
	}
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s) * time.Second)
}

// ServerAddr is the server's address; client n (1-based) is at 10.0.0.(n+1).
var ServerAddr = netip.AddrFrom4([4]byte{10, 0, 0, 1})

// ClientAddr returns the endpoint of client n (1-based) in the versions
// whose clients bind the game's port.
func ClientAddr(n int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + n)}), ListenPort)
}

// ClientAddrIn returns the endpoint of client n (1-based) in version v: on
// the game's port, or on a port of its own in the versions whose clients
// take one.
func ClientAddrIn(v decode.Version, n int) netip.AddrPort {
	a := ClientAddr(n)
	if i := v.Info(); i != nil && i.EphemeralClientPort {
		return netip.AddrPortFrom(a.Addr(), uint16(33000+(n*7919)%28000))
	}
	return a
}

// Summary counts what Generate did.
type Summary struct {
	Start, End   time.Time      // time stamps of the first and last datagram written
	Sent         int            // datagrams put on the wire
	Lost         int            // of them, dropped by the simulated loss
	Exempt       int            // of them, join packets that loss never drops
	ByName       map[string]int // datagrams written (not lost), per packet name
	LostByName   map[string]int // datagrams lost, per packet name
	Difs         int            // difs the server sent
	Keyframes    int            // of them, with src = 0
	Applied      int            // difs the clients applied
	ReAcks       int            // staks re-sent for a missing base
	LevelChanges int
	Frames       int            // server frames simulated
	FaultDrops   map[string]int // datagrams dropped by the injected faults, by "kind client"; inputs made late (Late) as "late client"
	Forgot       map[int]int    // times each client lost its states (Forget), by client
	Skipped      map[int]int    // frames each slow client skipped (Slow), by client
	Drops        []Drop         // players the server dropped for want of acknowledgements
}

// Drop is a player the server dropped: at server frame Frame of level
// sequence SLSN, game time At (ns since the server's start).
type Drop struct {
	Player, Frame, SLSN int
	At                  int64
}

// LossRate is the fraction of the datagrams that loss could drop that it
// did drop.
func (s *Summary) LossRate() float64 {
	if n := s.Sent - s.Exempt; n > 0 {
		return float64(s.Lost) / float64(n)
	}
	return 0
}

// Generate simulates the game of cfg, writing every datagram that is not
// lost to w in time order and the ground truth to truth (which may be nil).
// It holds at most statedif.History (8) states per client plus the current one, so
// memory does not grow with the duration.
func Generate(cfg Config, w PacketWriter, truth TruthSink) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if w == nil {
		return nil, errors.New("synth: no packet writer")
	}
	g, err := newGen(cfg, w, truth)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if err := g.run(); err != nil {
		return &g.sum, fmt.Errorf("synth: %w", err)
	}
	return &g.sum, nil
}

// msgKind is what a simulated datagram carries, so receivers need not
// decode the bytes again.
type msgKind uint8

const (
	mHello     msgKind = iota // 1234
	mHelloBack                // 5678
	mJoin                     // CJON / cjon: a color
	mJoinBack                 // SJON / sjon: a player, b frame, c entry pos, d level, e color, slsn
	mCdat                     // a player, b frame, c move
	mSdat                     // b frame, c start entry, d n
	mSdak                     // a player, b frame, c entry pos
	mSerr                     // b frame
	mStdf                     // dif, seq
	mStak                     // a player, b frame
	mPing                     // f0 t0
	mPong                     // f0 t0, f1 t1
	mPang                     // f1 t1
	mLog                      // a clog: nothing the server acts on
)

// difInfo describes one dif as its pieces travel.
type difInfo struct {
	src, dst int32
	count    int
	slsn     uint8
	level    int32
	sha      [32]byte
	doneAt   int32 // server frame at which the level ends, -1 outside the level-done phase
	doneNext int32 // the next level, in the level-done phase
}

type msg struct {
	at, order     int64 // arrival time; tie-breaker
	kind          msgKind
	from          netip.AddrPort
	a, b, c, d, e int32
	slsn          uint8
	hasSLSN       bool // a cdat or stak that carries the client's level sequence (slsn)
	seq           uint8
	f0, f1        float64
	dif           *difInfo
}

// inbox holds a node's datagrams in arrival order until it reads them.
// last is the latest arrival time: one host's link delivers in order.
type inbox struct {
	q    []msg
	last int64
}

func (ib *inbox) push(m msg) {
	i := len(ib.q)
	ib.q = append(ib.q, m)
	for i > 0 && (ib.q[i-1].at > m.at || ib.q[i-1].at == m.at && ib.q[i-1].order > m.order) {
		ib.q[i] = ib.q[i-1]
		i--
	}
	ib.q[i] = m
}

// take returns the datagrams that have arrived by now and removes them.
// The returned slice is valid until the next push.
func (ib *inbox) take(now int64, dst []msg) []msg {
	n := 0
	for n < len(ib.q) && ib.q[n].at <= now {
		n++
	}
	dst = append(dst[:0], ib.q[:n]...)
	ib.q = append(ib.q[:0], ib.q[n:]...)
	return dst
}

type node interface {
	tick(now int64) error
	tickOffset() int64
}

// gen is one run of the generator.
type gen struct {
	cfg Config
	era decode.Version
	// What the version does, asked once.
	moves     bool // inputs reach the others as game moves (sdat/sdak/serr)
	handshake bool // 1234/5678 before the join
	logs      bool // clients send a clog for every netgame log line
	// follow is how many pieces of the next level sequence a client sees
	// before it goes to the next level when it missed the level's end: the
	// first, in the versions whose pieces name the level (the client
	// loads it itself); 20 in the others.
	follow  int
	w       PacketWriter
	sink    TruthSink
	epoch   time.Time
	now     int64
	lastOut int64
	order   int64
	netRNG  *rand.Rand
	lossRNG *rand.Rand
	// faultRNG draws the random faults (Loss, Late), apart from the
	// game's own loss so that adding a fault leaves the rest as it was.
	faultRNG *rand.Rand
	owners   map[netip.AddrPort]*inbox
	packets  map[string]*decode.Packet
	buf      []byte
	sum      Summary
	srv      *server
	clients  []*client
	nodes    []node
	faults   bool // cfg.Faults has any
}

// rng returns an independent random stream for one purpose.
func rng(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream*0x9e3779b97f4a7c15+1))
}

func newGen(cfg Config, w PacketWriter, truth TruthSink) (*gen, error) {
	g := &gen{
		cfg: cfg, era: cfg.Era, w: w, sink: truth,
		moves:     cfg.Era.Sync() == decode.GameMoves,
		handshake: cfg.Era.Has(decode.KindHandshake),
		logs:      cfg.Era.Info().LogAlways,
		follow:    20,
		epoch:     Epoch(cfg.Seed),
		netRNG:    rng(cfg.Seed, 1),
		lossRNG:   rng(cfg.Seed, 2),
		faultRNG:  rng(cfg.Seed, 4),
		owners:    map[netip.AddrPort]*inbox{},
		packets:   map[string]*decode.Packet{},
		sum:       Summary{ByName: map[string]int{}, LostByName: map[string]int{}, FaultDrops: map[string]int{}, Forgot: map[int]int{}, Skipped: map[int]int{}},
		faults:    !cfg.Faults.empty(),
	}
	if l := cfg.Era.Kind(decode.KindDifPiece); l != nil && l.FieldByRole(decode.RoleLevel) >= 0 {
		g.follow = 1
	}
	srv, err := newServer(g)
	if err != nil {
		return nil, err
	}
	g.srv = srv
	g.nodes = append(g.nodes, srv)
	// Clients tick at distinct offsets inside each frame, join one after
	// the other, and each behave a little differently.
	crng := rng(cfg.Seed, 3)
	used := map[int64]bool{0: true}
	for n := 1; n <= cfg.Players; n++ {
		off := int64(0)
		for used[off] {
			off = int64(2+crng.IntN(21))*int64(time.Millisecond) + int64(crng.IntN(1000))*int64(time.Microsecond)
		}
		used[off] = true
		join := int64(150*time.Millisecond) + int64(n-1)*int64(250*time.Millisecond) + int64(crng.IntN(50))*int64(time.Millisecond)
		c := newClient(g, n, off, join, rng(cfg.Seed, uint64(10+n)))
		g.clients = append(g.clients, c)
		g.nodes = append(g.nodes, c)
	}
	slices.SortStableFunc(g.nodes, func(a, b node) int {
		switch {
		case a.tickOffset() < b.tickOffset():
			return -1
		case a.tickOffset() > b.tickOffset():
			return 1
		}
		return 0
	})
	return g, nil
}

// run ticks every node once per frame period, in offset order, until the
// duration is over.
func (g *gen) run() error {
	end := int64(g.cfg.Duration)
	for base := int64(0); base < end; base += int64(FrameTime) {
		for _, n := range g.nodes {
			t := base + n.tickOffset()
			if t >= end {
				continue
			}
			g.now = t
			if err := n.tick(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// packet returns the reusable packet of a name in the generator's version,
// with its group entries cleared.
func (g *gen) packet(name string) *decode.Packet {
	p := g.packets[name]
	if p == nil {
		p = decode.MustNew(g.era, name)
		g.packets[name] = p
	}
	p.Entries = p.Entries[:0]
	return p
}

// kind returns the reusable packet of kind k in the generator's version.
func (g *gen) kind(k decode.Kind) *decode.Packet { return g.packet(g.era.Kind(k).Name) }

// send puts one datagram on the wire now: it gets a time stamp after the
// previous one, may be lost, is written to the capture and is delivered to
// the inbox of the node that owns dst after a LAN latency.
func (g *gen) send(from, to netip.AddrPort, p *decode.Packet, m msg, exempt bool) error {
	t := max(g.now+int64(5+g.netRNG.IntN(30))*int64(time.Microsecond), g.lastOut+int64(2+g.netRNG.IntN(8))*int64(time.Microsecond))
	g.lastOut = t
	g.buf = decode.Encode(g.buf[:0], p)
	name := p.Layout.Name
	g.sum.Sent++
	if exempt {
		g.sum.Exempt++
	} else if g.cfg.Loss > 0 && g.lossRNG.Float64() < g.cfg.Loss {
		g.sum.Lost++
		g.sum.LostByName[name]++
		return nil
	} else if g.faults && g.faultDrop(from, to, name) {
		return nil
	}
	ts := g.epoch.Add(time.Duration(t))
	if err := g.w.WriteDatagram(ts, from, to, g.buf); err != nil {
		return err
	}
	if g.sum.Start.IsZero() {
		g.sum.Start = ts
	}
	g.sum.End = ts
	g.sum.ByName[name]++
	if ib := g.owners[to]; ib != nil {
		g.order++
		m.order = g.order
		lat := int64(120+g.netRNG.IntN(300)) * int64(time.Microsecond)
		late := int64(0)
		if g.faults {
			lat += g.cfg.Faults.delay(from, to)
			if m.kind == mCdat {
				late = g.lateDelay(from)
			}
		}
		m.at = max(t+lat, ib.last+int64(time.Microsecond))
		ib.last = m.at
		// An input made late (Late) is held back alone: what comes after
		// it arrives on time.
		m.at += late
		m.from = from
		ib.push(m)
	}
	return nil
}

// seconds is a simulated time in seconds.
func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// widen rounds v to float32, as the game's float telemetry is.
func widen(v float64) float64 { return float64(float32(v)) }
