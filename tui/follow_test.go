package tui

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// TestEndFollowsGrowingIndex: G while the engine reads selects the last
// packet and stays on the last as the index grows, though the index grows
// between any two looks at it (the tracker and the index run ahead on the
// reading goroutine).
func TestEndFollowsGrowingIndex(t *testing.T) {
	path := realcap.Path(t, "modern/multi/multi.pcap")
	e := engine.New(engine.Config{Work: engine.Index})
	defer e.Close()
	m := New(Options{Engine: e, Title: "grow"})
	defer m.Close()
	drive(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	ran := make(chan error, 1)
	go func() {
		inputs := make([]string, 12)
		for i := range inputs {
			inputs[i] = path
		}
		ran <- e.Run(context.Background(), inputs...)
	}()
	x := e.Index()
	for x.Len() == 0 {
	}
	drive(t, m, "G")
	p := &m.packets
	checks := 0
	for running := true; running; checks++ {
		select {
		case err := <-ran:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		p.onGrow(&m.env)
		if !p.atEnd {
			t.Fatalf("check %d: row %d of %d selected, no longer the last: the list stopped following the end", checks, p.cur, p.n(&m.env))
		}
	}
	if n := p.n(&m.env); p.cur != n-1 || n != x.Len() {
		t.Errorf("after the run: row %d of %d selected (%d packets indexed), want the last", p.cur, n, x.Len())
	}
	t.Logf("%d checks while the index grew to %d packets", checks, x.Len())
}
