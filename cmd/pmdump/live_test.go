//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/netnstest"
	"github.com/pmdump/pmdump/synth"
)

// TestLiveCommand runs pmdump live and pmdump stats -i on the loopback
// device of a namespace while a synthetic game is sent over UDP: live
// prints the same packet lines as read prints from the capture live wrote
// with -w, and the kernel dropped nothing; stats -i reports the game.
func TestLiveCommand(t *testing.T) {
	t.Parallel() // mostly waiting on the live captures' durations
	ns := netnstest.New(t)
	dgs := netnstest.Game(t, synth.Config{Era: decode.Modern, Players: 2, Duration: 3 * time.Second, Seed: 5})
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"live", []string{"live", "-i", "lo", "--duration", "1200ms", "-w", filepath.Join(dir, "live.pcapng")}},
		{"stats", []string{"stats", "-i", "lo", "--duration", "1200ms"}},
		{"doctor", []string{"doctor", "-i", "lo", "--duration", "1200ms"}},
		{"states", []string{"live", "-i", "lo", "--duration", "1200ms", "--states", "--json", "-w", filepath.Join(dir, "states.pcap")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := -1
			var wg sync.WaitGroup
			wg.Add(2)
			go netnstest.Run(ns, func() error {
				defer wg.Done()
				code = run(tt.args, &stdout, &stderr)
				return nil
			})
			go func() {
				defer wg.Done()
				if err := waitFor(&stderr, "capturing on lo"); err != nil {
					t.Error(err)
					return
				}
				if err := netnstest.Send(ns, dgs, 10); err != nil {
					t.Error(err)
				}
			}()
			wg.Wait()
			if code != 0 {
				t.Fatalf("exit status %d\n%s", code, stderr.String())
			}
			want := fmt.Sprintf("the kernel received %d, dropped 0", len(dgs))
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			switch tt.name {
			case "live":
				var read bytes.Buffer
				if code := run([]string{"read", filepath.Join(dir, "live.pcapng")}, &read, os.Stderr); code != 0 {
					t.Fatalf("read of the -w file: exit status %d", code)
				}
				if stdout.String() != read.String() || strings.Count(read.String(), "\n") != len(dgs) {
					t.Errorf("live printed %d lines, read of its capture %d, %d sent", strings.Count(stdout.String(), "\n"), strings.Count(read.String(), "\n"), len(dgs))
				}
				if !regexp.MustCompile(fmt.Sprintf(`game packets +%d `, len(dgs))).MatchString(stderr.String()) {
					t.Errorf("no stats summary for %d game packets:\n%s", len(dgs), stderr.String())
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
			case "doctor":
				// Each finding as it is found, then the sorted list: the two
				// players' joins twice.
				out := stdout.String()
				if strings.Count(out, " join: ") != 4 || !strings.Contains(out, "\n\n") || !strings.Contains(out, " findings: ") {
					t.Errorf("doctor -i:\n%s", out)
				}
			case "stats":
				if !strings.Contains(stdout.String(), "live: lo") || !regexp.MustCompile(fmt.Sprintf(`game packets +%d `, len(dgs))).MatchString(stdout.String()) {
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
	ns := netnstest.New(t)
	dgs := netnstest.Game(t, synth.Config{Era: decode.Legacy, Players: 1, Duration: 2 * time.Second, Seed: 9})
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
	if err := waitFor(&stderr, "capturing on lo"); err != nil {
		t.Fatal(err)
	}
	if err := netnstest.Send(ns, dgs, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// ip netns exec execs the command: the signal reaches pmdump.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pmdump live after Ctrl-C: %v\n%s", err, stderr.String())
	}
	want := fmt.Sprintf("the kernel received %d, dropped 0", len(dgs))
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "Conversations") {
		t.Errorf("no summary saying %q:\n%s", want, stderr.String())
	}
	var read bytes.Buffer
	if code := run([]string{"read", out}, &read, os.Stderr); code != 0 || strings.Count(read.String(), "\n") != len(dgs) {
		t.Errorf("read of the -w file: exit status %d, %d packets; %d sent", code, strings.Count(read.String(), "\n"), len(dgs))
	}
}

// waitFor waits up to 10 s for a program's output to say what.
func waitFor(out *syncBuffer, what string) error {
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), what); {
		if time.Now().After(deadline) {
			return fmt.Errorf("the output does not say %q after 10 s:\n%s", what, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// tui -i --duration ends the capture after the duration, as live does: the
// engine reads to the end and finishes (the findings that need every state
// come then), while the TUI stays open.
func TestTUILiveDuration(t *testing.T) {
	t.Parallel()
	ns := netnstest.New(t)
	dgs := netnstest.Game(t, synth.Config{Era: decode.Modern, Players: 1, Duration: time.Second, Seed: 3})
	err := netnstest.Run(ns, func() error {
		l := liveFlags{ifaces: []string{"lo"}, ringMiB: 4, duration: 3 * time.Second} // ample for the game to be sent under load
		live, err := l.open()
		if err != nil {
			return err
		}
		defer live.Close()
		e := engine.New(engine.Config{Work: engine.Index})
		defer e.Close()
		ended := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // the TUI quitting: not before the test's end
		start := time.Now()
		go func() { ended <- liveStarter(live, l.duration)(ctx, e) }()
		if err := netnstest.Send(ns, dgs, 0); err != nil {
			return err
		}
		select {
		case err := <-ended:
			if err != nil {
				return err
			}
		case <-time.After(20 * time.Second):
			return fmt.Errorf("the capture still runs 20 s after it started, with --duration %v", l.duration)
		}
		took := time.Since(start)
		if p := e.Progress(); !p.Read || p.Packets != len(dgs) || took < l.duration {
			return fmt.Errorf("after %v: finished %v, %d packets of %d sent (--duration %v)", took, p.Read, p.Packets, len(dgs), l.duration)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The summary accounts for every frame the kernel received: captured,
// dropped, or come while the capture ended (after -c, say) and not read.
func TestLiveSummary(t *testing.T) {
	for _, tt := range []struct {
		frames            int
		received, dropped uint64
		want              string
	}{
		{761, 761, 0, "761 frames captured on lo; the kernel received 761, dropped 0\n"},
		{5, 761, 0, "5 frames captured on lo; the kernel received 761, dropped 0; 756 came as the capture ended and were not read\n"},
		{4196, 4228, 2, "4196 frames captured on lo; the kernel received 4228, dropped 2; 30 came as the capture ended and were not read\n"},
	} {
		r := liveRun{ifaces: []string{"lo"}, received: tt.received, dropped: tt.dropped}
		r.counters.Frames = tt.frames
		var b bytes.Buffer
		r.summary(&b)
		if got := strings.TrimPrefix(b.String(), "pmdump: "); got != tt.want {
			t.Errorf("%d captured, %d received, %d dropped: %q, want %q", tt.frames, tt.received, tt.dropped, got, tt.want)
		}
	}
}
