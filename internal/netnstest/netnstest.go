//go:build linux

// Package netnstest runs a game's traffic over real UDP sockets for live
// capture tests: in a network namespace made for the test (so the capture
// sees nothing else), on its loopback device. The tests need root; they
// skip, saying why, without it.
package netnstest

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pmdump/pmdump/synth"
)

// Datagram is one datagram of a game, as sent.
type Datagram struct {
	TS       time.Time
	Src, Dst netip.AddrPort
	Payload  []byte
}

type collect struct{ dgs []Datagram }

func (c *collect) WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error {
	c.dgs = append(c.dgs, Datagram{ts, src, dst, bytes.Clone(payload)})
	return nil
}

// Game generates a synthetic game and moves its addresses onto
// 127.0.0.0/8, ports kept, so that it can be sent on a loopback device.
func Game(t testing.TB, cfg synth.Config) []Datagram {
	t.Helper()
	var c collect
	if _, err := synth.Generate(cfg, &c, nil); err != nil {
		t.Fatal(err)
	}
	move := func(a netip.AddrPort) netip.AddrPort {
		b := a.Addr().As4()
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, b[2], b[3]}), a.Port())
	}
	for i := range c.dgs {
		c.dgs[i].Src, c.dgs[i].Dst = move(c.dgs[i].Src), move(c.dgs[i].Dst)
	}
	return c.dgs
}

var seq atomic.Int32

// New makes a network namespace for the test with its loopback device up,
// removed when the test ends, and returns its name. It skips the test when
// not root or without the ip command.
func New(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture tests need root (they make a network namespace and capture in it)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("live capture tests need the ip command (iproute2)")
	}
	name := fmt.Sprintf("pmdump-test-%d-%d", os.Getpid(), seq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", name, err, out)
		}
	})
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("bringing lo up in %s: %v\n%s", name, err, out)
	}
	return name
}

// Run runs f on a goroutine whose OS thread has entered namespace name, so
// that the sockets and captures f opens are the namespace's; the thread is
// never used again. It returns f's error.
func Run(name string, f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread ends with the goroutine
		fd, err := unix.Open(filepath.Join("/var/run/netns", name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", name, err)
			return
		}
		done <- f()
	}()
	return <-done
}

// Sockets binds a UDP socket to every endpoint of the datagrams, draining
// what they receive; close them with the returned function.
func Sockets(dgs []Datagram) (map[netip.AddrPort]*net.UDPConn, func(), error) {
	conns := map[netip.AddrPort]*net.UDPConn{}
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for _, d := range dgs {
		for _, ep := range []netip.AddrPort{d.Src, d.Dst} {
			if conns[ep] != nil {
				continue
			}
			c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(ep))
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			c.SetReadBuffer(4 << 20)
			conns[ep] = c
			go func() {
				buf := make([]byte, 1<<16)
				for {
					if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
						return
					}
				}
			}()
		}
	}
	return conns, closeAll, nil
}

// Play sends the datagrams from their source endpoints' sockets with their
// timing divided by speed (0: as fast as possible).
func Play(conns map[netip.AddrPort]*net.UDPConn, dgs []Datagram, speed int) error {
	start := time.Now()
	for _, d := range dgs {
		if speed > 0 {
			if wait := time.Duration(d.TS.Sub(dgs[0].TS).Nanoseconds()/int64(speed)) - time.Since(start); wait > 0 {
				time.Sleep(wait)
			}
		}
		if _, err := conns[d.Src].WriteToUDPAddrPort(d.Payload, d.Dst); err != nil {
			return fmt.Errorf("sending %v → %v: %w", d.Src, d.Dst, err)
		}
	}
	return nil
}

// Send binds the sockets, plays the datagrams and closes the sockets, all
// in namespace name.
func Send(name string, dgs []Datagram, speed int) error {
	return Run(name, func() error {
		conns, closeAll, err := Sockets(dgs)
		if err != nil {
			return err
		}
		defer closeAll()
		return Play(conns, dgs, speed)
	})
}
