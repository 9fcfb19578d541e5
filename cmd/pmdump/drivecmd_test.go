package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
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
	srv, err := gameserver.Listen("127.0.0.1:0", gameserver.Options{Seed: seed, FrameTime: 2 * time.Millisecond, Lockstep: true})
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
		{"no server", []string{"drive", path, "--to", freePort(t), "--timeout", "300ms"}, 2, "no answer (5678)"},
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
