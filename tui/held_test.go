package tui

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/replay"
)

// heldModel runs an engine doing work over sample:modern with the state
// rebuild behind the fast pass, held: with early, at its first state,
// before any is in the timeline (every client's chain waits); else with
// more than heldStates of its 362 states in the timeline, and at most a
// batch more (the events come in batches of up to 256), so each client
// has some but not its last.
// It returns a model of w × h cells over it whose ticks are not run (the
// test refreshes it itself), and free, which lets the rebuild go on.
// heldStates is how many state events heldModel lets through.
const heldStates = 60

func heldModel(t *testing.T, work engine.Work, early bool, w, h int) (*Model, *engine.Engine, func()) {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	var held atomic.Bool
	var events atomic.Int32
	hold := func() {
		held.Store(true)
		<-release
	}
	cfg := engine.Config{Work: work, RebuildBehind: true}
	if early {
		cfg.Inspect = func(*replay.State, []byte, []byte) { hold() }
	} else {
		cfg.OnEvent = func(ev engine.Event) {
			if _, ok := ev.(engine.StateEvent); ok && events.Add(1) > heldStates {
				hold()
			}
		}
	}
	e := engine.New(cfg)
	t.Cleanup(func() { e.Close() })
	t.Cleanup(free) // before the engine is closed
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); !held.Load(); time.Sleep(time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatal("no state rebuilt after a minute")
		}
	}
	m := New(Options{Engine: e, Title: "modern"})
	t.Cleanup(func() { m.Close() })
	t.Cleanup(free) // before the model closes the engine
	m.Init()
	drive(t, m, tea.WindowSizeMsg{Width: w, Height: h}, m.refreshAll())
	return m, e, free
}
