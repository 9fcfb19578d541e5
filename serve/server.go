package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
)

// The game's constants for sending states.
const (
	// History is how many states the server keeps per client as bases.
	History = 8
	// PieceSize is the largest stdf piece (the protocol's, decode.PieceSize).
	PieceSize = decode.PieceSize
	// ZlibLevel is the game's default compression level for difs.
	ZlibLevel = 7
	// MaxClients is how many clients a game server takes.
	MaxClients = 7
	// Idle is how long a client may stay silent before it is dropped.
	Idle = 10 * time.Second
)

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
	// Logf, when set, reports clients joining and leaving.
	Logf func(format string, a ...any)
}

// Server serves a Recording to live clients.
type Server struct {
	rec   *Recording
	opt   Options
	ln    *net.UDPConn
	start time.Time

	mu      sync.Mutex
	clients map[netip.AddrPort]*client
	order   []*client
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
	if rec.Era == decode.EraUnknown {
		return nil, errors.New("the recording's era is not known")
	}
	return &Server{rec: rec, opt: opt, ln: ln, start: time.Now(), clients: map[netip.AddrPort]*client{}}, nil
}

func (s *Server) logf(format string, a ...any) {
	if s.opt.Logf != nil {
		s.opt.Logf(format, a...)
	}
}

// Serve answers clients until ctx ends, then closes every client socket
// and returns. It does not close the listening socket.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		s.wg.Wait()
	}()
	buf := make([]byte, 2048)
	for {
		s.ln.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, from, err := s.ln.ReadFromUDPAddrPort(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.ECONNREFUSED) {
				continue
			}
			return fmt.Errorf("listening socket: %w", err)
		}
		if n != 4 || string(buf[:4]) != "1234" {
			continue // only the handshake goes to the listening port
		}
		s.handshake(ctx, from)
	}
}

// handshake answers a 1234 from a new socket for the client, as the game
// does (its retries are answered from the same socket).
func (s *Server) handshake(ctx context.Context, from netip.AddrPort) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	s.mu.Lock()
	c := s.clients[from]
	if c != nil && c.joined.Load() {
		c.close() // the client starts over
		c = nil
	}
	if c == nil {
		la := s.ln.LocalAddr().(*net.UDPAddr)
		conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: la.IP})
		if err != nil {
			s.mu.Unlock()
			s.logf("client %s: cannot open a socket: %v", from, err)
			return
		}
		conn.SetWriteBuffer(1 << 20)
		c = newClient(s, conn, from)
		s.clients[from] = c
		s.order = append(s.order, c)
		s.wg.Add(2)
		go c.read(ctx)
		go c.play(ctx)
		s.logf("client %s: handshake, served from %s", from, conn.LocalAddr())
	}
	s.mu.Unlock()
	reply := []byte("5678")
	if s.rec.Era == decode.Legacy {
		reply = append(reply, 0) // the legacy game sends the NUL too
	}
	c.send(reply)
}

// active counts the joined clients that are still being served.
func (s *Server) active() int {
	n := 0
	for _, c := range s.clients {
		if c.joined.Load() && !c.closed.Load() {
			n++
		}
	}
	return n
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
	Bytes     int // stdf bytes sent
	Done      bool
}

// Status returns every client's status, in order of their handshakes.
func (s *Server) Status() []ClientStatus {
	s.mu.Lock()
	cs := slices.Clone(s.order)
	s.mu.Unlock()
	out := make([]ClientStatus, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.status())
	}
	return out
}

// base is a state kept as a possible base for a client's next dif.
type base struct {
	slsn  int
	frame int32
	data  []byte
}

// client is one live client and its own bases.
type client struct {
	s      *Server
	conn   *net.UDPConn
	addr   netip.AddrPort
	joined atomic.Bool
	closed atomic.Bool
	joinCh chan struct{}
	once   sync.Once

	mu   sync.Mutex
	hist [History]base
	used int // history entries filled
	ack  int // index in hist of the state last acknowledged, -1 for none
	st   ClientStatus
}

func (c *client) send(p []byte) int { n, _ := c.conn.WriteToUDPAddrPort(p, c.addr); return n }

func newClient(s *Server, conn *net.UDPConn, addr netip.AddrPort) *client {
	c := &client{s: s, conn: conn, addr: addr, joinCh: make(chan struct{}), ack: -1}
	c.st = ClientStatus{Client: addr, Server: conn.LocalAddr().(*net.UDPAddr).AddrPort(), Player: s.rec.Player, AckFrame: -1}
	return c
}

func (c *client) close() {
	c.once.Do(func() {
		c.closed.Store(true)
		c.conn.Close()
	})
}

func (c *client) status() ClientStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	st.Joined, st.Closed = c.joined.Load(), c.closed.Load()
	if st.AckFrame >= 0 && st.AckSLSN == st.SentSLSN {
		st.Behind = st.SentAt - st.AckFrame
	} else {
		st.Behind = -1
	}
	return st
}

// read answers the client's packets on its own socket.
func (c *client) read(ctx context.Context) {
	defer c.s.wg.Done()
	defer c.close()
	era := c.s.rec.Era
	buf := make([]byte, 2048)
	var pk decode.Packet
	last := time.Now()
	for ctx.Err() == nil {
		c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if c.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			if time.Since(last) > Idle {
				c.s.logf("client %s: silent for %v, dropped", c.addr, Idle)
				return
			}
			continue
		}
		if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != c.addr {
			continue
		}
		last = time.Now()
		if decode.Decode(&pk, buf[:n], era) != nil {
			continue
		}
		switch pk.Layout.Name {
		case "cjon", "CJON":
			c.join(&pk)
		case "stak":
			fr, _ := pk.Frame()
			c.acked(int32(fr))
		case "ping":
			i := pk.Layout.Field("t0")
			if i < 0 || i >= len(pk.Values) {
				continue
			}
			p := decode.MustNew(era, "pong")
			p.SetFloat("t0", pk.Values[i].Float).SetFloat("t1", time.Since(c.s.start).Seconds())
			c.send(decode.Encode(nil, p))
		}
	}
}

// join answers a join request with the recorded join reply of the player.
func (c *client) join(req *decode.Packet) {
	s := c.s
	rec := s.rec
	era := rec.Era
	name := "sjon"
	if era == decode.Legacy {
		name = "SJON"
	}
	var p decode.Packet
	if rec.Join == nil || decode.Decode(&p, rec.Join, era) != nil {
		p = *decode.MustNew(era, name)
		p.Set("color", req.Int("color"))
		if era == decode.Legacy {
			p.Set("fps", 40)
		}
	}
	first := rec.States[s.opt.Start]
	p.Set("frame", int64(first.Frame)).Set("player", int64(rec.Player))
	if era == decode.Modern {
		p.Set("slsn", int64(first.SLSN&0xff))
	}
	s.mu.Lock()
	full := !c.joined.Load() && s.active() >= MaxClients
	s.mu.Unlock()
	if full {
		p.Set("player", 99)
		c.send(decode.Encode(nil, &p))
		c.close()
		return
	}
	c.send(decode.Encode(nil, &p))
	if !c.joined.Load() {
		c.joined.Store(true)
		close(c.joinCh)
		s.logf("client %s: joined as player %d", c.addr, rec.Player)
	}
}

// acked takes a stak: the state of that frame becomes the client's base if
// the server still has it, otherwise the next dif is a keyframe (as the game
// does).
func (c *client) acked(frame int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Acks++
	c.ack = -1
	for i := range c.used {
		if c.hist[i].frame == frame && c.hist[i].slsn == c.st.SentSLSN {
			c.ack = i
			if frame > c.st.AckFrame || c.st.AckSLSN != c.st.SentSLSN {
				c.st.AckFrame, c.st.AckSLSN = frame, c.st.SentSLSN
			}
		}
	}
}

// event is one thing to send at a time.
type event struct {
	at    time.Duration
	state int // index of a state, -1 for a packet
	pkt   []byte
}

// play sends the recording to the client once it has joined.
func (c *client) play(ctx context.Context) {
	defer c.s.wg.Done()
	defer c.close()
	select {
	case <-ctx.Done():
		return
	case <-c.joinCh:
	}
	s := c.s
	rec := s.rec
	first := rec.States[s.opt.Start].At
	var events []event
	for i := s.opt.Start; i < s.opt.Stop; i++ {
		events = append(events, event{at: rec.States[i].At - first, state: i})
	}
	for _, t := range rec.Sdat {
		if t.At >= first && t.At <= rec.States[s.opt.Stop-1].At {
			events = append(events, event{at: t.At - first, state: -1, pkt: t.Payload})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return int(a.at - b.at) })
	span := events[len(events)-1].at + 25*time.Millisecond
	levels := rec.States[s.opt.Stop-1].Level - rec.States[s.opt.Start].Level + 1

	sp := newSender(c)
	cur := rec.Cursor()
	origin := time.Now()
	var data []byte
	var slsn, round int
	for round = 0; ; round++ {
		for _, e := range events {
			due := origin.Add(time.Duration(float64(e.at) / s.opt.Speed))
			if !sleepUntil(ctx, due) || c.closed.Load() {
				return
			}
			if e.state < 0 {
				c.send(e.pkt)
				continue
			}
			var err error
			if data, err = rec.State(e.state, cur); err != nil {
				s.logf("client %s: %v", c.addr, err)
				return
			}
			st := rec.States[e.state]
			slsn = (st.SLSN + round*levels) & 0xff
			if rec.Era == decode.Legacy {
				slsn = st.Level + round*levels
			}
			sp.state(slsn, st.Frame, data, round)
		}
		if !s.opt.Loop {
			break
		}
		origin = origin.Add(time.Duration(float64(span) / s.opt.Speed))
	}
	// The game goes on showing the last state: send it again until the
	// client has it.
	end := rec.States[s.opt.Stop-1]
	for range 50 {
		c.mu.Lock()
		has := c.st.AckSLSN == slsn && c.st.AckFrame == end.Frame
		c.mu.Unlock()
		if has || !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) || c.closed.Load() {
			break
		}
		sp.state(slsn, end.Frame, data, round)
	}
	c.mu.Lock()
	c.st.Done = true
	c.mu.Unlock()
	// Keep answering acks and pings until the client goes quiet.
	<-ctx.Done()
}

// sleepUntil sleeps until due and reports false if ctx ended first.
func sleepUntil(ctx context.Context, due time.Time) bool {
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// stateSender makes a client's difs: it keeps the client's bases, the dif
// and compression buffers.
type stateSender struct {
	c    *client
	zero []byte
	dif  []byte
	z    bytes.Buffer
	zw   *zlib.Writer
	pkt  []byte
	p    *decode.Packet
}

func newSender(c *client) *stateSender {
	zw, _ := zlib.NewWriterLevel(io.Discard, ZlibLevel)
	return &stateSender{c: c, zw: zw, p: decode.MustNew(c.s.rec.Era, "stdf")}
}

// state sends one state: it keeps it as a base, makes the dif against the
// client's acknowledged base (zeros if none) and sends its pieces.
func (sp *stateSender) state(slsn int, frame int32, data []byte, round int) {
	c := sp.c
	c.mu.Lock()
	if slsn != c.st.SentSLSN || c.st.Sent == 0 {
		// A new level sequence: frames start over, old bases are void.
		c.used, c.ack = 0, -1
	}
	// Keep the state as a base, in place of the oldest (as the game does).
	slot := -1
	for i := range c.used {
		if c.hist[i].frame == frame {
			slot = i
		}
	}
	if slot < 0 {
		if c.used < History {
			slot = c.used
			c.used++
		} else {
			slot = 0
			for i := range c.used {
				if c.hist[i].frame < c.hist[slot].frame {
					slot = i
				}
			}
		}
	}
	if slot == c.ack && c.hist[slot].frame != frame {
		c.ack = -1 // the acknowledged state was replaced
	}
	h := &c.hist[slot]
	h.slsn, h.frame = slsn, frame
	h.data = append(h.data[:0], data...)
	var baseData []byte
	var src int32
	if c.ack >= 0 {
		baseData, src = c.hist[c.ack].data, c.hist[c.ack].frame
	}
	c.st.Sent++
	c.st.Round = round
	c.st.SentSLSN, c.st.SentAt = slsn, frame
	if src == 0 {
		c.st.Keyframes++
	}
	if baseData == nil {
		if len(sp.zero) != len(data) {
			sp.zero = make([]byte, len(data))
		}
		baseData = sp.zero
	}
	if len(sp.dif) != len(data) {
		sp.dif = make([]byte, len(data))
	}
	replay.Sub(sp.dif, baseData, data) // dif = base − new
	c.mu.Unlock()

	sp.z.Reset()
	sp.zw.Reset(&sp.z)
	sp.zw.Write(sp.dif)
	sp.zw.Close()
	z := sp.z.Bytes()
	count := len(z)/PieceSize + 1
	p := sp.p
	p.Set("src", int64(src)).Set("dst", int64(frame)).Set("count", int64(count))
	if c.s.rec.Era == decode.Modern {
		p.Set("slsn", int64(slsn&0xff))
	}
	sent := 0
	for seq := range count {
		start := seq * PieceSize
		end := min(start+PieceSize, len(z))
		p.Set("seq", int64(seq)).Set("start", int64(start)).SetBytes("data", z[start:end])
		sp.pkt = decode.Encode(sp.pkt[:0], p)
		sent += c.send(sp.pkt)
	}
	c.mu.Lock()
	c.st.Bytes += sent
	c.mu.Unlock()
}
