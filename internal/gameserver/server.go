package gameserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

// Options configure a Server.
type Options struct {
	// Version is the game's wire version (modern when VersionUnknown):
	// in the versions without a handshake every client is served from
	// the listening socket.
	Version decode.Version
	Seed    int64 // picks the level (see NewGame)
	Rule    Rule  // how inputs are entered (the game's, AtFrame, by default)
	// LevelDone, when not 0, is the frame the level-done phase starts
	// in (see Game.ChangeLevel).
	LevelDone int32
	// FrameTime is the length of a frame; 0 means the game's 25 ms. Tests
	// may run the game faster: the rules hold in frames, not seconds.
	FrameTime time.Duration
	// Lockstep makes the server wait, before each frame, for the
	// remote-control client's keep-alive (rctl 0) after the previous
	// frame's snfo, and for every request it says was sent before it (its
	// value counts the handshakes, joins, inputs and file requests sent
	// to the server since the remote-control client joined), for at
	// most a second. The server then reads every input in the frame it was
	// sent for however busy the machine is, and can run much faster than
	// real time.
	Lockstep bool
}

type datagram struct {
	from    netip.AddrPort
	payload []byte
	hello   bool
}

// Server is a Game on UDP in real time: it listens for 1234 on one socket
// and answers each new client from a socket of its own, reads what arrived
// at the start of every frame and runs the frame.
type Server struct {
	opt   Options
	ln    *net.UDPConn
	game  *Game
	in    chan datagram
	mu    sync.Mutex
	conns map[netip.AddrPort]*net.UDPConn
	wg    sync.WaitGroup
	// lockstep: requests received (handshakes, joins, inputs, file
	// requests), the count the newest keep-alive says were sent, and
	// whether one came since the last frame
	received, want int64
	kept           bool
	ticked         bool // an snfo went out after the last frame
}

// Listen opens the server's listening socket on addr ("127.0.0.1:0" for
// any free port).
func Listen(addr string, opt Options) (*Server, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("gameserver: %w", err)
	}
	ln, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("gameserver: %w", err)
	}
	if opt.FrameTime <= 0 {
		opt.FrameTime = synth.FrameTime
	}
	s := &Server{opt: opt, ln: ln, in: make(chan datagram, 4096), conns: map[netip.AddrPort]*net.UDPConn{}}
	s.game = NewGame(opt.Version, opt.Seed, opt.Rule, s.sendTo)
	s.game.ChangeLevel(opt.LevelDone)
	return s, nil
}

// Addr is the listening socket's address.
func (s *Server) Addr() netip.AddrPort { return s.ln.LocalAddr().(*net.UDPAddr).AddrPort() }

func (s *Server) sendTo(to netip.AddrPort, payload []byte) {
	s.mu.Lock()
	c := s.conns[to]
	s.mu.Unlock()
	if c == nil && !s.game.Version().Has(decode.KindHandshake) {
		c = s.ln // the one socket
	}
	if c != nil {
		c.WriteToUDPAddrPort(payload, to)
	}
}

// read forwards every datagram of one socket to the frame loop.
func (s *Server) read(c *net.UDPConn, hello bool) {
	defer s.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		s.in <- datagram{from: from, payload: append([]byte(nil), buf[:n]...), hello: hello}
	}
}

// Run runs the game until ctx is done or frames frames were run (0: no
// limit), then closes every socket.
func (s *Server) Run(ctx context.Context, frames int32) error {
	s.wg.Add(1)
	go s.read(s.ln, true)
	defer func() {
		s.ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	}()
	start := time.Now()
	t := time.NewTimer(0)
	defer t.Stop()
	for n := int32(0); frames == 0 || n < frames; n++ {
		// Frames start on a fixed grid, but a server that fell behind
		// (a busy machine) starts a new grid rather than running the
		// missed frames back to back: clients always get half a frame
		// to answer a frame.
		due := start.Add(time.Duration(n) * s.opt.FrameTime)
		if late := time.Since(due); late > s.opt.FrameTime/2 {
			start = start.Add(late)
			due = due.Add(late)
		}
		t.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s.drain(ctx)
		if err := s.game.Step(); err != nil {
			return err
		}
		s.ticked = s.game.remote()
	}
	return nil
}

// drain handles every datagram that has arrived. In lockstep the game
// first waits for a remote-control client to join, and then, before every
// frame, for its keep-alive.
func (s *Server) drain(ctx context.Context) {
	for s.opt.Lockstep && !s.game.remote() {
		// The clock is not there yet: the game waits for it. What it
		// sent before it joined is not counted: the keep-alives count
		// from its join on (it may have called before the server was up).
		select {
		case d := <-s.in:
			s.handle(d)
			s.received = 0
		case <-ctx.Done():
			return
		}
	}
	if s.opt.Lockstep && s.ticked {
		limit := time.NewTimer(time.Second)
		defer limit.Stop()
		for !s.kept || s.received < s.want {
			select {
			case d := <-s.in:
				s.handle(d)
			case <-limit.C:
				s.kept = true
				s.want = 0
			case <-ctx.Done():
				return
			}
		}
		s.kept = false
	}
	for {
		select {
		case d := <-s.in:
			s.handle(d)
		default:
			return
		}
	}
}

func (s *Server) handle(d datagram) {
	if s.opt.Lockstep {
		var p decode.Packet
		if decode.Decode(&p, d.payload, s.game.Version()) == nil && p.Kind() == decode.KindRemoteCommand && p.Int("command") == 0 {
			s.kept, s.want = true, int64(p.Values[p.Layout.Field("value")].Float)
			return
		}
		switch decode.KindOf(d.payload) {
		case decode.KindHandshake, decode.KindRemoteJoin, decode.KindJoinRequest, decode.KindInput, decode.KindFileRequest:
			s.received++
		}
	}
	if !d.hello || !s.game.Version().Has(decode.KindHandshake) {
		s.game.Receive(d.from, d.payload)
		return
	}
	if decode.KindOf(d.payload) != decode.KindHandshake {
		return
	}
	s.mu.Lock()
	c := s.conns[d.from]
	if c == nil {
		var err error
		c, err = net.ListenUDP("udp", &net.UDPAddr{IP: s.ln.LocalAddr().(*net.UDPAddr).IP})
		if err != nil {
			s.mu.Unlock()
			return
		}
		s.conns[d.from] = c
		s.wg.Add(1)
		go s.read(c, false)
	}
	s.mu.Unlock()
	s.game.Hello(d.from)
	c.WriteToUDPAddrPort(encode(s.game.packet(decode.KindHandshakeReply)), d.from)
}

// Rewinds is how many late inputs made the server simulate frames again;
// call it after Run returned.
func (s *Server) Rewinds() int { return s.game.Rewinds }
