package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// The same game read twice over is two games; AcrossClients compares the
// clients of one of them, acknowledged states with acknowledged ones (or,
// with sent, sent ones with sent ones).
func TestAcrossClientsOneGame(t *testing.T) {
	t.Parallel()
	lossy := realcap.Path(t, "legacy/lossy/capture.pcap")
	e := engine.New(engine.Config{Work: engine.Timeline})
	defer e.Close()
	if err := e.Run(context.Background(), lossy, lossy); err != nil {
		t.Fatal(err)
	}
	games := e.Games()
	if got := fmt.Sprint(games); got != "[game 1 (conversations 1, 2) game 2 (conversations 3, 4)]" {
		t.Fatalf("games: %s", got)
	}
	var gc *engine.GameChoiceError
	if _, err := e.AcrossClients(engine.Selector{Player: -1}, 1825, -1, false); !errors.As(err, &gc) || len(gc.Games) != 2 {
		t.Errorf("any client of two games: %v, want a GameChoiceError listing both", err)
	}
	for _, c := range []struct {
		conv  int
		sent  bool
		convs []int
	}{
		{2, false, []int{2, 1}},
		{3, false, []int{3, 4}},
		{3, true, []int{3, 4}},
	} {
		a, err := e.AcrossClients(engine.Selector{Conv: c.conv, Player: -1}, 1825, -1, c.sent)
		if err != nil {
			t.Fatalf("conversation %d: %v", c.conv, err)
		}
		var convs []int
		for _, p := range a.Picks {
			convs = append(convs, p.Line.Conv)
			if !c.sent && !p.Entry.Acked() {
				t.Errorf("conversation %d: the state of frame %d of %s was never acknowledged", c.conv, p.Entry.N, p.Line)
			}
			// sent: the newest state sent, acknowledged or not
			if want := e.Find(p.Line, p.SLSN, 1825, !c.sent); p.Index != want {
				t.Errorf("conversation %d sent %v: %s picked state %d, want %d", c.conv, c.sent, p.Line, p.Index, want)
			}
		}
		if fmt.Sprint(convs) != fmt.Sprint(c.convs) || len(a.Missing) != 0 {
			t.Errorf("conversation %d: picks of %v (missing %v), want %v", c.conv, convs, a.Missing, c.convs)
		}
	}
}

// Every client of the game in a bundled sample at one frame: the state
// each acknowledged at or before it.
func ExampleEngine_AcrossClients() {
	e := engine.New(engine.Config{Work: engine.Timeline})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		fmt.Println(err)
	}
	a, err := e.AcrossClients(engine.Selector{Player: -1}, 100, 1, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Game)
	for _, p := range a.Picks {
		fmt.Printf("%s player %d: frame %d, acknowledged %v\n", p.Line.Client, p.Entry.Player, p.Entry.N, p.Entry.Acked())
	}
	// Output:
	// game 1 (conversations 1, 2)
	// 10.0.0.2:24785 player 1: frame 100, acknowledged true
	// 10.0.0.3:24785 player 2: frame 99, acknowledged true
}
