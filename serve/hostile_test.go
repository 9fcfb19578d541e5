package serve

import (
	"context"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/realcap"
)

func TestServeNoAckBounded(t *testing.T) {
	t.Parallel()
	// states: the recording's first ones are served
	tests := []servedRecording{
		{"sample:modern", 1, 0},
		{"sample:legacy", 1, 0},
		{"modern/basic/basic.pcap", 1, 180},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			rec := tt.load(t)
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

func TestServeSpoofedHandshakes(t *testing.T) {
	// Not parallel: it measures the process's goroutines and heap.
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
	if after := heapInUse(); !raceOn && after > heap+4<<20 {
		t.Errorf("heap in use %d KB after the handshakes timed out, %d KB before", after>>10, heap>>10)
	}
	n = a.srv.Counts()
	if n.TimedOut+n.Evicted != n.Handshakes-1 || n.Joins != 1 {
		t.Errorf("counts %+v: want every handshake but the honest one timed out or evicted, and 1 join", n)
	}
	wait()
}

func TestServeRejoinLoop(t *testing.T) {
	// Not parallel: it measures the process's goroutines and heap.
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
	if after := heapInUse(); !raceOn && after > heap+8<<20 {
		t.Errorf("heap in use %d KB after %d rejoins, %d KB before", after>>10, cycles, heap>>10)
	}
	wait()
}

func TestServeSquatters(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"sample:legacy", "sample:modern"} {
		t.Run(input, func(t *testing.T) {
			t.Parallel()
			testSquatters(t, input)
		})
	}
}

// testSquatters joins 7 peers that never acknowledge a state, though they
// keep talking: pings, acknowledgements of frames never sent, and in the
// legacy era sdak of game moves never sent.
func testSquatters(t *testing.T, input string) {
	rec := load(t, input, 2)
	lim := quickLimits
	lim.AckTimeout = 1500 * time.Millisecond // the squatters outlast the victim's first try
	a := startArena(t, rec, 6, lim)
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

// TestServeHonestThroughGap serves the real legacy capture whose player
// became active 7.7 s after its first state: meanwhile only game moves go
// out, and the client's sdak of them keep it from being dropped.
func TestServeHonestThroughGap(t *testing.T) {
	t.Parallel()
	rec := load(t, realcap.Path(t, "legacy/basic/capture.pcap"), 1)
	if gap := rec.States[1].At - rec.States[0].At; gap < 4*quickLimits.AckTimeout {
		t.Fatalf("the first two states are %v apart: no gap to test", gap)
	}
	a := startArenaOpt(t, rec, Options{Speed: 4, Stop: 3, Limits: quickLimits})
	a.honest(netip.AddrPort{})()
	if n := a.srv.Counts(); n.Dropped != 0 {
		t.Errorf("counts %+v: the honest client was dropped", n)
	}
}
