//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

type liveDatagram struct {
	ts       time.Time
	src, dst netip.AddrPort
	payload  []byte
}

type liveGame struct{ dgs []liveDatagram }

func (g *liveGame) WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error {
	move := func(a netip.AddrPort) netip.AddrPort {
		b := a.Addr().As4()
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, b[2], b[3]}), a.Port())
	}
	g.dgs = append(g.dgs, liveDatagram{ts, move(src), move(dst), bytes.Clone(payload)})
	return nil
}

// liveNetns makes a network namespace with lo up for the test, removed at
// its end; it skips the test when not root.
func liveNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture tests need root (they make a network namespace and capture in it)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("live capture tests need the ip command (iproute2)")
	}
	name := fmt.Sprintf("pmdump-cli-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	return name
}

// inLiveNetns runs f on an OS thread inside the namespace.
func inLiveNetns(name string, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open(filepath.Join("/var/run/netns", name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			panic(err)
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			panic(err)
		}
		f()
	}()
	<-done
}

// TestLiveCommand runs pmdump live and pmdump stats -i on the loopback
// device of a namespace while a synthetic game is sent over UDP: live
// prints the same packet lines as read prints from the capture live wrote
// with -w, and the kernel dropped nothing; stats -i reports the game.
func TestLiveCommand(t *testing.T) {
	ns := liveNetns(t)
	var g liveGame
	if _, err := synth.Generate(synth.Config{Era: decode.Modern, Players: 2, Duration: 3 * time.Second, Seed: 5}, &g, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"live", []string{"live", "-i", "lo", "--duration", "1200ms", "-w", filepath.Join(dir, "live.pcapng")}},
		{"stats", []string{"stats", "-i", "lo", "--duration", "1200ms"}},
		{"states", []string{"live", "-i", "lo", "--duration", "1200ms", "--states", "--json", "-w", filepath.Join(dir, "states.pcap")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := -1
			var wg sync.WaitGroup
			wg.Add(2)
			go inLiveNetns(ns, func() {
				defer wg.Done()
				code = run(tt.args, &stdout, &stderr)
			})
			go inLiveNetns(ns, func() {
				defer wg.Done()
				for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "capturing on lo"); {
					if time.Now().After(deadline) {
						t.Error("the capture did not start")
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
				conns := map[netip.AddrPort]*net.UDPConn{}
				for _, d := range g.dgs {
					for _, ep := range []netip.AddrPort{d.src, d.dst} {
						if conns[ep] == nil {
							c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(ep))
							if err != nil {
								t.Error(err)
								return
							}
							defer c.Close()
							conns[ep] = c
						}
					}
				}
				start := time.Now()
				for _, d := range g.dgs {
					if wait := d.ts.Sub(g.dgs[0].ts)/10 - time.Since(start); wait > 0 {
						time.Sleep(wait)
					}
					conns[d.src].WriteToUDPAddrPort(d.payload, d.dst)
				}
			})
			wg.Wait()
			if code != 0 {
				t.Fatalf("exit status %d\n%s", code, stderr.String())
			}
			want := fmt.Sprintf("the kernel received %d, dropped 0", len(g.dgs))
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			switch tt.name {
			case "live":
				var read bytes.Buffer
				if code := run([]string{"read", filepath.Join(dir, "live.pcapng")}, &read, os.Stderr); code != 0 {
					t.Fatalf("read of the -w file: exit status %d", code)
				}
				if stdout.String() != read.String() || strings.Count(read.String(), "\n") != len(g.dgs) {
					t.Errorf("live printed %d lines, read of its capture %d, %d sent", strings.Count(stdout.String(), "\n"), strings.Count(read.String(), "\n"), len(g.dgs))
				}
				if !regexp.MustCompile(fmt.Sprintf(`game packets +%d `, len(g.dgs))).MatchString(stderr.String()) {
					t.Errorf("no stats summary for %d game packets:\n%s", len(g.dgs), stderr.String())
				}
			case "states":
				// The states rebuilt live are those rebuilt from the capture.
				var states bytes.Buffer
				if code := run([]string{"states", "--json", filepath.Join(dir, "states.pcap")}, &states, os.Stderr); code != 0 {
					t.Fatalf("states of the -w file: exit status %d", code)
				}
				var live []string
				for _, l := range strings.SplitAfter(stdout.String(), "\n") {
					if strings.HasPrefix(l, `{"client"`) {
						live = append(live, l)
					}
				}
				if strings.Join(live, "") != states.String() || !strings.Contains(states.String(), `"status":"ok"`) {
					t.Errorf("live rebuilt %d states, states %d from its capture:\n%s\nvs\n%s", len(live), strings.Count(states.String(), "\n"), strings.Join(live, ""), states.String())
				}
			case "stats":
				if !strings.Contains(stdout.String(), "live: lo") || !regexp.MustCompile(fmt.Sprintf(`game packets +%d `, len(g.dgs))).MatchString(stdout.String()) {
					t.Errorf("stats -i:\n%s", stdout.String())
				}
			}
		})
	}
}

// TestLiveUsage: live needs -i; live flags need -i; a missing interface is
// an input error (exit status 2) that lists the interfaces.
func TestLiveUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"live"}, exitUsage, "give -i IFACE"},
		{[]string{"stats", "--duration", "1s", "x.pcap"}, exitUsage, "--duration is for a live capture"},
		{[]string{"stats", "-i", "lo", "x.pcap"}, exitUsage, "not both"},
		{[]string{"live", "-i", "lo", "--ring", "0"}, exitUsage, "--ring"},
		{[]string{"live", "-i", "pmdump-nosuch0"}, exitUnreadable, "no such interface; the interfaces are: "},
	} {
		var stderr bytes.Buffer
		if code := run(c.args, &bytes.Buffer{}, &stderr); code != c.code || !strings.Contains(stderr.String(), c.says) {
			t.Errorf("%v: exit status %d, %q; want %d and %q", c.args, code, stderr.String(), c.code, c.says)
		}
	}
}

// TestLiveInterrupt: pmdump live stopped by Ctrl-C (SIGINT) exits 0 after
// printing the summary and the kernel's counts, and its -w file holds every
// frame it captured.
func TestLiveInterrupt(t *testing.T) {
	if args := os.Getenv("PMDUMP_LIVE_ARGS"); args != "" {
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	ns := liveNetns(t)
	var g liveGame
	if _, err := synth.Generate(synth.Config{Era: decode.Legacy, Players: 1, Duration: 2 * time.Second, Seed: 9}, &g, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "int.pcap")
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^TestLiveInterrupt$")
	cmd.Env = append(os.Environ(), "PMDUMP_LIVE_ARGS=live -i lo -w "+out)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "capturing on lo") {
		if time.Now().After(deadline) {
			t.Fatalf("no capture started:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	inLiveNetns(ns, func() {
		conns := map[netip.AddrPort]*net.UDPConn{}
		for _, d := range g.dgs {
			for _, ep := range []netip.AddrPort{d.src, d.dst} {
				if conns[ep] == nil {
					c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(ep))
					if err != nil {
						t.Error(err)
						return
					}
					defer c.Close()
					conns[ep] = c
				}
			}
		}
		for _, d := range g.dgs {
			conns[d.src].WriteToUDPAddrPort(d.payload, d.dst)
		}
	})
	time.Sleep(100 * time.Millisecond)
	// ip netns exec execs the command: the signal reaches pmdump.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pmdump live after Ctrl-C: %v\n%s", err, stderr.String())
	}
	want := fmt.Sprintf("the kernel received %d, dropped 0", len(g.dgs))
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "Conversations") {
		t.Errorf("no summary saying %q:\n%s", want, stderr.String())
	}
	var read bytes.Buffer
	if code := run([]string{"read", out}, &read, os.Stderr); code != 0 || strings.Count(read.String(), "\n") != len(g.dgs) {
		t.Errorf("read of the -w file: exit status %d, %d packets; %d sent", code, strings.Count(read.String(), "\n"), len(g.dgs))
	}
}
