package engine_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/replay"
)

// run runs an engine over inputs and returns what it rebuilt: every state
// event, the timeline's entries per line, the dif figures and the health.
type rebuilt struct {
	states  []string
	lines   []string // the timeline's lines, in order
	entries map[string][]string
	difs    []engine.DifStats
	health  []*engine.ClientHealth
}

func rebuildAll(t *testing.T, cfg engine.Config, inputs ...string) rebuilt {
	t.Helper()
	return rebuildWith(t, cfg, nil, nil, inputs...)
}

// rebuildWith is rebuildAll calling read once the engine has read the
// inputs, before it waits for the rebuild, and done once it has ended.
func rebuildWith(t *testing.T, cfg engine.Config, read, done func(*engine.Engine), inputs ...string) rebuilt {
	t.Helper()
	var r rebuilt
	cfg.Work |= engine.Index | engine.Timeline | engine.Health
	cfg.OnEvent = func(ev engine.Event) {
		if s, ok := ev.(engine.StateEvent); ok {
			st := s.State
			r.states = append(r.states, fmt.Sprintf("%d %d %v %d %d:%d→%d %v %x %x %d", st.Seq, st.N, st.Client, st.Player, st.SLSN, st.Src, st.Dst, st.Status, st.Sum, st.Hash, st.BaseSeq))
		}
	}
	e := engine.New(cfg)
	defer e.Close()
	if err := e.Run(context.Background(), inputs...); err != nil {
		t.Fatal(err)
	}
	if read != nil {
		read(e)
	}
	e.Wait()
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	if p := e.Progress(); !p.Read || !p.Done || p.Rebuilt != p.Difs || p.Difs == 0 {
		t.Fatalf("progress after Wait: %+v", p)
	}
	r.entries = map[string][]string{}
	for _, l := range e.Lines() {
		r.lines = append(r.lines, l.String())
		for _, en := range e.Entries(nil, l, 0, -1) {
			r.entries[l.Client.String()] = append(r.entries[l.Client.String()], fmt.Sprintf("%+v %v %v", en, en.Acked(), en.AckTime()))
		}
	}
	st := e.Stats()
	r.difs, r.health = st.Difs, st.Health
	if done != nil {
		done(e)
	}
	return r
}

// The rebuild behind the fast pass gives what the rebuild in step with it
// gives: the same states in the same order, the same timeline (bases,
// checkpoints, acks), the same figures; also when its backlog spills to a
// temporary file.
func TestRebuildBehindSame(t *testing.T) {
	for _, in := range []string{"modern/basic/basic.pcap", "legacy/lossy/capture.pcap"} {
		path := realcap.Path(t, in)
		want := rebuildAll(t, engine.Config{SHA256: true}, path)
		for _, budget := range []int{3 << 10} {
			got := rebuildAll(t, engine.Config{RebuildBehind: true, MemoryBudget: budget, SHA256: true}, path)
			if !reflect.DeepEqual(got.states, want.states) {
				t.Errorf("%s, budget %d: %d states, want %d; they differ", in, budget, len(got.states), len(want.states))
			}
			if !reflect.DeepEqual(got.entries, want.entries) {
				t.Errorf("%s, budget %d: the timelines differ", in, budget)
			}
			if !reflect.DeepEqual(got.difs, want.difs) || !reflect.DeepEqual(got.health, want.health) {
				t.Errorf("%s, budget %d: the figures differ", in, budget)
			}
		}
	}
}

// The fast pass never waits for the rebuild: with the rebuild held up, Run
// still reads, decodes and indexes the whole capture; the states come once
// the rebuild may go on.
func TestFastPassNotHeldBack(t *testing.T) {
	path := realcap.Path(t, "modern/basic/basic.pcap")
	hold := make(chan struct{})
	e := engine.New(engine.Config{
		Work: engine.Index | engine.Timeline | engine.Health, RebuildBehind: true,
		TempDir:      t.TempDir(),
		MemoryBudget: 1 << 20, // the backlog spills
		Inspect:      func(*replay.State, []byte, []byte) { <-hold },
	})
	defer e.Close()
	ran := make(chan error, 1)
	go func() { ran <- e.Run(context.Background(), path) }()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		close(hold)
		t.Fatal("Run waits for the rebuild")
	}
	p := e.Progress()
	if !p.Read || p.Done || p.Packets != e.Index().Len() || p.Packets == 0 || p.Difs == 0 || p.Rebuilt > 0 {
		t.Errorf("progress with the rebuild held: %+v", p)
	}
	if !e.Rebuilding() {
		t.Error("not rebuilding while held")
	}
	close(hold)
	e.Wait()
	p = e.Progress()
	if !p.Done || p.Rebuilt != p.Difs {
		t.Errorf("progress after Wait: %+v", p)
	}
	n := 0
	for _, l := range p.Lines {
		if l.Rebuilt != l.Difs {
			t.Errorf("line %v: %d of %d rebuilt", l.Line, l.Rebuilt, l.Difs)
		}
		n += l.Rebuilt
	}
	if n != p.Difs {
		t.Errorf("lines have %d states, want %d", n, p.Difs)
	}
}

// Closing the engine mid-rebuild stops the rebuild and leaves no temporary
// file.
func TestCloseMidRebuild(t *testing.T) {
	dir := t.TempDir()
	hold := make(chan struct{})
	e := engine.New(engine.Config{
		Work: engine.Index | engine.Timeline | engine.Health, RebuildBehind: true, TempDir: dir, MemoryBudget: 64 << 10,
		Inspect: func(*replay.State, []byte, []byte) { <-hold },
	})
	if err := e.Run(context.Background(), realcap.Path(t, "modern/basic/basic.pcap")); err != nil {
		t.Fatal(err)
	}
	if !e.Rebuilding() {
		t.Fatal("not rebuilding while held")
	}
	go func() { time.Sleep(50 * time.Millisecond); close(hold) }()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e.Rebuilding() {
		t.Error("still rebuilding after Close")
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range left {
		t.Errorf("temporary file left: %s", f.Name())
	}
}

// The rebuild waits while Run reads a capture file, but not while it reads
// standard input, which may be a live capture piped in: states come while
// the pipe is still open.
func TestRebuildBesideStdin(t *testing.T) {
	data, err := os.ReadFile(realcap.Path(t, "modern/basic/basic.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	e := engine.New(engine.Config{Work: engine.Index | engine.Timeline, RebuildBehind: true, TempDir: t.TempDir()})
	defer e.Close()
	ran := make(chan error, 1)
	go func() { ran <- e.Run(context.Background(), "-") }()
	if _, err := w.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for e.Progress().Rebuilt == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := e.Progress(); p.Rebuilt == 0 || p.Read {
		t.Errorf("half the capture piped in: %+v", p)
	}
	if _, err := w.Write(data[len(data)/2:]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}
