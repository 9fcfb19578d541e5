package drive

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameserver"
	"github.com/pmdump/pmdump/synth"
)

// testScript is a short game: two clients, inputs on time, late (the
// server rewinds) and early (it waits for their frame), and a file request.
var testScript = gameserver.Script{
	Seed:   11,
	Frames: 110,
	Clients: []gameserver.ScriptClient{
		{Color: 5, Hostname: "alpha", Join: 20, Inputs: []gameserver.Input{
			{Read: 28, Frame: 28, Move: 0x02},
			{Read: 40, Frame: 37, Move: 0x12},
			{Read: 52, Frame: 55, Move: 0x01},
			{Read: 70, Frame: 69, Move: 0x05},
			{Read: 88, Frame: 88, Move: 0x00},
		}},
		{Color: 5, Hostname: "beta", Join: 45, Inputs: []gameserver.Input{
			{Read: 50, Frame: 48, Move: 0x01},
			{Read: 64, Frame: 64, Move: 0x22},
			{Read: 80, Frame: 76, Move: 0x08},
		}, Files: []int32{60}},
	},
}

// record writes the script's game to a capture and loads it.
func record(t *testing.T, s gameserver.Script) *Recording {
	t.Helper()
	return recordWith(t, func(w synth.PacketWriter) error { return gameserver.Record(s, w) })
}

// recordWith writes a capture with write and loads it; the recording is
// closed when the test ends.
func recordWith(t *testing.T, write func(w synth.PacketWriter) error) *Recording {
	t.Helper()
	path := filepath.Join(t.TempDir(), "game.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := synth.NewCaptureWriter(f, synth.Pcap)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := Load(context.Background(), []string{path}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	return rec
}

// drive runs the recording against a fresh test server in lockstep,
// running frames of frameTime; it returns the summary, the events and how
// many late inputs made the server go back.
func drive(t *testing.T, rec *Recording, seed int64, frameTime time.Duration) (*Summary, []Event, int) {
	t.Helper()
	return driveWith(t, rec, gameserver.Options{Seed: seed, FrameTime: frameTime, Lockstep: true})
}

// driveWith runs the recording against a fresh test server with options
// opt, as drive does.
func driveWith(t *testing.T, rec *Recording, opt gameserver.Options) (*Summary, []Event, int) {
	t.Helper()
	srv, err := gameserver.Listen("127.0.0.1:0", opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, 0) }()
	var events []Event
	o := Options{Timeout: 3 * time.Second, OnEvent: func(e Event) { events = append(events, e) }}
	if opt.Rule == gameserver.AtRead {
		o.Lead = -1 // this server enters an input when it reads it: none may go early
	}
	sum, err := Run(ctx, rec, srv.Addr().String(), o)
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return sum, events, srv.Rewinds()
}

func TestScheduleOfRecording(t *testing.T) {
	rec := record(t, testScript)
	if len(rec.Clients) != 2 {
		t.Fatalf("%d clients, want 2", len(rec.Clients))
	}
	for i, sc := range testScript.Clients {
		c := rec.Clients[i]
		if c.Join != (Key{0, sc.Join}) || c.Hostname != sc.Hostname || c.Color != sc.Color {
			t.Errorf("client %d: join %v host %q color %d, want frame %d %q %d", i+1, c.Join, c.Hostname, c.Color, sc.Join, sc.Hostname, sc.Color)
		}
	}
	// Every input in the frame the script had the server read it in.
	var got, want []string
	for _, a := range rec.Actions {
		if a.Kind == Input || a.Kind == File {
			got = append(got, a.At.String()+" "+string(a.Kind))
		}
		if a.Check == Uncertain {
			t.Errorf("uncertain: %s: %s", a, a.Reason)
		}
	}
	for _, sc := range testScript.Clients {
		for _, in := range sc.Inputs {
			want = append(want, Key{0, in.Read}.String()+" cdat")
		}
		for _, f := range sc.Files {
			want = append(want, Key{0, f}.String()+" crfl")
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("schedule\n got %v\nwant %v", got, want)
	}
}

func TestDriveReproduces(t *testing.T) {
	rec := record(t, testScript)
	sum, events, rewinds := drive(t, rec, testScript.Seed, 2*time.Millisecond)
	if !sum.Reproduced || sum.Different != 0 || sum.Missing != 0 || sum.Equal != rec.States {
		t.Fatalf("not reproduced: %+v (recorded %d states); first divergence %+v", sum.Counts, rec.States, sum.First)
	}
	joins := 0
	for _, e := range events {
		if e.Event == "join" {
			joins++
		}
	}
	if joins != 2 || events[len(events)-1].Event != "summary" {
		t.Errorf("%d join events, last event %q", joins, events[len(events)-1].Event)
	}
	// The script's late inputs made the live server go back, as in the
	// recording: its provisional states were reproduced too.
	if want := 4; rewinds != want {
		t.Errorf("the server went back %d times, want %d (the script's late inputs)", rewinds, want)
	}
}

func TestDriveNamesMovedInput(t *testing.T) {
	rec := record(t, testScript)
	// The server read client 1's input of frame 40 (late: for frame 37)
	// in frame 40; send it one frame later.
	var moved *Action
	for _, a := range rec.Actions {
		if a.Kind == Input && a.Client == 1 && a.At.Frame == 40 {
			moved = a
		}
	}
	if moved == nil {
		t.Fatal("no input read in frame 40")
	}
	moved.At = moved.At.Add(1)
	sum, _, _ := drive(t, rec, testScript.Seed, 2*time.Millisecond)
	if sum.Reproduced || sum.First == nil {
		t.Fatalf("reproduced with an input moved: %+v", sum.Counts)
	}
	dv := sum.First
	t.Log(dv.Text)
	if dv.At != (Key{0, 41}) || dv.Input != moved || dv.Player != 1 && dv.Player != 2 {
		t.Fatalf("first divergence at %v naming %v, want frame 41 naming %v: %s", dv.At, dv.Input, moved, dv.Text)
	}
	var fields []string
	for _, f := range dv.Fields {
		if f.Player == 1 {
			fields = append(fields, f.Field)
		}
	}
	// 0x12 is right and jump; player 1 had right before.
	if !slices.Contains(fields, "jump") {
		t.Errorf("fields of player 1 %v do not name jump: %s", fields, dv.Text)
	}
	if !strings.Contains(dv.Text, "frame 41: player 1") {
		t.Errorf("text %q", dv.Text)
	}
	// Only the provisional state differs: the server rewinds to frame 37
	// when the input comes, so later states are the recorded ones again.
	if sum.Different != rec.count(41) {
		t.Errorf("%d states differ %v, want the %d clients' states of frame 41; late actions %d", sum.Different, sum.Differ, rec.count(41), sum.LateActions)
	}
}

// count is how many clients were sent a state of frame f.
func (r *Recording) count(f int32) int {
	n := 0
	for _, c := range r.Clients {
		if _, ok := c.states[Key{0, f}]; ok {
			n++
		}
	}
	return n
}

// A game synth.Generate recorded (modern era, with loss and a level
// change): its server enters every input in the frame it reads it in, and
// the test server does so with the AtRead rule.
func TestDriveReproducesSynth(t *testing.T) {
	cfg := synth.Config{Era: decode.Modern, Players: 3, Duration: 2 * time.Second, Seed: 8, LevelChange: time.Second, Loss: 0.02}
	rec := recordWith(t, func(w synth.PacketWriter) error {
		_, err := synth.Generate(cfg, w, nil)
		return err
	})
	if len(rec.Clients) != 3 {
		t.Fatalf("%d clients, want 3", len(rec.Clients))
	}
	sum, _, _ := driveWith(t, rec, gameserver.Options{Seed: cfg.Seed, Rule: gameserver.AtRead,
		LevelDone: int32(cfg.LevelChange/synth.FrameTime) - gameserver.LevelDoneFrames, FrameTime: 2 * time.Millisecond, Lockstep: true})
	if rec.End.SLSN != 1 {
		t.Errorf("the recording ends in level sequence %d, want 1", rec.End.SLSN)
	}
	if !sum.Reproduced || sum.Equal != rec.States {
		t.Fatalf("not reproduced: %+v (recorded %d states, %v uncertain); first divergence %+v", sum.Counts, rec.States, sum.Uncertain, sum.First)
	}
}

// An input whose state is not in the capture (the network lost it) is
// uncertain, and says why; the others keep their frames.
func TestUncertainInput(t *testing.T) {
	rec := record(t, testScript)
	var in *Action
	for _, a := range rec.Actions {
		if a.Kind == Input && a.Client == 1 && a.At.Frame == 28 {
			in = a
		}
	}
	if in == nil || in.Check != Confirmed {
		t.Fatalf("input of frame 28: %v", in)
	}
	delete(rec.players, Key{0, 29})
	for _, a := range rec.Actions {
		a.At, a.Check, a.Reason = a.Ordered, "", ""
		if a.Kind == Join {
			a.At = rec.Clients[a.Client-1].Join
		}
	}
	rec.check()
	if in.Check != Uncertain || in.Reason != "the state of frame 29 is not in the capture" || in.At.Frame != 28 {
		t.Errorf("input of frame 28: %s, %s (%s)", in, in.Check, in.Reason)
	}
	if u := rec.Uncertain(); len(u) != 1 || u[0] != in {
		t.Errorf("uncertain: %v", u)
	}
}

// dropWriter writes a capture without the datagrams drop matches.
type dropWriter struct {
	w    synth.PacketWriter
	drop func(src netip.AddrPort, payload []byte) bool
}

func (d dropWriter) WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error {
	if d.drop(src, payload) {
		return nil
	}
	return d.w.WriteDatagram(ts, src, dst, payload)
}

// A join request the capture lost is made from the join reply; the run
// is still exact.
func TestLostJoinRequest(t *testing.T) {
	second := synth.ClientAddr(2)
	drop := func(src netip.AddrPort, p []byte) bool { return src == second && string(p[:4]) == "cjon" }
	rec := recordWith(t, func(w synth.PacketWriter) error { return gameserver.Record(testScript, dropWriter{w, drop}) })
	u := rec.Uncertain()
	if len(u) != 1 || u[0].Kind != Join || u[0].Client != 2 || u[0].At != (Key{0, 45}) {
		t.Fatalf("uncertain %v, want the join of client 2 in frame 45", u)
	}
	sum, _, _ := drive(t, rec, testScript.Seed, 2*time.Millisecond)
	if !sum.Reproduced {
		t.Fatalf("not reproduced: %+v; %v", sum.Counts, sum.First)
	}
}

// Two games read as one capture (the server was restarted): --conv picks
// one, and drive plays that one.
func TestTwoGames(t *testing.T) {
	dir := t.TempDir()
	second := gameserver.Script{Seed: 12, Frames: 60, Clients: []gameserver.ScriptClient{
		{Color: 9, Hostname: "gamma", Join: 12, Inputs: []gameserver.Input{{Read: 20, Frame: 19, Move: 0x01}}},
	}}
	paths := []string{filepath.Join(dir, "one.pcap"), filepath.Join(dir, "two.pcap")}
	for i, s := range []gameserver.Script{testScript, second} {
		if err := gameserver.RecordFile(paths[i], s); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(context.Background(), paths, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "holds 2 games; pick one with --conv") {
		t.Fatalf("two games without --conv: %v", err)
	}
	rec, err := Load(context.Background(), paths, LoadOptions{Conv: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if len(rec.Clients) != 1 || rec.Clients[0].Hostname != "gamma" || rec.Clients[0].Join != (Key{0, 12}) {
		t.Fatalf("clients %+v", rec.Clients)
	}
	if u := rec.Uncertain(); len(u) != 0 {
		t.Errorf("uncertain: %v", u)
	}
	sum, _, _ := drive(t, rec, second.Seed, 2*time.Millisecond)
	if !sum.Reproduced {
		t.Fatalf("not reproduced: %+v; %v", sum.Counts, sum.First)
	}
}

// Against a server in real time (no lockstep), which goes on sending
// states after the recording's end, the run ends there too; on a busy
// machine some inputs may arrive late, so only the counts are checked.
func TestDriveRealTimeEnds(t *testing.T) {
	rec := record(t, testScript)
	// The test server starts its frames at once: the recording's first
	// join is at frame 20, 100 ms in.
	sum, _, _ := driveWith(t, rec, gameserver.Options{Seed: testScript.Seed, FrameTime: 5 * time.Millisecond})
	if sum.Equal+sum.Different+sum.Missing != rec.States || sum.Unrecorded != 0 {
		t.Errorf("counts %+v for %d recorded states", sum.Counts, rec.States)
	}
}

// Every rewind version is driven as its server speaks it: the versions
// without a handshake join with cjon straight to the one server socket and
// hear everything from it; from 2024-06 the inputs and acknowledgements
// carry the level sequence. The test script's game and a synthetic game
// with a level change, recorded in each version and driven against the test
// server of that version, are reproduced state for state.
func TestDriveEveryVersion(t *testing.T) {
	for _, v := range decode.Versions() {
		if v.Sync() != decode.Rewind {
			continue
		}
		t.Run(v.String(), func(t *testing.T) {
			s := testScript
			s.Version = v
			rec := record(t, s)
			if rec.Version != v {
				t.Fatalf("the recording's version is %s", rec.Version)
			}
			sum, _, rewinds := driveWith(t, rec, gameserver.Options{Version: v, Seed: s.Seed, FrameTime: 2 * time.Millisecond, Lockstep: true})
			if !sum.Reproduced || sum.Equal != rec.States || rewinds != 4 {
				t.Fatalf("script: not reproduced: %+v (recorded %d states, %d rewinds); first divergence %+v", sum.Counts, rec.States, rewinds, sum.First)
			}
			cfg := synth.Config{Era: v, Players: 2, Duration: 2 * time.Second, Seed: 8, LevelChange: time.Second}
			rec = recordWith(t, func(w synth.PacketWriter) error {
				_, err := synth.Generate(cfg, w, nil)
				return err
			})
			sum, _, _ = driveWith(t, rec, gameserver.Options{Version: v, Seed: cfg.Seed, Rule: gameserver.AtRead,
				LevelDone: int32(cfg.LevelChange/synth.FrameTime) - gameserver.LevelDoneFrames, FrameTime: 2 * time.Millisecond, Lockstep: true})
			if rec.End.SLSN != 1 || !sum.Reproduced || sum.Equal != rec.States {
				t.Fatalf("synth: not reproduced: %+v (recorded %d states, ending in level sequence %d); first divergence %+v", sum.Counts, rec.States, rec.End.SLSN, sum.First)
			}
		})
	}
}
