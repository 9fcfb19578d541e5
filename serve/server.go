package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// Rules of the game's server (its rules for sending states are those of
// package statedif).
const (
	// MaxClients is how many clients a game server takes.
	MaxClients = 7
	// Idle is how long a joined client may stay silent before it is dropped.
	Idle = 10 * time.Second
)

// Limits bound what any peer can make the server do. The zero value of a
// field takes its default (DefaultLimits).
type Limits struct {
	// Burst is how many bytes a client is sent since its last
	// acknowledgement (or its join) before the server waits for one; the
	// states due meanwhile are not sent (the client was not taking them).
	Burst int
	// Window is Burst for a client that has acknowledged a state before:
	// how many bytes it is sent since its last acknowledgement.
	Window int
	// BurstTime is how long a client is sent states since its last
	// acknowledgement before the server waits for one.
	BurstTime time.Duration
	// AckTimeout drops a joined client that was sent a state and has
	// acknowledged nothing for this long: the legacy game drops a client
	// after 100 frames (2.5 s) without sdak.
	AckTimeout time.Duration
	// Handshake closes a handshake (1234) not followed by a join within it.
	Handshake time.Duration
	// Pending caps the handshakes open at once; a new one closes the
	// oldest.
	Pending int
	// PendingPerAddr caps the open handshakes of one source address; a
	// newer one closes its oldest.
	PendingPerAddr int
	// Idle drops a joined client that sends nothing at all for this long.
	Idle time.Duration
}

// DefaultLimits are the limits a Server takes for the zero fields of
// Options.Limits.
var DefaultLimits = Limits{
	Burst:          128 << 10,
	Window:         512 << 10,
	BurstTime:      time.Second,
	AckTimeout:     2500 * time.Millisecond,
	Handshake:      5 * time.Second,
	Pending:        64,
	PendingPerAddr: 8,
	Idle:           Idle,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	setD := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.Burst, d.Burst)
	set(&l.Window, d.Window)
	set(&l.Pending, d.Pending)
	set(&l.PendingPerAddr, d.PendingPerAddr)
	setD(&l.BurstTime, d.BurstTime)
	setD(&l.AckTimeout, d.AckTimeout)
	setD(&l.Handshake, d.Handshake)
	setD(&l.Idle, d.Idle)
	return l
}

// Options configure a Server.
type Options struct {
	// Speed divides the recorded times; 0 means 1.
	Speed float64
	// Start is the index of the first state served (see Recording.Find).
	Start int
	// Stop, when not 0, is the index of the state after the last one
	// served.
	Stop int
	// Loop serves the recording again and again; each round is a new
	// level sequence for the clients.
	Loop bool
	// Limits bound what a peer can make the server do.
	Limits Limits
	// Logf, when set, reports clients joining and leaving (under a flood,
	// ten lines of a kind, then one a second).
	Logf func(format string, a ...any)
}

// Counts are what became of the clients that are no longer served, and
// the handshakes not answered.
type Counts struct {
	Handshakes int // handshakes answered from a new socket
	Joins      int // joins accepted
	Finished   int // clients served the whole recording, then gone quiet
	TimedOut   int // handshakes not followed by a join in time
	Evicted    int // handshakes closed for a newer one (too many open)
	NoSocket   int // handshakes not answered: no socket to be had
	Refused    int // joins refused: the game was full
	Dropped    int // joined clients dropped: no acknowledgement in time, or silent
	Replaced   int // clients replaced by a new join from the same endpoint
}

// Server serves a Recording to live clients.
type Server struct {
	rec   *Recording
	opt   Options
	lim   Limits
	ln    *net.UDPConn
	start time.Time
	swept time.Time // the clients of the one socket were last checked for timeouts
	plan  []event   // what each client is sent, and when

	mu      sync.Mutex
	pending map[netip.AddrPort]*client // handshakes not joined yet
	joined  map[netip.AddrPort]*client
	live    []*client // pending and joined, in order of their handshakes
	counts  Counts
	logged  map[endReason]logBudget
	wg      sync.WaitGroup
}

// New returns a server that answers the clients that contact ln.
func New(rec *Recording, ln *net.UDPConn, opt Options) (*Server, error) {
	if opt.Speed < 0 {
		return nil, errors.New("speed must not be negative")
	}
	if opt.Speed == 0 {
		opt.Speed = 1
	}
	if opt.Stop == 0 {
		opt.Stop = len(rec.States)
	}
	if opt.Start < 0 || opt.Start >= opt.Stop || opt.Stop > len(rec.States) {
		return nil, fmt.Errorf("states %d to %d are outside the recording's %d states", opt.Start, opt.Stop, len(rec.States))
	}
	if rec.Era == decode.VersionUnknown {
		return nil, errors.New("the recording's era is not known")
	}
	s := &Server{
		rec: rec, opt: opt, lim: opt.Limits.withDefaults(), ln: ln, start: time.Now(),
		pending: map[netip.AddrPort]*client{}, joined: map[netip.AddrPort]*client{},
		logged: map[endReason]logBudget{},
	}
	s.plan = s.events()
	return s, nil
}

func (s *Server) logf(format string, a ...any) {
	if s.opt.Logf != nil {
		s.opt.Logf(format, a...)
	}
}

// logBudget limits the log lines of one kind: a flood of spoofed
// handshakes is counted in the status line, not logged line by line.
type logBudget struct {
	n      int
	window time.Time
}

// noisy reports whether a log line of kind r should be left out: after
// 10 of a kind, one a second.
func (s *Server) noisy(r endReason) bool {
	b := s.logged[r]
	defer func() { s.logged[r] = b }()
	if b.n < 10 {
		b.n++
		return false
	}
	if now := time.Now(); now.Sub(b.window) >= time.Second {
		b.window = now
		return false
	}
	return true
}

// Serve answers clients until ctx ends, then closes every client socket
// and returns. It does not close the listening socket.
func (s *Server) Serve(ctx context.Context) error {
	defer func() {
		s.mu.Lock()
		for _, c := range slices.Clone(s.live) {
			s.endLocked(c, endShutdown)
		}
		s.mu.Unlock()
		s.wg.Wait()
	}()
	buf := make([]byte, 2048)
	var pk decode.Packet
	for {
		s.ln.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, from, err := s.ln.ReadFromUDPAddrPort(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.ECONNREFUSED) {
				if !s.rec.Era.Has(decode.KindHandshake) {
					s.expireShared(time.Now())
				}
				continue
			}
			return fmt.Errorf("listening socket: %w", err)
		}
		if !s.rec.Era.Has(decode.KindHandshake) {
			s.shared(ctx, from, buf[:n], &pk)
			continue
		}
		if n != 4 || decode.KindOf(buf[:n]) != decode.KindHandshake {
			continue // only the handshake goes to the listening port
		}
		s.handshake(ctx, from)
	}
}

// shared answers a datagram on the one socket of a version without a
// handshake, from which the game's server serves every client: a join
// request from a new endpoint admits a client (within the limits of open
// handshakes), anything else goes to the endpoint's client. The clients
// that have gone quiet are ended here, as each client's own reading ends it
// in the versions with a socket per client.
func (s *Server) shared(ctx context.Context, from netip.AddrPort, b []byte, pk *decode.Packet) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	now := time.Now()
	s.expireShared(now)
	s.mu.Lock()
	c := s.joined[from]
	if c == nil {
		c = s.pending[from]
	}
	if c == nil && decode.KindOf(b) == decode.KindJoinRequest {
		c = s.admit(ctx, s.ln, from, now)
		if c != nil {
			c.shared = true
		}
	}
	s.mu.Unlock()
	if c != nil && !c.closed.Load() {
		c.handle(pk, b, now)
	}
}

// expireShared ends the clients of the one socket that have timed out;
// at most once every 100 ms.
func (s *Server) expireShared(now time.Time) {
	if now.Sub(s.swept) < 100*time.Millisecond {
		return
	}
	s.swept = now
	s.mu.Lock()
	cs := slices.Clone(s.live)
	s.mu.Unlock()
	for _, c := range cs {
		if r := c.expired(now); c.shared && r != endNone {
			s.end(c, r)
		}
	}
}

// handshake answers a 1234 from a new socket for the client, as the game
// does; the retries of a handshake not yet joined are answered from the
// same socket. A joined client's endpoint may shake hands again (the client
// started over): its new join replaces it.
func (s *Server) handshake(ctx context.Context, from netip.AddrPort) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.pending[from]
	if c != nil {
		c.mu.Lock()
		c.shook = now // a retry: the client is still there
		c.mu.Unlock()
		c.send(s.handshakeReply())
		return
	}
	la := s.ln.LocalAddr().(*net.UDPAddr)
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: la.IP})
	if err != nil {
		s.counts.NoSocket++
		if !s.noisy(endNoSocket) {
			s.logf("client %s: cannot open a socket: %v", from, err)
		}
		return
	}
	c = s.admit(ctx, conn, from, now)
	s.wg.Add(1)
	go c.read()
	c.send(s.handshakeReply())
}

// admit opens a client of endpoint from, served from conn (its own socket
// after a handshake, or the server's one socket): the oldest open one of
// the address, or of all when too many are open, makes way for it, so that
// under a flood of spoofed handshakes or joins a real client still has a
// while to join. s.mu is held.
func (s *Server) admit(ctx context.Context, conn *net.UDPConn, from netip.AddrPort, now time.Time) *client {
	var oldest, oldestOfAddr *client
	same := 0
	for _, p := range s.pending {
		if oldest == nil || p.seq < oldest.seq {
			oldest = p
		}
		if p.addr.Addr() == from.Addr() {
			same++
			if oldestOfAddr == nil || p.seq < oldestOfAddr.seq {
				oldestOfAddr = p
			}
		}
	}
	switch {
	case same >= s.lim.PendingPerAddr:
		s.endLocked(oldestOfAddr, endEvicted)
	case len(s.pending) >= s.lim.Pending:
		s.endLocked(oldest, endEvicted)
	}
	c := newClient(ctx, s, conn, from, now)
	s.counts.Handshakes++
	c.seq = s.counts.Handshakes
	s.pending[from] = c
	s.live = append(s.live, c)
	if !s.noisy(endNone) {
		s.logf("client %s: handshake, served from %s", from, conn.LocalAddr())
	}
	return c
}

// handshakeReply is the version's answer to a handshake (the legacy game
// sends a NUL after the name).
func (s *Server) handshakeReply() []byte {
	return decode.Encode(nil, decode.MustNewKind(s.rec.Era, decode.KindHandshakeReply))
}

// endReason is why a client stopped being served.
type endReason int

// logJoined is the kind of the log lines of joins (see Server.noisy).
const logJoined endReason = -1

const (
	endNone endReason = iota
	endShutdown
	endTimedOut
	endEvicted
	endNoSocket
	endRefused
	endNoAck
	endSilent
	endFinished
	endReplaced
	endFailed
)

var endWhy = map[endReason]string{
	endShutdown: "server stopped",
	endTimedOut: "handshake not followed by a join, closed",
	endEvicted:  "handshake closed for a newer one: too many open",
	endRefused:  "join refused: the game is full",
	endNoAck:    "no acknowledgement for %v, dropped",
	endSilent:   "silent for %v, dropped",
	endFinished: "served the whole recording, gone quiet",
	endReplaced: "replaced by a new join from the same endpoint",
	endFailed:   "cannot be served",
}

// end stops serving c and releases everything it holds.
func (s *Server) end(c *client, r endReason) {
	s.mu.Lock()
	s.endLocked(c, r)
	s.mu.Unlock()
}

// endLocked is end with s.mu held.
func (s *Server) endLocked(c *client, r endReason) {
	if c.closed.Swap(true) {
		return
	}
	c.cancel()
	if !c.shared {
		c.conn.Close()
	}
	if s.pending[c.addr] == c {
		delete(s.pending, c.addr)
	}
	if s.joined[c.addr] == c {
		delete(s.joined, c.addr)
	}
	s.live = slices.DeleteFunc(s.live, func(x *client) bool { return x == c })
	switch r {
	case endTimedOut:
		s.counts.TimedOut++
	case endEvicted:
		s.counts.Evicted++
	case endRefused:
		s.counts.Refused++
	case endNoAck, endSilent, endFailed:
		s.counts.Dropped++
	case endFinished:
		s.counts.Finished++
	case endReplaced:
		s.counts.Replaced++
	}
	if r == endShutdown || s.noisy(r) {
		return
	}
	why := endWhy[r]
	switch r {
	case endNoAck:
		why = fmt.Sprintf(why, s.lim.AckTimeout)
	case endSilent:
		why = fmt.Sprintf(why, s.lim.Idle)
	}
	s.logf("client %s: %s", c.addr, why)
}

// ClientStatus is how one client is doing.
type ClientStatus struct {
	Client   netip.AddrPort // the client's endpoint
	Server   netip.AddrPort // the server socket that serves it
	Player   int
	Joined   bool
	Closed   bool
	Sent     int   // states sent
	Round    int   // loop round, from 0
	SentSLSN int   // level sequence (on the wire) of the last state sent
	SentAt   int32 // frame of the last state sent
	Acks     int   // stak received
	AckSLSN  int   // level sequence of the newest state acknowledged
	AckFrame int32 // newest frame acknowledged, -1 for none
	Behind   int32 // frames between the last state sent and the newest acknowledged (same level)
	// Keyframes are the states sent against an all-zero base.
	Keyframes int
	Bytes     int // bytes sent after the join reply: stdf, and sdat in the legacy era
	// Held are the states due while the client had not acknowledged the
	// ones before: not sent (see Limits.Burst).
	Held int
	Done bool
}

// Status returns the status of the clients being served (joined, or with
// a handshake open), in order of their handshakes.
func (s *Server) Status() []ClientStatus {
	s.mu.Lock()
	cs := slices.Clone(s.live)
	s.mu.Unlock()
	out := make([]ClientStatus, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.status())
	}
	return out
}

// Counts returns what became of the clients no longer served.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}
