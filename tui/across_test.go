package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// The diff across clients from a state the client never acknowledged
// compares what each client acknowledged at that frame, as diff
// --all-players does (engine.AcrossClients): never the state sent to this
// client against states the others acknowledged.
func TestAcrossClientsComparesAcknowledged(t *testing.T) {
	lossy := realcap.Path(t, "legacy/lossy/capture.pcap")
	m := newTest(t, lossy, 200, 300, false)
	l := m.e.Lines()[0]
	es := m.e.Entries(nil, l, 0, -1)
	at := -1
	for i, e := range es {
		// an unacknowledged state that is the newest sent at its frame,
		// after an acknowledged one of its level sequence
		if i > 0 && e.Status.String() == "ok" && !e.Acked() && m.e.Find(l, e.SLSN, e.N, false) == i && m.e.Find(l, e.SLSN, e.N, true) >= 0 {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no unacknowledged state in legacy/lossy")
	}
	shown := es[at]
	drive(t, m, fmt.Sprintf("4:%d:%d<enter>A", shown.SLSN, shown.N))
	if m.scrub.i != at {
		t.Fatalf("went to state %d, want %d", m.scrub.i, at)
	}
	a, err := m.e.AcrossClients(engine.Selector{Conv: l.Conv, Client: l.Client, Player: -1}, int(shown.N), shown.SLSN, false)
	if err != nil || len(a.Picks) != 2 {
		t.Fatalf("across: %v %v", a, err)
	}
	s := screen(m)
	ref, other := a.Picks[0], a.Picks[1]
	want := fmt.Sprintf("diff %s → %s", describe(ref.Line, &ref.Entry), describe(other.Line, &other.Entry))
	if !strings.Contains(s, want) || !ref.Entry.Acked() || ref.Entry.N == shown.N {
		t.Errorf("the diff across clients from unacknowledged frame %d does not show %q (the acknowledged frame %d):\n%s", shown.N, want, ref.Entry.N, s)
	}
}
