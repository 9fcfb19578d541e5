package serve

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
)

// arena is a server on loopback with an honest client watching the whole
// recording while hostile peers do their worst.
type arena struct {
	t           *testing.T
	rec         *Recording
	start, stop int // the states served
	srv         *Server
	listen      netip.AddrPort
	ctx         context.Context
}

// startArena serves rec at speed with the limits on a loopback socket until
// the test ends.
func startArena(t *testing.T, rec *Recording, speed float64, lim Limits) *arena {
	t.Helper()
	return startArenaOpt(t, rec, Options{Speed: speed, Limits: lim})
}

// startArenaOpt is startArena with all the options.
func startArenaOpt(t *testing.T, rec *Recording, opt Options) *arena {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	opt.Logf = func(f string, a ...any) { t.Logf(f, a...) }
	srv, err := New(rec, ln, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		ln.Close()
	})
	stop := opt.Stop
	if stop == 0 {
		stop = len(rec.States)
	}
	return &arena{t: t, rec: rec, start: opt.Start, stop: stop, srv: srv, listen: ln.LocalAddr().(*net.UDPAddr).AddrPort(), ctx: ctx}
}

// honest joins a protocol-true client (from local, when valid) and watches
// the whole recording in the background; the returned function waits for it
// and checks that it applied every state, each the recorded one.
func (a *arena) honest(local netip.AddrPort) func() {
	t := a.t
	t.Helper()
	var c *gameclient.Client
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err = gameclient.Join(a.ctx, a.listen.String(), gameclient.Options{Era: a.rec.Era, Color: 2, Hostname: "honest", Local: local})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // refused (full) or unanswered: try again
	}
	if err != nil {
		t.Fatalf("honest client: join: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(a.ctx, 3*time.Second, lastOf(a.rec, a.start, a.stop, 1)) }()
	return func() {
		t.Helper()
		defer c.Close()
		if err := <-done; err != nil {
			t.Errorf("honest client: %v after %d states", err, len(c.Applied))
		}
		// The server held nothing back from it and still serves it.
		var st *ClientStatus
		for _, s := range a.srv.Status() {
			if s.Client == c.LocalAddr() {
				st = &s
			}
		}
		switch {
		case st == nil:
			t.Errorf("honest client %s is no longer served: %+v", c.LocalAddr(), a.srv.Counts())
		case st.Held > 0:
			t.Errorf("honest client: %d states held back", st.Held)
		}
		checkExact(t, a.rec, a.start, a.stop, c)
	}
}

// warm waits until the first client has been sent more states than the
// recording's cache holds: the server's memory no longer grows with them.
func (a *arena) warm() {
	for range 200 {
		if st := a.srv.Status(); len(st) > 0 && st[0].Sent > cacheSize+8 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.t.Fatal("the honest client is not being served")
}

// checkExact checks that a client applied every state served (start to
// stop), each with the recorded sha256.
func checkExact(t *testing.T, rec *Recording, start, stop int, c *gameclient.Client) {
	t.Helper()
	type key struct {
		level int
		frame int32
	}
	want := map[key][32]byte{}
	for _, s := range rec.States[start:stop] {
		want[key{s.Level - rec.States[start].Level, s.Frame}] = s.Sum
	}
	for _, a := range c.Applied {
		if sum, ok := want[key{a.Level, a.Dst}]; !ok || sum != a.Sum {
			t.Fatalf("honest client: level %d frame %d is not the recorded state", a.Level, a.Dst)
		}
	}
	// Every state was sent (no state held back, see arena.honest); on a
	// busy machine the kernel may drop a few datagrams the client was too
	// slow to read, as a lossy network would.
	if n, want := len(c.Applied), stop-start; n != want {
		if n < want*9/10 {
			t.Errorf("honest client applied %d states, want all %d", n, want)
		} else {
			t.Logf("honest client applied %d of %d states: some datagrams lost", n, want)
		}
	}
}

// peer is a hostile or careless game client speaking raw UDP.
type peer struct {
	conn   *net.UDPConn
	era    decode.Version
	server netip.AddrPort // its server socket, from the 5678
	sent   atomic.Int64
	recv   atomic.Int64
	stdf   atomic.Int64
	last   atomic.Int32 // dst of the last stdf piece
}

// newPeer binds a peer to local (an ephemeral port of 127.0.0.1 when not
// valid).
func newPeer(t *testing.T, era decode.Version, local netip.AddrPort) *peer {
	t.Helper()
	if !local.IsValid() {
		local = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0)
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(local))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &peer{conn: conn, era: era}
}

func (p *peer) addr() netip.AddrPort { return p.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (p *peer) sendTo(to netip.AddrPort, b []byte) {
	if n, err := p.conn.WriteToUDPAddrPort(b, to); err == nil {
		p.sent.Add(int64(n))
	}
}

// handshake sends 1234 to listen until a 5678 comes back.
func (p *peer) handshake(listen netip.AddrPort) error {
	buf := make([]byte, 2048)
	for range 10 {
		p.sendTo(listen, []byte("1234"))
		p.conn.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
		for {
			n, from, err := p.conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			if n >= 4 && string(buf[:4]) == "5678" && from != p.server {
				p.server = from // a new socket: not a late answer to the last handshake
				return nil
			}
		}
	}
	return errors.New("no 5678")
}

// join sends one join request to its server socket.
func (p *peer) join() {
	req := make([]byte, 21)
	copy(req, "cjon")
	if p.era == decode.Legacy {
		copy(req, "CJON")
	}
	req[4] = 7
	copy(req[5:], "squatter")
	p.sendTo(p.server, req)
}

// listen counts what the peer receives until ctx ends.
func (p *peer) listen(ctx context.Context) {
	buf := make([]byte, 2048)
	for ctx.Err() == nil {
		p.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, _, err := p.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			continue
		}
		p.recv.Add(int64(n))
		if n >= 12 && string(buf[:4]) == "stdf" {
			p.stdf.Add(1)
			var pk decode.Packet
			if decode.Decode(&pk, buf[:n], p.era) == nil {
				p.last.Store(int32(pk.Int("dst")))
			}
		}
	}
}

// stak acknowledges frame to its server socket.
func (p *peer) stak(frame int32) {
	pk := decode.MustNew(p.era, "stak")
	if p.era == decode.Legacy {
		pk.Set("frame", int64(frame))
	} else {
		pk.Set("ack_frame", int64(frame)).Set("client_frame", int64(frame))
	}
	p.sendTo(p.server, decode.Encode(nil, pk))
}

// maxDif bounds the stdf bytes of one state (the samples' keyframes are
// under 8 KB).
var maxDif = int64(8 * (decode.Modern.PieceSize() + 23))

// quickLimits are the default limits with timeouts short enough for tests.
var quickLimits = Limits{AckTimeout: time.Second, Handshake: 300 * time.Millisecond}

// goroutines waits for the number of goroutines to come down to at most
// want, and returns it.
func goroutines(want int) int {
	n := runtime.NumGoroutine()
	for range 50 {
		if n <= want {
			break
		}
		time.Sleep(20 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// keepTalking sends, every 50 ms until ctx ends, what costs nothing and
// proves nothing: a ping, a stak of a frame never sent, an sdak of game
// moves never sent.
func (p *peer) keepTalking(ctx context.Context) {
	for ctx.Err() == nil {
		if p.era == decode.Modern {
			ping := decode.MustNew(p.era, "ping")
			ping.SetFloat("t0", 1)
			p.sendTo(p.server, decode.Encode(nil, ping))
		} else {
			sdak := decode.MustNew(p.era, "sdak")
			sdak.Set("frame", 1).Set("entry_pos", 1<<30)
			p.sendTo(p.server, decode.Encode(nil, sdak))
		}
		p.stak(1 << 30)
		time.Sleep(50 * time.Millisecond)
	}
}
