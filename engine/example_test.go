package engine_test

import (
	"context"
	"fmt"

	"github.com/pmdump/pmdump/engine"
)

// The engine on a bundled sample capture, printing the first states as they
// are rebuilt.
func Example() {
	shown := 0
	e := engine.New(engine.Config{
		Work:   engine.States,
		SHA256: true, // the states' sha256, printed
		OnEvent: func(ev engine.Event) {
			if s, ok := ev.(engine.StateEvent); ok && shown < 3 {
				shown++
				fmt.Printf("player %d slsn %d %d → %d %s %x\n", s.State.Player, s.State.SLSN, s.State.Src, s.State.Dst, s.State.Status, s.State.Sum[:4])
			}
		},
	})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		fmt.Println(err)
	}
	st := e.Stats()
	for _, d := range st.Difs {
		fmt.Printf("conversation %d: %d difs, %d ok\n", d.Conv, d.Difs, *d.OK)
	}
	// Output:
	// player 1 slsn 0 0 → 10 ok 89bc3c8c
	// player 1 slsn 0 10 → 11 ok c25bbd8d
	// player 1 slsn 0 10 → 12 ok b6f2d9ba
	// conversation 1: 184 difs, 184 ok
	// conversation 2: 178 difs, 177 ok
}

// Findings say what went wrong in a game, for whom and where to look; the
// bundled modern sample was generated with datagrams lost.
func ExampleEngine_Findings() {
	e := engine.New(engine.Config{Work: engine.Findings})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range engine.SortFindings(e.Findings()) {
		if f.Kind == engine.KindLoss {
			fmt.Printf("%s %s (conv %d): %s; first frame %d\n", f.Severity, f.Kind, f.Conv, f.Summary, f.Evidence.First)
		}
	}
	// Output:
	// info loss (conv 1): server → player 1 (10.0.0.2:24785): ≈ 3.4 % lost (1.7 %–6.9 %, from 7 of 204 probes: dif pieces, pong); 7 datagrams of 195 proven lost: 7 difs of 191 (7 lost whole, 0 incomplete); longest run 2 in a row; first frame 19
	// info loss (conv 2): server → player 2 (10.0.0.3:24785): ≈ 1.5 % lost (0.5 %–4.4 %, from 3 of 196 probes: dif pieces, pong); 3 datagrams of 184 proven lost: 3 difs of 180 (2 lost whole, 1 incomplete with 1 piece missing); longest run 1 in a row; first frame 383
}

// The engine as the terminal UI runs it: Run returns once the capture is
// read and indexed, while the states are rebuilt behind it; Progress tells
// the two apart, and Wait waits for the rebuild.
func ExampleConfig_rebuildBehind() {
	e := engine.New(engine.Config{Work: engine.Index | engine.Timeline, RebuildBehind: true})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		fmt.Println(err)
	}
	p := e.Progress()
	fmt.Printf("read %v: %d packets indexed\n", p.Read, p.Packets)
	e.Wait()
	p = e.Progress()
	fmt.Printf("rebuilt %v: %d of %d states\n", p.Done, p.Rebuilt, p.Difs)
	for _, l := range p.Lines {
		fmt.Printf("conversation %d: %d states\n", l.Line.Conv, l.Rebuilt)
	}
	// Output:
	// read true: 761 packets indexed
	// rebuilt true: 362 of 362 states
	// conversation 1: 184 states
	// conversation 2: 178 states
}
