package drive

import (
	"context"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// On the real three-client capture the schedule puts every input in a
// frame the recorded states agree with.
func TestRealMultiSchedule(t *testing.T) {
	rec, err := Load(context.Background(), []string{realcap.Path(t, "modern/multi/multi.pcap")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	// The MANIFEST: 7449 difs sent, 1635 cdat, 2 crfl; clients on ports
	// 24786, 24787, 24788 joined in that order.
	if rec.States != 7449 {
		t.Errorf("%d recorded states, want 7449", rec.States)
	}
	if len(rec.Clients) != 3 {
		t.Fatalf("%d clients, want 3", len(rec.Clients))
	}
	for i, c := range rec.Clients {
		if int(c.Addr.Port()) != 24786+i || c.Player != i+1 {
			t.Errorf("client %d is %v player %d", c.N, c.Addr, c.Player)
		}
		// The first state the server sent the client is the one made in
		// the frame it read the join in.
		first := Key{1 << 30, 0}
		for k := range c.states {
			if k.Less(first) {
				first = k
			}
		}
		if first != c.Join.Add(1) {
			t.Errorf("client %d joined in %v, its first state is %v", c.N, c.Join, first)
		}
	}
	kinds := map[Kind]int{}
	for _, a := range rec.Actions {
		kinds[a.Kind]++
	}
	if kinds[Input] != 1635 || kinds[File] != 2 || kinds[Join] != 3 {
		t.Errorf("actions %v, want 1635 cdat, 2 crfl, 3 joins", kinds)
	}
	// Every input is read no earlier than the packet order says, and the
	// state made in the frame it takes effect in shows the player's new
	// controls, unless the client's next input was read by then too.
	moved, visible := 0, 0
	for i, a := range rec.Actions {
		if a.Kind != Input {
			continue
		}
		if a.Check == Uncertain {
			t.Errorf("uncertain: %s: %s", a, a.Reason)
			continue
		}
		e := Key{a.At.SLSN, max(a.At.Frame, a.Frame)} // the frame it takes effect in
		if a.At.Less(a.Ordered) || (Key{a.Ordered.SLSN, max(a.Ordered.Frame, a.Frame)}).Add(lookAhead).Less(a.At) {
			t.Errorf("%s: packet order says %v", a, a.Ordered)
		}
		if a.At != a.Ordered {
			moved++
		}
		if a.Check == Unchecked {
			continue
		}
		p := rec.Clients[a.Client-1].Player
		hidden := false
		for _, b := range rec.Actions[i+1:] {
			if b.Client == a.Client && b.Kind == Input {
				hidden = !e.Less(b.At) && b.Frame <= e.Frame // the next one was read by then too
				break
			}
		}
		if hidden {
			continue
		}
		visible++
		if got, ok := rec.controlsAt(e.Add(1), p); !ok || got != a.Move&0x3f {
			t.Errorf("%s: state %v shows controls %s, want %s", a, e.Add(1), Controls(got), Controls(a.Move))
		}
	}
	// The packet order alone is not enough: some inputs came in during
	// the server's frame, after it had read its inputs.
	if moved == 0 {
		t.Error("no input was read later than the packet order says")
	}
	if visible < kinds[Input]*9/10 {
		t.Errorf("only %d of %d inputs show in a state", visible, kinds[Input])
	}
	t.Logf("%d inputs, %d read later than the packet order says, %d show in the state of their frame; checks %v", kinds[Input], moved, visible, rec.Counts())
}
