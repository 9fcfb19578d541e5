package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/gameserver"
)

// driveScript is a game of one client; the server runs 70 frames, so the
// client is sent the states of frames 16 to 70: 55 states.
var driveScript = gameserver.Script{
	Seed:   3,
	Frames: 70,
	Clients: []gameserver.ScriptClient{
		{Color: 2, Hostname: "cli", Join: 15, Inputs: []gameserver.Input{
			{Read: 20, Frame: 20, Move: 0x02},
			{Read: 33, Frame: 30, Move: 0x11},
			{Read: 45, Frame: 45, Move: 0x00},
		}},
	},
}

// testServer runs a test game server in lockstep until the test ends.
func testServer(t *testing.T, seed int64) string {
	t.Helper()
	return startServer(t, gameserver.Options{Seed: seed, FrameTime: 2 * time.Millisecond, Lockstep: true})
}

// startServer runs a test game server with opt until the test ends.
func startServer(t *testing.T, opt gameserver.Options) string {
	t.Helper()
	srv, err := gameserver.Listen("127.0.0.1:0", opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx, 0); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Addr().String()
}

func TestDriveCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.pcap")
	if err := gameserver.RecordFile(path, driveScript); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"drive", path, "--to", testServer(t, driveScript.Seed)}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"client 1 joined as player 1 in frame 15", "states: 55 equal, 0 different, 0 missing", "reproduced: the server sent all 55 recorded states again"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// The same as JSON events, the summary last.
	out.Reset()
	if code := run([]string{"drive", path, "--json", "--to", testServer(t, driveScript.Seed)}, &out, &errb); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var first, last map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	sum, _ := last["summary"].(map[string]any)
	if first["event"] != "schedule" || last["event"] != "summary" || sum["reproduced"] != true || sum["equal"] != 55.0 {
		t.Errorf("events: first %v, last %v", first, last)
	}
}

func TestDriveExitStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.pcap")
	if err := gameserver.RecordFile(path, driveScript); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"another level diverges", []string{"drive", path, "--to", testServer(t, driveScript.Seed+1)}, 1, "first divergence, client 1 (player 1), level sequence 0: frame 16:"},
		{"no server", []string{"drive", path, "--to", freePort(t), "--wait", "300ms"}, 2, "no answer (5678) from a game server at"},
		{"server started too early", []string{"drive", path, "--to", runningServer(t, driveScript.Seed)}, 2, "joins in frame 15, so drive had to hear the server by frame 12"},
		{"retries without exec", []string{"drive", path, "--to", freePort(t), "--retries", "2"}, 1, "--retries needs --exec"},
		{"no --to", []string{"drive", path}, 1, "--to HOST:PORT is required"},
		{"no capture", []string{"drive", filepath.Join(t.TempDir(), "none.pcap"), "--schedule"}, 2, "cannot read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(c.args, &out, &errb)
			if code != c.code || !strings.Contains(out.String()+errb.String(), c.want) {
				t.Errorf("exit %d, want %d and %q in:\n%s%s", code, c.code, c.want, out.String(), errb.String())
			}
		})
	}
}

// runningServer runs a test game server in real time, not waiting for
// drive, and returns its address once it is past frame 100.
func runningServer(t *testing.T, seed int64) string {
	t.Helper()
	addr := startServer(t, gameserver.Options{Seed: seed, FrameTime: 2 * time.Millisecond})
	time.Sleep(250 * time.Millisecond)
	return addr
}

// TestMain lets the test binary be the game server drive --exec starts:
// PMDUMP_TEST_GAMESERVER=ADDR,SEED runs a test server in lockstep there
// until it is stopped.
func TestMain(m *testing.M) {
	if v := os.Getenv("PMDUMP_TEST_GAMESERVER"); v != "" {
		addr, seed, _ := strings.Cut(v, ",")
		n, _ := strconv.ParseInt(seed, 10, 64)
		srv, err := gameserver.Listen(addr, gameserver.Options{Seed: n, FrameTime: 2 * time.Millisecond, Lockstep: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println("game server listening on", addr)
		srv.Run(context.Background(), 0)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// drive --exec starts the server, keeps its output in --exec-log and
// stops it at the end.
func TestDriveExecCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.pcap")
	if err := gameserver.RecordFile(path, driveScript); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	log := filepath.Join(t.TempDir(), "server.log")
	cmd := fmt.Sprintf("PMDUMP_TEST_GAMESERVER=%s,%d exec %s", addr, driveScript.Seed, strconv.Quote(self))
	var out, errb bytes.Buffer
	if code := run([]string{"drive", path, "--to", addr, "--exec", cmd, "--exec-log", log, "--retries", "1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"server answered in frame 0", "reproduced: the server sent all 55 recorded states again", "margin before each packet's frame: least"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "game server listening on "+addr) || !strings.Contains(errb.String(), log) {
		t.Errorf("server output %q; stderr %q", b, errb.String())
	}
}
