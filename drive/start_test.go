package drive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameserver"
	"github.com/pmdump/pmdump/synth"
)

// freePort returns a loopback UDP address no socket holds now.
func freePort(t *testing.T) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// serve runs a test server on addr until the test ends.
func serve(t *testing.T, addr string, opt gameserver.Options) {
	t.Helper()
	srv, err := gameserver.Listen(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, 0) }()
	t.Cleanup(func() { cancel(); <-done })
}

// A server that has run past the recording's first join when drive first
// hears it gets a plain refusal naming both frames, not a divergence.
func TestDriveRefusesLateStart(t *testing.T) {
	rec := record(t, testScript) // first join in frame 20
	addr := freePort(t)
	serve(t, addr, gameserver.Options{Seed: testScript.Seed, FrameTime: 2 * time.Millisecond})
	time.Sleep(300 * time.Millisecond) // 150 frames
	sum, err := Run(context.Background(), rec, addr, Options{Wait: 2 * time.Second})
	var late *LateStartError
	if !errors.As(err, &late) {
		t.Fatalf("Run: %v (summary %+v), want a LateStartError", err, sum)
	}
	if late.Join.Frame != 20 || late.Server.Frame <= late.Needed.Frame || late.Needed.Frame >= 20 {
		t.Errorf("refusal %+v", late)
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("already at frame %d", late.Server.Frame)) || !strings.Contains(msg, "joins in frame 20") {
		t.Errorf("message %q", msg)
	}
}

// drive started before the server waits for it (Wait, not the silence
// timeout) and then keeps the schedule.
func TestDriveWaitsForServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for the network in real time (seconds)")
	}
	rec := record(t, testScript)
	addr := freePort(t)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		serve(t, addr, gameserver.Options{Seed: testScript.Seed, FrameTime: 2 * time.Millisecond, Lockstep: true})
	}()
	sum, err := Run(context.Background(), rec, addr, Options{Wait: 10 * time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Reproduced || sum.Equal != rec.States || sum.Tries != 1 {
		t.Fatalf("not reproduced: %+v (recorded %d states)", sum, rec.States)
	}
	// Every packet with a deadline has a margin.
	if sum.Margin == nil || sum.Margin.Packets != len(rec.Actions) || sum.Margin.P50MS <= 0 {
		t.Errorf("margins %+v for %d actions", sum.Margin, len(rec.Actions))
	}
	// Without a server, Wait bounds the wait.
	start := time.Now()
	if _, err := Run(context.Background(), rec, freePort(t), Options{Wait: 600 * time.Millisecond}); err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("no server: %v after %v", err, time.Since(start))
	}
}

// A server that never changes level, driven with a recording that does,
// ends the run once no recorded state can come any more.
func TestDriveStopsPastRecovery(t *testing.T) {
	cfg := synth.Config{Era: decode.Modern, Players: 1, Duration: 2 * time.Second, Seed: 8, LevelChange: time.Second}
	rec := recordWith(t, func(w synth.PacketWriter) error {
		_, err := synth.Generate(cfg, w, nil)
		return err
	})
	if rec.End.SLSN != 1 {
		t.Fatalf("the recording ends in level sequence %d", rec.End.SLSN)
	}
	addr := freePort(t)
	serve(t, addr, gameserver.Options{Seed: cfg.Seed, Rule: gameserver.AtRead, FrameTime: time.Millisecond, Lockstep: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := Run(ctx, rec, addr, Options{Lead: -1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reproduced || sum.Missing == 0 || !strings.Contains(sum.Stopped, "past recovery") {
		t.Errorf("summary %+v", sum)
	}
}

// TestMain lets the test binary be a game server that Exec starts:
// PMDRIVE_TEST_SERVER=ADDR runs the test server there until it is killed;
// with PMDRIVE_TEST_BADFIRST=FILE the first such server (the one that
// makes FILE) plays another level, so its run diverges.
func TestMain(m *testing.M) {
	if addr := os.Getenv("PMDRIVE_TEST_SERVER"); addr != "" {
		seed := testScript.Seed
		if f := os.Getenv("PMDRIVE_TEST_BADFIRST"); f != "" {
			if fh, err := os.OpenFile(f, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				fh.Close()
				seed++
			}
		}
		srv, err := gameserver.Listen(addr, gameserver.Options{Seed: seed, FrameTime: 2 * time.Millisecond, Lockstep: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println("test server on", addr)
		// Its scheduling policy (field 41 of /proc/self/stat; 0 is the
		// ordinary one), where the system tells it.
		if b, err := os.ReadFile("/proc/self/stat"); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 {
				if f := strings.Fields(string(b[i+1:])); len(f) > 38 {
					fmt.Println("policy", f[38])
				}
			}
		}
		srv.Run(context.Background(), 0)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// With Exec drive starts the server itself, keeps its output and stops it
// at the end; with Retries a diverged run is run again on a fresh one.
func TestDriveExec(t *testing.T) {
	rec := record(t, testScript)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	var out bytes.Buffer
	cmd := "PMDRIVE_TEST_SERVER=" + addr + " exec " + strconv.Quote(self)
	sum, err := Run(context.Background(), rec, addr, Options{Exec: cmd, ExecOutput: &out})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Reproduced || sum.Tries != 1 || !strings.Contains(out.String(), "test server on "+addr) {
		t.Fatalf("summary %+v, server output %q", sum, out.String())
	}
	// drive's threads may run in real time (as root); the server it
	// starts does not.
	if strings.Contains(out.String(), "policy") && !strings.Contains(out.String(), "policy 0\n") {
		t.Errorf("the server runs with another scheduling policy: %q (realtime %v)", out.String(), sum.Margin.Realtime)
	}
	// The server was stopped: the port is free again.
	if c, err := net.ListenPacket("udp", addr); err != nil {
		t.Errorf("the server still holds %s: %v", addr, err)
	} else {
		c.Close()
	}

	bad := filepath.Join(t.TempDir(), "first")
	cmd = "PMDRIVE_TEST_BADFIRST=" + bad + " " + cmd
	var events []string
	sum, err = Run(context.Background(), rec, addr, Options{Exec: cmd, Retries: 2, OnEvent: func(e Event) { events = append(events, e.Event) }})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Reproduced || sum.Tries != 2 || strings.Count(strings.Join(events, " "), "retry") != 1 {
		t.Errorf("summary %+v after events %v", sum, events)
	}
	// Without retries the diverged run is the outcome.
	os.Remove(bad)
	if sum, err = Run(context.Background(), rec, addr, Options{Exec: cmd}); err != nil || sum.Reproduced || sum.Tries != 1 {
		t.Errorf("one try: %+v, %v", sum, err)
	}
}
