package tui

import (
	"context"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/replay"
)

// With the rebuild behind a capture of several clients, G in the packet
// list asks for the client of the last packet first: its states are all
// in while most of the other clients' still wait; the state view then asks
// for the client it shows.
func TestCursorRebuiltFirst(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	e := engine.New(engine.Config{Work: engine.Index | engine.Timeline | engine.Health, RebuildBehind: true,
		Inspect: func(*replay.State, []byte, []byte) { once.Do(func() { <-release }) }})
	defer e.Close()
	if err := e.Run(context.Background(), realcap.Path(t, "modern/multi/multi.pcap")); err != nil {
		close(release)
		t.Fatal(err)
	}
	m := New(Options{Engine: e, Title: "multi"})
	defer m.Close()
	m.Init() // its ticks are not run: the test looks at the engine itself
	drive(t, m, tea.WindowSizeMsg{Width: 120, Height: 40}, "G")
	x := e.Index()
	last := x.Entry(x.Len() - 1)
	if m.wanted.line.Conv != int(last.Conv) || m.wanted.upTo != int(last.N) {
		t.Fatalf("after G: %+v wanted first, want conversation %d up to packet %d", m.wanted, last.Conv, last.N)
	}
	close(release)
	var p engine.Progress
	for start := time.Now(); ; {
		p = e.Progress()
		done := false
		for _, lp := range p.Lines {
			if lp.Line == m.wanted.line && lp.Rebuilt == lp.Difs {
				done = true
			}
		}
		if done || !e.Rebuilding() {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatal("the line wanted is not rebuilt after a minute")
		}
		time.Sleep(time.Millisecond)
	}
	others, rebuilt := 0, 0
	for _, lp := range p.Lines {
		if lp.Line != m.wanted.line {
			others += lp.Difs
			rebuilt += lp.Rebuilt
		}
	}
	t.Logf("%v rebuilt with %d of the other clients' %d states", m.wanted.line, rebuilt, others)
	if others == 0 || rebuilt > others/2 {
		t.Errorf("%v rebuilt with %d of the other clients' %d states: not first", m.wanted.line, rebuilt, others)
	}
	// The state view asks for the client it shows, and for the next one
	// shown (c), up to its newest state.
	drive(t, m, m.refreshAll(), "3")
	if m.wanted.line != m.scrub.line() {
		t.Errorf("in the state view: %+v wanted first, the view shows %v", m.wanted, m.scrub.line())
	}
	before := m.wanted.line
	drive(t, m, "c")
	if m.wanted.line != m.scrub.line() || m.wanted.line == before || m.wanted.upTo != -1 {
		t.Errorf("after c: %+v wanted first, the view shows %v (from %v)", m.wanted, m.scrub.line(), before)
	}
}
