// Command servehostile plays hostile peers against a running pmdump serve
// and measures what they cost it: the bytes a peer that joins and never
// acknowledges is sent, the server's memory (VmRSS) after thousands of
// handshakes that never join and after many join/leave cycles, how long a
// victim endpoint locked out by a spoofed handshake waits to be served, and
// whether a real client gets in past 7 squatters. Used by serve-hostile.sh.
//
//	go run ./scripts/servehostile -pid PID -era modern -test noack 127.0.0.1:24785
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
)

var (
	era    decode.Version
	listen netip.AddrPort
	pid    int
)

func main() {
	test := flag.String("test", "all", "noack, handshakes, cycles, lockout, squatters or all")
	eraName := flag.String("era", "modern", "the server's version of the game: "+strings.Join(decode.VersionNames(), ", "))
	flag.IntVar(&pid, "pid", 0, "process id of the server, for its memory")
	window := flag.Duration("for", 10*time.Second, "how long the no-ack peer listens")
	n := flag.Int("n", 5000, "handshakes that never join")
	rate := flag.Int("rate", 2500, "handshakes per second")
	cycles := flag.Int("cycles", 100, "join/leave cycles")
	flag.Parse()
	var err error
	if era, err = decode.ParseVersion(*eraName); err != nil || flag.NArg() != 1 {
		fail("usage: servehostile [-test T] [-era E] [-pid PID] HOST:PORT")
	}
	if listen, err = netip.ParseAddrPort(flag.Arg(0)); err != nil {
		fail(err.Error())
	}
	run := func(name string, f func()) {
		if *test == "all" || *test == name {
			f()
		}
	}
	run("noack", func() { noAck(*window) })
	run("handshakes", func() { handshakes(*n, *rate) })
	run("cycles", func() { joinLeave(*cycles) })
	run("lockout", lockout)
	run("squatters", squatters)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "servehostile:", msg)
	os.Exit(1)
}

// rss is the server's resident memory in KB.
func rss() int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	return -1
}

// peer is a raw UDP game peer.
type peer struct {
	conn   *net.UDPConn
	server netip.AddrPort
	sent   int
}

func newPeer(local netip.AddrPort) (*peer, error) {
	if !local.IsValid() {
		local = netip.AddrPortFrom(listen.Addr(), 0)
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(local))
	if err != nil {
		return nil, err
	}
	return &peer{conn: conn}, nil
}

func (p *peer) send(to netip.AddrPort, b []byte) {
	if n, err := p.conn.WriteToUDPAddrPort(b, to); err == nil {
		p.sent += n
	}
}

// handshake sends 1234 until a 5678 comes, as the game's client does (in
// the versions without a handshake the server is its listening port).
func (p *peer) handshake() error {
	if !era.Has(decode.KindHandshake) {
		p.server = listen
		return nil
	}
	buf := make([]byte, 2048)
	for range 5 {
		p.send(listen, hello())
		p.conn.SetReadDeadline(time.Now().Add(120 * time.Millisecond))
		n, from, err := p.conn.ReadFromUDPAddrPort(buf)
		if err == nil && decode.KindOf(buf[:n]) == decode.KindHandshakeReply {
			p.server = from
			return nil
		}
	}
	return errors.New("no 5678")
}

// hello is the version's handshake, or its join request when it has none:
// what opens a client at the server.
func hello() []byte {
	if !era.Has(decode.KindHandshake) {
		return joinRequest()
	}
	return decode.Encode(nil, decode.MustNewKind(era, decode.KindHandshake))
}

func joinRequest() []byte {
	p := decode.MustNewKind(era, decode.KindJoinRequest).Set("color", 9).SetBytes("hostname", []byte("peer"))
	if p.HasField("name") {
		p.SetBytes("name", []byte("peer"))
	}
	return decode.Encode(nil, p)
}

func (p *peer) join() { p.send(p.server, joinRequest()) }

// noAck joins and never acknowledges: what is it sent over the window?
func noAck(window time.Duration) {
	p, err := newPeer(netip.AddrPort{})
	if err != nil {
		fail(err.Error())
	}
	defer p.conn.Close()
	if err := p.handshake(); err != nil {
		fail("noack: " + err.Error())
	}
	p.join()
	var recv, stdf int
	var last time.Time
	begin := time.Now()
	buf := make([]byte, 2048)
	for time.Since(begin) < window {
		p.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _, err := p.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			continue
		}
		recv += n
		if decode.KindOf(buf[:n]) == decode.KindDifPiece {
			stdf++
			last = time.Now()
		}
	}
	fmt.Printf("noack: sent %d bytes, received %d (%d stdf pieces, the last %.2f s after the join) in %v: %.0f×\n",
		p.sent, recv, stdf, last.Sub(begin).Seconds(), window, float64(recv)/float64(p.sent))
}

// handshakes sends n handshakes from as many endpoints, none joining, and
// follows the server's memory until they have timed out.
func handshakes(n, rate int) {
	start := rss()
	peak := start
	begin := time.Now()
	for i := range n {
		if due := begin.Add(time.Duration(i) * time.Second / time.Duration(rate)); time.Until(due) > 0 {
			time.Sleep(time.Until(due))
		}
		// 127.0.0.2 … 127.0.0.201: many source addresses, as spoofers use.
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, byte(i / 200 % 200), byte(2 + i%200)}), 0)
		p, err := newPeer(src)
		if err != nil {
			fail(err.Error())
		}
		p.send(listen, hello())
		p.conn.Close()
		if i%250 == 0 {
			peak = max(peak, rss())
		}
	}
	sent := time.Since(begin)
	for range 70 { // the handshakes time out within 5 s
		time.Sleep(100 * time.Millisecond)
		peak = max(peak, rss())
	}
	fmt.Printf("handshakes: %d that never join, in %.2f s; server RSS %d KB before, %d KB at most, %d KB 7 s later (%+d KB)\n",
		n, sent.Seconds(), start, peak, rss(), rss()-start)
}

// joinLeave joins a protocol-true client from one endpoint, lets it watch
// a little, leaves, and starts over.
func joinLeave(cycles int) {
	start := rss()
	peak := start
	ctx := context.Background()
	local := netip.AddrPortFrom(listen.Addr(), 0)
	var applied int
	for i := range cycles {
		c, err := gameclient.Join(ctx, listen.String(), gameclient.Options{Era: era, Color: 3, Hostname: "cycler", Local: local})
		if err != nil {
			fail(fmt.Sprintf("cycle %d: %v", i, err))
		}
		local = c.LocalAddr()
		rctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		c.Run(rctx, time.Second, func(*gameclient.Client) bool { return false })
		cancel()
		applied += len(c.Applied)
		c.Close()
		if i%10 == 0 {
			peak = max(peak, rss())
		}
	}
	time.Sleep(3 * time.Second) // the last one is dropped
	fmt.Printf("cycles: %d join/leave cycles from one endpoint (%d states applied); server RSS %d KB before, %d KB at most, %d KB after (%+d KB)\n",
		cycles, applied, start, peak, rss(), rss()-start)
}

// firstState joins from local and returns how long until the first state
// is applied.
func firstState(local netip.AddrPort, within time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	begin := time.Now()
	for {
		c, err := gameclient.Join(ctx, listen.String(), gameclient.Options{Era: era, Color: 5, Hostname: "victim", Local: local})
		if err == nil {
			err = c.Run(ctx, 3*time.Second, func(c *gameclient.Client) bool { return len(c.Applied) > 0 })
			c.Close()
			if err != nil {
				return 0, err
			}
			return time.Since(begin), nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("not served within %v: %w", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockout spoofs a handshake from a victim's endpoint and measures when
// the victim is served: at once, and once the spoofed handshake timed out.
func lockout() {
	for _, wait := range []time.Duration{0, 6 * time.Second} {
		p, err := newPeer(netip.AddrPort{})
		if err != nil {
			fail(err.Error())
		}
		victim := p.conn.LocalAddr().(*net.UDPAddr).AddrPort()
		p.send(listen, hello())
		p.conn.Close()
		time.Sleep(wait)
		d, err := firstState(victim, 20*time.Second)
		if err != nil {
			fmt.Printf("lockout: victim %s, spoofed handshake %v earlier: %v\n", victim, wait, err)
			continue
		}
		fmt.Printf("lockout: victim %s, spoofed handshake %v earlier: first state applied %.3f s after its own handshake\n", victim, wait, d.Seconds())
		time.Sleep(3 * time.Second) // the victim, gone, is dropped
	}
}

// squatters join 7 peers that never acknowledge, then a real client.
func squatters() {
	var wg sync.WaitGroup
	var recv atomic.Int64
	stop := make(chan struct{})
	for i := range 7 {
		p, err := newPeer(netip.AddrPort{})
		if err != nil {
			fail(err.Error())
		}
		if err := p.handshake(); err != nil {
			fail(fmt.Sprintf("squatter %d: %v", i, err))
		}
		p.join()
		wg.Go(func() {
			defer p.conn.Close()
			buf := make([]byte, 2048)
			for {
				select {
				case <-stop:
					return
				default:
				}
				p.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				if n, _, err := p.conn.ReadFromUDPAddrPort(buf); err == nil {
					recv.Add(int64(n))
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	d, err := firstState(netip.AddrPort{}, 20*time.Second)
	close(stop)
	wg.Wait()
	if err != nil {
		fmt.Printf("squatters: 7 joined; the real client: %v\n", err)
		return
	}
	fmt.Printf("squatters: 7 joined and never acknowledged (%d bytes sent to them); a real client applied its first state %.3f s after it tried to join\n", recv.Load(), d.Seconds())
}
