package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// Events come without the engine's lock held: a handler may ask for
// snapshots from inside the handler, in both modes of the rebuild and on
// the packet fast path, and sees the engine as of the event.
func TestHandlerTakesSnapshots(t *testing.T) {
	path := realcap.Path(t, "modern/basic/basic.pcap")
	for _, c := range []struct {
		name     string
		behind   bool
		onPacket bool
	}{
		{"in step", false, false},
		{"behind", true, false},
		{"packet fast path", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var e *engine.Engine
			kinds := map[string]int{}
			packets, stale := 0, 0
			look := func(kind string) {
				mu.Lock()
				defer mu.Unlock()
				kinds[kind]++
				if kinds[kind]%64 == 1 { // the costly ones now and then
					e.Stats()
					e.Health()
					e.Findings()
				}
				e.Progress()
				if len(e.Conversations()) == 0 {
					stale++
				}
			}
			cfg := engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings, RebuildBehind: c.behind,
				OnEvent: func(ev engine.Event) {
					switch ev := ev.(type) {
					case engine.PacketEvent:
						look("packet")
						// The packet is in the index when its event comes.
						if n := e.Index().Len(); ev.Index >= n {
							t.Errorf("packet %d: the index has %d", ev.Index, n)
						}
					case engine.StateEvent:
						look("state")
					case engine.DifEvent:
						look("dif")
					case engine.AckEvent:
						look("ack")
					case engine.FindingEvent:
						look("finding")
					}
				}}
			if c.onPacket {
				cfg.OnPacket = func(ev *engine.PacketEvent) {
					look("packet")
					packets++
					if _, err := e.Index().Packet(ev.Index); err != nil {
						t.Errorf("packet %d: %v", ev.Index, err)
					}
				}
			}
			e = engine.New(cfg)
			defer e.Close()
			done := make(chan error, 1)
			go func() {
				err := e.Run(context.Background(), path)
				e.Wait()
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a handler that takes a snapshot deadlocks the engine")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range []string{"packet", "state", "dif", "ack"} {
				if kinds[k] == 0 {
					t.Errorf("no %s event", k)
				}
			}
			if stale > 0 {
				t.Errorf("%d events came before any conversation was known", stale)
			}
		})
	}
}

// Config.Events limits what OnEvent receives to the kinds it names, and
// every kind comes when it names none.
func TestEventsSelected(t *testing.T) {
	path := realcap.Path(t, "modern/basic/basic.pcap")
	kindOf := func(ev engine.Event) engine.Events {
		switch ev.(type) {
		case engine.PacketEvent:
			return engine.PacketEvents
		case engine.DifEvent:
			return engine.DifEvents
		case engine.StateEvent:
			return engine.StateEvents
		case engine.AckEvent:
			return engine.AckEvents
		case engine.ConversationEvent:
			return engine.ConversationEvents
		case engine.ProgressEvent:
			return engine.ProgressEvents
		case engine.WarningEvent:
			return engine.WarningEvents
		case engine.FindingEvent:
			return engine.FindingEvents
		}
		t.Fatalf("an event of no known kind: %T", ev)
		return 0
	}
	run := func(want engine.Events) map[engine.Events]int {
		got := map[engine.Events]int{}
		e := engine.New(engine.Config{Work: engine.States | engine.Difs | engine.Findings | engine.Health, Events: want,
			OnEvent: func(ev engine.Event) { got[kindOf(ev)]++ }})
		defer e.Close()
		if err := e.Run(context.Background(), path); err != nil {
			t.Fatal(err)
		}
		e.Wait()
		return got
	}
	all := run(0)
	for _, k := range []engine.Events{engine.PacketEvents, engine.DifEvents, engine.StateEvents, engine.AckEvents,
		engine.ConversationEvents, engine.ProgressEvents} {
		if all[k] == 0 {
			t.Errorf("with no kinds named, no event of kind %b came", k)
		}
	}
	for _, want := range []engine.Events{engine.ProgressEvents, engine.StateEvents | engine.AckEvents, engine.PacketEvents} {
		got := run(want)
		for k, n := range got {
			if k&want == 0 {
				t.Errorf("Events %b: %d events of kind %b came", want, n, k)
			}
		}
		for k := engine.Events(1); k <= engine.FindingEvents; k <<= 1 {
			// Progress comes as time passes: its count may differ.
			if k&want != 0 && k != engine.ProgressEvents && got[k] != all[k] {
				t.Errorf("Events %b: %d events of kind %b, %d when every kind is asked for", want, got[k], k, all[k])
			}
		}
	}
}
