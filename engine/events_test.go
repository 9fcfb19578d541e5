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
