package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
)

// While the rebuild behind the fast pass is held part way, a pick it
// calls settled is the pick of a plain run, and every client of the game
// at a frame past what is rebuilt is pending; once the rebuild is over,
// nothing is pending and the picks are the plain run's.
func TestSettledWhileRebuilding(t *testing.T) {
	const let = 250 // of the sample's 362 states
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	var inspected atomic.Int32
	work := engine.Index | engine.Timeline
	e := engine.New(engine.Config{Work: work, RebuildBehind: true,
		OnEvent: func(ev engine.Event) {
			if _, ok := ev.(engine.StateEvent); ok && inspected.Add(1) > let {
				<-release // the states after it wait: the timeline holds let of them
			}
		}})
	defer e.Close()
	defer free()
	plain := engine.New(engine.Config{Work: work})
	defer plain.Close()
	for _, x := range []*engine.Engine{e, plain} {
		if err := x.Run(context.Background(), "sample:modern"); err != nil {
			t.Fatal(err)
		}
	}
	for start := time.Now(); inspected.Load() <= let; time.Sleep(time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d states rebuilt after a minute, want %d", inspected.Load(), let)
		}
	}
	for last := -1; e.Progress().Rebuilt != last; time.Sleep(20 * time.Millisecond) {
		last = e.Progress().Rebuilt
	}
	lines := plain.Lines()
	if len(lines) != 2 {
		t.Fatalf("%d lines in the plain run, want the sample's 2", len(lines))
	}
	// Every frame of the plain run's states, and one past the last of
	// each level sequence.
	type at struct{ slsn, n int }
	frames := map[at]bool{}
	lastSLSN, last := 0, map[int]int{}
	for _, l := range lines {
		for _, x := range plain.Entries(nil, l, 0, plain.EntryCount(l)) {
			frames[at{x.SLSN, int(x.N)}] = true
			last[x.SLSN] = max(last[x.SLSN], int(x.N))
			lastSLSN = max(lastSLSN, x.SLSN)
		}
	}
	for k, n := range last {
		frames[at{k, n + 1}] = true
	}
	past := last[lastSLSN] + 1
	check := func(held bool) (settled, pending int) {
		for _, l := range lines {
			for f := range frames {
				for _, sent := range []bool{false, true} {
					want, wantErr := plain.Pick(l, f.n, f.slsn, sent)
					got, err := e.Pick(l, f.n, f.slsn, sent)
					if held && (err != nil || got.Pending) {
						pending++
						continue
					}
					settled++
					if (err == nil) != (wantErr == nil) || err == nil && (got.Index != want.Index || got.Entry.N != want.Entry.N) {
						t.Errorf("held %v: %v level sequence %d frame %d sent %v: picked %d (frame %d, %v), the plain run %d (frame %d, %v)",
							held, l, f.slsn, f.n, sent, got.Index, got.Entry.N, err, want.Index, want.Entry.N, wantErr)
					}
				}
			}
		}
		return settled, pending
	}
	settled, pending := check(true)
	t.Logf("while held: %d picks settled, %d pending", settled, pending)
	if settled == 0 || pending == 0 {
		t.Errorf("while held: %d picks settled, %d pending: want some of each", settled, pending)
	}
	a, err := e.AcrossClients(engine.Selector{Player: -1}, past, lastSLSN, false)
	var nr *engine.NotRebuiltError
	if !errors.As(err, &nr) && (err != nil || !a.Pending || len(a.Missing) == 0) {
		t.Errorf("while held, every client past the last frame: %d picks, %v missing, pending %v, %v; want it pending", len(a.Picks), a.Missing, a.Pending, err)
	}
	free()
	e.Wait()
	if settled, pending := check(false); pending != 0 || settled == 0 {
		t.Errorf("after the rebuild: %d picks settled, %d pending", settled, pending)
	}
	a, err = e.AcrossClients(engine.Selector{Player: -1}, past, lastSLSN, false)
	if err != nil || a.Pending || len(a.Picks) != 2 {
		t.Errorf("after the rebuild, every client past the last frame: %d picks, %v missing, pending %v, %v", len(a.Picks), a.Missing, a.Pending, err)
	}
}

// While clients none of whose states is in yet may join a game, every
// client at a frame of it is pending; once the rebuild is over, not.
func TestAcrossPendingLinesToCome(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	var held atomic.Bool
	var events atomic.Int32
	e := engine.New(engine.Config{Work: engine.Index | engine.Timeline, RebuildBehind: true,
		OnEvent: func(ev engine.Event) {
			// More than 60 of the first game's 362 states are in, at most
			// a batch of 256 more: none of the second game's.
			if _, ok := ev.(engine.StateEvent); ok && events.Add(1) > 60 {
				held.Store(true)
				<-release
			}
		}})
	defer e.Close()
	defer free()
	if err := e.Run(context.Background(), "sample:modern", "sample:modern"); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); !held.Load(); time.Sleep(time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatal("no state rebuilt after a minute")
		}
	}
	lines := e.Lines()
	if len(lines) != 4 || e.EntryCount(lines[0]) == 0 || e.EntryCount(lines[3]) != 0 {
		t.Fatalf("%d lines, %d states of the first, %d of the last: want 4, some, none", len(lines), e.EntryCount(lines[0]), e.EntryCount(lines[len(lines)-1]))
	}
	half := e.EntryCount(lines[0]) / 2 // a frame both clients of the first game are past
	first := e.Entries(nil, lines[0], half, half+1)[0]
	sel := engine.Selector{Conv: lines[0].Conv, Player: -1}
	if a, err := e.AcrossClients(sel, int(first.N), first.SLSN, true); err != nil || !a.Pending {
		t.Errorf("while the second game's clients are to come: pending %v, %v", a.Pending, err)
	}
	free()
	e.Wait()
	if a, err := e.AcrossClients(sel, int(first.N), first.SLSN, true); err != nil || a.Pending || len(a.Picks) != 2 {
		t.Errorf("after the rebuild: %d picks, pending %v, %v", len(a.Picks), a.Pending, err)
	}
}
