//go:build linux

package source_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/netnstest"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/synth"
)

// game is a short synthetic modern game (two clients, some loss), its
// addresses moved onto 127.0.0.0/8 with their ports kept.
func game(t *testing.T, d time.Duration) []netnstest.Datagram {
	return netnstest.Game(t, synth.Config{Era: decode.Modern, Players: 2, Duration: d, Loss: 0.02, Seed: 7})
}

// TestLiveLoopback sends a synthetic game over real UDP sockets on the
// loopback device of a namespace made for the test, captures it live and
// checks that every datagram was captured exactly once (the loopback
// device shows each twice), in order, with its ports and payload; that
// the capture written alongside reads back as the frames captured; and
// that the kernel dropped nothing.
func TestLiveLoopback(t *testing.T) {
	ns := netnstest.New(t)
	dgs := game(t, 3*time.Second)
	out := filepath.Join(t.TempDir(), "live.pcapng")
	type got struct {
		src, dst netip.AddrPort
		payload  []byte
		frame    []byte
	}
	var gs []got
	var counters source.Counters
	var latency time.Duration
	err := netnstest.Run(ns, func() error {
		live, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo"}, Ports: []uint16{1234, 24785}})
		if err != nil {
			return err
		}
		w, err := source.CreateCapture(out, source.WriterOptions{Interfaces: live.Interfaces(), FlushInterval: 50 * time.Millisecond})
		if err != nil {
			live.Close()
			return err
		}
		// Other traffic on other ports is not captured.
		noise, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 9), Port: 5353})
		if err != nil {
			return err
		}
		defer noise.Close()
		r := source.NewFrameReader(source.Tee(live, w), "lo")
		conns, closeAll, err := netnstest.Sockets(dgs)
		if err != nil {
			return err
		}
		defer closeAll()
		sendErr := make(chan error, 1)
		go func() {
			for i := 0; i < 20; i++ {
				noise.WriteToUDP([]byte("noise"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 9), Port: 5353})
			}
			sendErr <- netnstest.Play(conns, dgs, 10)
		}()
		deadline := time.AfterFunc(10*time.Second, func() { live.Close() })
		defer deadline.Stop()
		for len(gs) < len(dgs) {
			d, err := r.Next()
			if err != nil {
				rcv, drop, _ := live.KernelStats()
				select {
				case serr := <-sendErr:
					if serr != nil {
						return serr
					}
				default:
				}
				return fmt.Errorf("after %d of %d datagrams: %w (kernel received %d, dropped %d; counters %+v)", len(gs), len(dgs), err, rcv, drop, r.Counters())
			}
			gs = append(gs, got{d.Src, d.Dst, bytes.Clone(d.Payload), bytes.Clone(d.Frame)})
			if l := time.Since(d.TS); l > latency {
				latency = l
			}
		}
		if err := <-sendErr; err != nil {
			return err
		}
		// Anything more (a second copy of a datagram) would come within
		// the block timeout.
		time.AfterFunc(200*time.Millisecond, func() { live.Close() })
		for {
			d, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			gs = append(gs, got{d.Src, d.Dst, bytes.Clone(d.Payload), bytes.Clone(d.Frame)})
		}
		counters = r.Counters()
		return w.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != len(dgs) {
		t.Fatalf("captured %d datagrams, sent %d", len(gs), len(dgs))
	}
	for i, d := range dgs {
		if g := gs[i]; g.src != d.Src || g.dst != d.Dst || !bytes.Equal(g.payload, d.Payload) {
			t.Fatalf("datagram %d: captured %v → %v %d bytes, sent %v → %v %d bytes", i, g.src, g.dst, len(g.payload), d.Src, d.Dst, len(d.Payload))
		}
	}
	if counters.KernelDropped != 0 || counters.KernelReceived < uint64(len(dgs)) || counters.NonUDP != 0 {
		t.Errorf("kernel received %d, dropped %d; %d non-UDP frames", counters.KernelReceived, counters.KernelDropped, counters.NonUDP)
	}
	t.Logf("%d datagrams captured once each; kernel received %d, dropped %d; worst latency %v", len(gs), counters.KernelReceived, counters.KernelDropped, latency)
	if latency > time.Second { // 100 ms when the machine is not busy: see scripts/live-rate.sh
		t.Errorf("a datagram was read %v after it was captured", latency)
	}
	// The capture file holds the frames as captured.
	r, err := source.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		d, err := r.Next()
		if err == io.EOF {
			if i != len(gs) {
				t.Errorf("%d frames in %s, %d captured", i, out, len(gs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(gs) || !bytes.Equal(d.Frame, gs[i].frame) || d.InterfaceName != "lo" {
			t.Fatalf("frame %d of %s differs from the frame captured", i, out)
		}
	}
}

// TestLiveErrors: errors a user can act on.
func TestLiveErrors(t *testing.T) {
	ns := netnstest.New(t)
	err := netnstest.Run(ns, func() error {
		_, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"nosuch0"}})
		if !errors.Is(err, source.ErrNoInterface) || !strings.Contains(err.Error(), "lo (up)") {
			return fmt.Errorf("no such interface: %v", err)
		}
		_, err = source.OpenLive(source.LiveOptions{Interfaces: []string{"any"}, Promiscuous: true})
		if err == nil {
			return errors.New("promiscuous on any accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "down").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo down: %v %s", err, out)
	}
	err = netnstest.Run(ns, func() error {
		_, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo"}})
		if !errors.Is(err, source.ErrInterfaceDown) || !strings.Contains(err.Error(), "ip link set lo up") {
			return fmt.Errorf("interface down: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLiveKilled: a capture process killed (SIGKILL) in the middle of a
// game leaves a capture file that reads back without error, every frame in
// it one that was sent.
func TestLiveKilled(t *testing.T) {
	if os.Getenv("PMDUMP_LIVE_CHILD") != "" {
		liveChild()
		return
	}
	ns := netnstest.New(t)
	dgs := game(t, 3*time.Second)
	out := filepath.Join(t.TempDir(), "killed.pcap")
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^TestLiveKilled$")
	cmd.Env = append(os.Environ(), "PMDUMP_LIVE_CHILD="+out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "capturing") {
		t.Fatalf("child: %q, %v", line, err)
	}
	err = netnstest.Run(ns, func() error {
		conns, closeAll, err := netnstest.Sockets(dgs)
		if err != nil {
			return err
		}
		defer closeAll()
		return netnstest.Play(conns, dgs[:len(dgs)/2], 10)
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	r, err := source.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sentPayloads := map[string]bool{}
	for _, d := range dgs {
		sentPayloads[string(d.Payload)] = true
	}
	n := 0
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", n, err)
		}
		if !sentPayloads[string(d.Payload)] {
			t.Fatalf("frame %d was not sent", d.N)
		}
		n++
	}
	if n < len(dgs)/4 {
		t.Errorf("%d frames in the capture of a killed process, %d sent", n, len(dgs)/2)
	}
	t.Logf("killed capture holds %d of %d datagrams sent", n, len(dgs)/2)
}

// liveChild captures lo into the file named by PMDUMP_LIVE_CHILD until it
// is killed.
func liveChild() {
	live, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo"}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	w, err := source.CreateCapture(os.Getenv("PMDUMP_LIVE_CHILD"), source.WriterOptions{Interfaces: live.Interfaces()})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("capturing")
	r := source.NewFrameReader(source.Tee(live, w), "lo")
	for {
		if _, err := r.Next(); err != nil {
			os.Exit(1)
		}
	}
}

// TestLiveCloseKeepsCaptured: frames the kernel captured before Close, also
// those in the block it was still filling, are read after it.
func TestLiveCloseKeepsCaptured(t *testing.T) {
	ns := netnstest.New(t)
	const n = 50
	var got int
	var rcv uint64
	err := netnstest.Run(ns, func() error {
		live, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo"}})
		if err != nil {
			return err
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 24785})
		if err != nil {
			return err
		}
		defer c.Close()
		for i := 0; i < n; i++ {
			if _, err := c.WriteToUDP([]byte("cdat"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 24785}); err != nil {
				return err
			}
		}
		live.Close()
		r := source.NewFrameReader(live, "lo")
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			got++
		}
		rcv, _, _ = live.KernelStats()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != n || rcv != n {
		t.Errorf("read %d datagrams after Close, kernel received %d; %d were sent", got, rcv, n)
	}
}

// TestLiveTwoInterfaces: frames of several capture handles come through
// one source, each with its interface (here lo twice: every datagram once
// per handle).
func TestLiveTwoInterfaces(t *testing.T) {
	ns := netnstest.New(t)
	const n = 30
	seen := map[int]int{}
	err := netnstest.Run(ns, func() error {
		live, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo", "lo"}})
		if err != nil {
			return err
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 24785})
		if err != nil {
			return err
		}
		defer c.Close()
		for i := 0; i < n; i++ {
			c.WriteToUDP([]byte("cdat"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 24785})
		}
		live.Close()
		r := source.NewFrameReader(live, "lo+lo")
		for {
			d, err := r.Next()
			if err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if d.InterfaceName != "lo" {
				return fmt.Errorf("interface %q", d.InterfaceName)
			}
			seen[d.Interface]++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen[0] != n || seen[1] != n || len(seen) != 2 {
		t.Errorf("datagrams per interface %v, want %d on 0 and 1", seen, n)
	}
}
