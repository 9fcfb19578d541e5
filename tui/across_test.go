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

// A diff across clients asked for while the rebuild has not taken every
// client to its frame says so, and is made again, without a key press,
// once the rebuild has gone on.
func TestAcrossPendingRedone(t *testing.T) {
	m, e, free := heldModel(t, engine.Index|engine.Timeline|engine.Health|engine.Findings, false, 200, 100)
	if len(m.scrub.lines) == 0 {
		t.Fatal("no line in the timeline while the rebuild is held")
	}
	// The newest state of the first client in the timeline.
	l := m.scrub.lines[0]
	last := e.Entries(nil, l, e.EntryCount(l)-1, e.EntryCount(l))[0]
	// The figures counted from the states are so far, and the findings.
	drive(t, m, "5")
	if s := screen(m); !strings.Contains(s, "late inputs so far") {
		t.Errorf("health while the rebuild is held:\n%s", s)
	}
	drive(t, m, "6")
	if s := screen(m); !strings.Contains(s, "findings so far") || !strings.Contains(s, "come when the rebuild ends") {
		t.Errorf("findings while the rebuild is held:\n%s", s)
	}
	// A frame past what is rebuilt: the newest state so far, said so.
	drive(t, m, fmt.Sprintf("2:%d:99999<enter>", last.SLSN))
	if !strings.Contains(m.env.msg, "is rebuilt to it") {
		t.Errorf("frame 99999 while the rebuild is held: message %q", m.env.msg)
	}
	drive(t, m, fmt.Sprintf("4:%d:%d<enter>A", last.SLSN, last.N))
	const note = "the rebuild has not taken every client to this frame yet"
	if s := screen(m); !strings.Contains(s, note) && !strings.Contains(s, "not rebuilt to frame") {
		t.Fatalf("the diff across clients at frame %d while the rebuild is held:\n%s", last.N, s)
	}
	free()
	e.Wait()
	drive(t, m, tickMsg{}) // the last refresh, as the rebuild is over
	a, err := e.AcrossClients(engine.Selector{Conv: l.Conv, Client: l.Client, Player: -1}, int(last.N), last.SLSN, false)
	if err != nil || a.Pending || len(a.Picks) < 2 {
		t.Fatalf("after the rebuild, across at frame %d: %d picks, pending %v, %v", last.N, len(a.Picks), a.Pending, err)
	}
	ref, other := a.Picks[0], a.Picks[1]
	want := fmt.Sprintf("diff %s → %s", describe(ref.Line, &ref.Entry), describe(other.Line, &other.Entry))
	if s := screen(m); strings.Contains(s, note) || strings.Contains(s, "not rebuilt to frame") || !strings.Contains(s, want) {
		t.Errorf("after the rebuild, the diff across clients at frame %d does not show %q alone:\n%s", last.N, want, s)
	}
	drive(t, m, "5")
	if s := screen(m); strings.Contains(s, "so far") || !strings.Contains(s, "late inputs") {
		t.Errorf("health after the rebuild:\n%s", s)
	}
	drive(t, m, "6")
	if s := screen(m); strings.Contains(s, "so far") || !strings.Contains(s, "findings") {
		t.Errorf("findings after the rebuild:\n%s", s)
	}
	drive(t, m, fmt.Sprintf("2:%d:99999<enter>", last.SLSN))
	if !strings.Contains(m.env.msg, "no state of frame 99999: the newest before it") {
		t.Errorf("frame 99999 after the rebuild: message %q", m.env.msg)
	}
}

// A frame asked for with : past what is rebuilt shows once it is, without
// a key press.
func TestFrameAwaitsRebuild(t *testing.T) {
	plain := newTest(t, "sample:modern", 120, 40, false)
	l0 := plain.e.Lines()[0]
	final := plain.e.Entries(nil, l0, 0, -1)
	want := final[len(final)-1] // the line's last state
	m, e, free := heldModel(t, engine.Index|engine.Timeline, false, 120, 40)
	if m.scrub.line() != l0 || e.EntryCount(l0) >= len(final) {
		t.Fatalf("line %v with %d states shown, want %v with fewer than %d", m.scrub.line(), e.EntryCount(l0), l0, len(final))
	}
	drive(t, m, fmt.Sprintf("2:%d:%d<enter>", want.SLSN, want.N))
	if m.scrub.await == nil || int(m.scrub.ent.N) == int(want.N) && m.scrub.ent.SLSN == want.SLSN {
		t.Fatalf("frame %d:%d while held: awaiting %v, shown %d:%d", want.SLSN, want.N, m.scrub.await, m.scrub.ent.SLSN, m.scrub.ent.N)
	}
	free()
	e.Wait()
	drive(t, m, tickMsg{})
	if m.scrub.await != nil || m.scrub.ent.SLSN != want.SLSN || m.scrub.ent.N != want.N {
		t.Errorf("after the rebuild: awaiting %v, shown %d:%d, want %d:%d", m.scrub.await, m.scrub.ent.SLSN, m.scrub.ent.N, want.SLSN, want.N)
	}
}
