package serve

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
	"github.com/pmdump/pmdump/internal/realcap"
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
	if len(c.Applied) != stop-start {
		t.Errorf("honest client applied %d states, want all %d", len(c.Applied), stop-start)
	}
}

// peer is a hostile or careless game client speaking raw UDP.
type peer struct {
	conn   *net.UDPConn
	era    decode.Era
	server netip.AddrPort // its server socket, from the 5678
	sent   atomic.Int64
	recv   atomic.Int64
	stdf   atomic.Int64
	last   atomic.Int32 // dst of the last stdf piece
}

// newPeer binds a peer to local (an ephemeral port of 127.0.0.1 when not
// valid).
func newPeer(t *testing.T, era decode.Era, local netip.AddrPort) *peer {
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
const maxDif = 8 * (PieceSize + 23)

// quickLimits are the default limits with timeouts short enough for tests.
var quickLimits = Limits{AckTimeout: time.Second, Handshake: 300 * time.Millisecond}

func TestServeNoAckBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input  string // "sample:…" or a real capture
		player int
		states int // served (0: all)
	}{
		{"sample:modern", 1, 0},
		{"sample:legacy", 1, 0},
		{"modern/basic/basic.pcap", 1, 180},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			input := tt.input
			if !strings.HasPrefix(input, "sample:") {
				input = realcap.Path(t, input)
			}
			rec := load(t, input, tt.player)
			a := startArenaOpt(t, rec, Options{Speed: 6, Stop: tt.states, Limits: quickLimits})
			wait := a.honest(netip.AddrPort{})
			p := newPeer(t, rec.Era, netip.AddrPort{})
			if err := p.handshake(a.listen); err != nil {
				t.Fatal(err)
			}
			p.join()
			ctx, cancel := context.WithTimeout(a.ctx, 1500*time.Millisecond)
			defer cancel()
			p.listen(ctx)
			wait()
			sent, recv := p.sent.Load(), p.recv.Load()
			t.Logf("peer sent %d bytes, received %d (%d stdf pieces): %.0f×; counts %+v", sent, recv, p.stdf.Load(), float64(recv)/float64(sent), a.srv.Counts())
			if p.stdf.Load() == 0 {
				t.Fatal("the peer was sent no state at all: it never joined")
			}
			if recv > 10000*sent {
				t.Errorf("a peer that never acknowledges received %d bytes for %d: more than 10,000×", recv, sent)
			}
			if recv > int64(DefaultLimits.Burst)+maxDif {
				t.Errorf("received %d bytes, more than the %d-byte burst", recv, DefaultLimits.Burst)
			}
			if n := a.srv.Counts().Dropped; n != 1 {
				t.Errorf("%d clients dropped, want the peer that never acknowledged", n)
			}
		})
	}
}

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

func TestServeSpoofedHandshakes(t *testing.T) {
	t.Parallel()
	rec := load(t, "sample:modern", 2)
	lim := quickLimits
	lim.Pending, lim.PendingPerAddr = 12, 4
	a := startArena(t, rec, 6, lim)
	wait := a.honest(netip.AddrPort{})
	a.warm()
	before, heap := runtime.NumGoroutine(), heapInUse()
	// 400 handshakes from 4 addresses, none ever joining.
	flood := make(chan struct{})
	peak := make(chan [2]int)
	go func() {
		var most [2]int // live clients, open handshakes of one address
		for done := false; !done; {
			select {
			case <-flood:
				done = true
			case <-time.After(5 * time.Millisecond):
			}
			st := a.srv.Status()
			per := map[netip.Addr]int{}
			for _, c := range st {
				if !c.Joined {
					per[c.Client.Addr()]++
				}
			}
			most[0] = max(most[0], len(st))
			for _, n := range per {
				most[1] = max(most[1], n)
			}
		}
		peak <- most
	}()
	for i := range 400 {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i%4)}), 0)
		p := newPeer(t, rec.Era, src)
		p.sendTo(a.listen, []byte("1234"))
		p.conn.Close()
	}
	time.Sleep(100 * time.Millisecond)
	close(flood)
	most := <-peak
	n := a.srv.Counts()
	t.Logf("during the flood: %d clients live at most, %d handshakes of one address; counts %+v", most[0], most[1], n)
	if most[0] > lim.Pending+1 || most[1] > lim.PendingPerAddr {
		t.Errorf("%d clients live, %d of one address: more than %d handshakes (%d per address) and the honest client", most[0], most[1], lim.Pending, lim.PendingPerAddr)
	}
	if n.Evicted == 0 || n.Handshakes < 100 {
		t.Errorf("counts %+v: want handshakes answered, and evicted for newer ones", n)
	}
	time.Sleep(lim.Handshake + 200*time.Millisecond)
	st := a.srv.Status()
	if len(st) != 1 || !st[0].Joined {
		t.Errorf("%d clients live after the handshakes timed out, want the honest one: %+v", len(st), st)
	}
	if got := goroutines(before); got > before {
		t.Errorf("%d goroutines after the handshakes timed out, %d before", got, before)
	}
	if after := heapInUse(); after > heap+4<<20 {
		t.Errorf("heap in use %d KB after the handshakes timed out, %d KB before", after>>10, heap>>10)
	}
	n = a.srv.Counts()
	if n.TimedOut+n.Evicted != n.Handshakes-1 || n.Joins != 1 {
		t.Errorf("counts %+v: want every handshake but the honest one timed out or evicted, and 1 join", n)
	}
	wait()
}

func TestServeRejoinLoop(t *testing.T) {
	t.Parallel()
	rec := load(t, "sample:modern", 1)
	a := startArena(t, rec, 6, Limits{}) // no client dropped meanwhile
	wait := a.honest(netip.AddrPort{})
	a.warm()
	before, heap := runtime.NumGoroutine(), heapInUse()
	p := newPeer(t, rec.Era, netip.AddrPort{})
	const cycles = 30
	for i := range cycles {
		if err := p.handshake(a.listen); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		p.join()
		// Take a state, acknowledge it, start over.
		ctx, cancel := context.WithTimeout(a.ctx, 20*time.Millisecond)
		p.listen(ctx)
		cancel()
		p.stak(p.last.Load())
	}
	var n Counts
	for range 100 {
		if n = a.srv.Counts(); n.Joins == cycles+1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("counts %+v", n)
	if n.Replaced != cycles-1 || n.Joins != cycles+1 {
		t.Errorf("%d replaced, %d joins; want %d and %d", n.Replaced, n.Joins, cycles-1, cycles+1)
	}
	if st := a.srv.Status(); len(st) != 2 {
		t.Errorf("%d clients live, want the honest one and the peer's last", len(st))
	}
	// What is left is the peer's last client: two goroutines and its
	// states, not 30 of them.
	if got := goroutines(before + 2); got > before+2 {
		t.Errorf("%d goroutines after %d rejoins, %d before", got, cycles, before)
	}
	if after := heapInUse(); after > heap+8<<20 {
		t.Errorf("heap in use %d KB after %d rejoins, %d KB before", after>>10, cycles, heap>>10)
	}
	wait()
}

func TestServeSquatters(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"sample:legacy", "sample:modern"} {
		t.Run(input, func(t *testing.T) { testSquatters(t, input) })
	}
}

// testSquatters joins 7 peers that never acknowledge a state, though they
// keep talking: pings, acknowledgements of frames never sent, and in the
// legacy era sdak of game moves never sent.
func testSquatters(t *testing.T, input string) {
	rec := load(t, input, 2)
	a := startArena(t, rec, 6, quickLimits)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	for range MaxClients {
		p := newPeer(t, rec.Era, netip.AddrPort{})
		if err := p.handshake(a.listen); err != nil {
			t.Fatal(err)
		}
		p.join()
		wg.Go(func() { p.listen(ctx) })
		wg.Go(func() { p.keepTalking(ctx) })
	}
	for range 50 {
		if a.srv.Counts().Joins == MaxClients {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The honest client's endpoint: refused while the squatters hold
	// every slot, served once they lose them.
	victim := newPeer(t, rec.Era, netip.AddrPort{})
	local := victim.addr()
	if err := victim.handshake(a.listen); err != nil {
		t.Fatal(err)
	}
	victim.join()
	var n Counts
	for range 50 {
		if n = a.srv.Counts(); n.Refused > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n.Refused != 1 || n.Joins != MaxClients {
		t.Fatalf("counts %+v: want %d joins and the eighth refused", n, MaxClients)
	}
	victim.conn.Close()
	begin := time.Now()
	wait := a.honest(local)
	t.Logf("honest client joined %v after being refused", time.Since(begin).Round(time.Millisecond))
	wait()
	cancel()
	wg.Wait()
	if n := a.srv.Counts(); n.Dropped != MaxClients {
		t.Errorf("counts %+v: want the %d squatters dropped", n, MaxClients)
	}
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

func TestServeLockout(t *testing.T) {
	t.Parallel()
	rec := load(t, "sample:modern", 1)
	a := startArena(t, rec, 6, Limits{Handshake: time.Minute})
	// A spoofed 1234 from the victim's endpoint, then nothing.
	spoof := newPeer(t, rec.Era, netip.AddrPort{})
	victim := spoof.addr()
	spoof.sendTo(a.listen, []byte("1234"))
	time.Sleep(20 * time.Millisecond)
	spoof.conn.Close()
	// The victim's own handshake is answered at once, though the spoofed
	// one has not timed out.
	begin := time.Now()
	wait := a.honest(victim)
	t.Logf("victim joined in %v", time.Since(begin).Round(time.Millisecond))
	if d := time.Since(begin); d > time.Second {
		t.Errorf("victim joined after %v", d)
	}
	wait()
	if n := a.srv.Counts(); n.Handshakes != 1 || n.Joins != 1 {
		t.Errorf("counts %+v: want one handshake, joined by the victim", n)
	}
}

func TestServeHandshakeTimeout(t *testing.T) {
	t.Parallel()
	rec := load(t, "sample:legacy", 1)
	a := startArena(t, rec, 6, quickLimits)
	spoof := newPeer(t, rec.Era, netip.AddrPort{})
	victim := spoof.addr()
	spoof.sendTo(a.listen, []byte("1234"))
	time.Sleep(20 * time.Millisecond)
	spoof.conn.Close()
	time.Sleep(quickLimits.Handshake + 200*time.Millisecond)
	if n := a.srv.Counts(); n.TimedOut != 1 || len(a.srv.Status()) != 0 {
		t.Fatalf("counts %+v, %d live: want the handshake timed out and released", n, len(a.srv.Status()))
	}
	a.honest(victim)()
}

// TestServeEndOfRecording checks how a recording ends: the last state is
// never sent as a dif from a frame to itself, a legacy client that missed it
// is sent it again at a frame ahead of its own, and the legacy sdat stream
// goes on to its end.
func TestServeEndOfRecording(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input  string // "sample:…" or a real capture
		player int
		states int // served: the recording's last ones (0: all)
	}{
		{"sample:legacy", 1, 0},
		{"sample:modern", 1, 0},
		// The real legacy server sent this player game moves after its
		// last state.
		{"legacy/lossy/capture.pcap", 2, 40},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			input := tt.input
			if !strings.HasPrefix(input, "sample:") {
				input = realcap.Path(t, input)
			}
			rec := load(t, input, tt.player)
			start := 0
			if tt.states > 0 {
				start = len(rec.States) - tt.states
			}
			end := rec.States[len(rec.States)-1]
			first := rec.States[start].At
			wantSdat, afterEnd := 0, 0
			for _, s := range rec.Sdat {
				if s.At >= first {
					wantSdat++
				}
				if s.At > end.At {
					afterEnd++
				}
			}
			a := startArenaOpt(t, rec, Options{Speed: 6, Start: start})
			// This client loses the last state as first sent.
			dropped := map[int]bool{}
			c, err := gameclient.Join(a.ctx, a.listen.String(), gameclient.Options{Era: rec.Era, Color: 1, Hostname: "late",
				Drop: func(p gameclient.Piece) bool {
					if p.Dst != end.Frame || dropped[p.Seq] {
						return false
					}
					dropped[p.Seq] = true
					return true
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			level := end.Level - rec.States[start].Level
			err = c.Run(a.ctx, 3*time.Second, func(c *gameclient.Client) bool {
				n := len(c.Applied)
				return n > 0 && c.Applied[n-1].Sum == end.Sum && c.Applied[n-1].Level == level && c.Sdats >= wantSdat
			})
			if err != nil {
				t.Fatalf("%v: %d states applied, %d of %d sdat", err, len(c.Applied), c.Sdats, wantSdat)
			}
			last := c.Applied[len(c.Applied)-1]
			t.Logf("last state applied at frame %d (recorded %d); %d sdat, %d after the last state", last.Dst, end.Frame, c.Sdats, afterEnd)
			if rec.Era == decode.Legacy && last.Dst <= end.Frame {
				t.Errorf("legacy: the last state again at frame %d, not ahead of %d", last.Dst, end.Frame)
			}
			if rec.Era == decode.Modern && last.Dst != end.Frame {
				t.Errorf("modern: the last state again at frame %d, want %d", last.Dst, end.Frame)
			}
			if c.SelfDifs != 0 {
				t.Errorf("%d difs from a frame to itself", c.SelfDifs)
			}
			if rec.Era == decode.Legacy && c.SdatFrame < end.Frame {
				t.Errorf("the last sdat is of frame %d, before the last state's", c.SdatFrame)
			}
		})
	}
}

// TestServeNoSelfDif sends the state a client has acknowledged again: no
// dif from a frame to itself goes out.
func TestServeNoSelfDif(t *testing.T) {
	t.Parallel()
	rec := load(t, "sample:modern", 1)
	a := startArena(t, rec, 1, Limits{})
	p := newPeer(t, rec.Era, netip.AddrPort{})
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := newClient(a.ctx, a.srv, conn, p.addr(), time.Now())
	sp := newSender(c)
	data, err := rec.State(0, rec.Cursor())
	if err != nil {
		t.Fatal(err)
	}
	f := rec.States[0].Frame
	if n := sp.state(0, f, data, 0); n == 0 {
		t.Fatal("first state not sent")
	}
	c.acked(f)
	if n := sp.state(0, f, data, 0); n != 0 {
		t.Errorf("the acknowledged state sent again as a dif to itself (%d bytes)", n)
	}
	if n := sp.state(0, f+1, data, 0); n == 0 {
		t.Error("the next state not sent")
	}
}
