package tui

import (
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
)

// newFindingsTest is a model over sample:modern with the engine's
// findings.
func newFindingsTest(t *testing.T) *Model {
	return newTestWith(t, engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings}, "sample:modern", Options{Title: "sample:modern"}, 120, 40)
}

// The findings view lists the engine's findings, the worst first; enter
// selects the finding's first frame in the packet list and puts the
// timeline on its conversation at its start.
func TestFindingsJump(t *testing.T) {
	m := newFindingsTest(t)
	e := m.e
	drive(t, m, "6")
	want := engine.SortFindings(e.Findings())
	if len(want) < 2 {
		t.Fatalf("%d findings in the sample", len(want))
	}
	s := screen(m)
	if !strings.Contains(s, want[0].Kind) || !strings.Contains(s, want[1].Kind) || !strings.Contains(s, "findings:") {
		t.Fatalf("findings view:\n%s", s)
	}
	// The last finding that names a conversation and a first frame.
	pick := -1
	for i, f := range want {
		if f.Conv > 0 && f.Evidence.First > 0 && f.Kind != engine.KindJoin {
			pick = i
		}
	}
	if pick < 0 {
		t.Fatal("no finding with a conversation and a frame")
	}
	drive(t, m, strings.Repeat("j", pick)+"<enter>")
	f := want[pick]
	if m.env.view != viewPackets {
		t.Fatalf("enter shows view %d, not the packets", m.env.view)
	}
	x := m.e.Index()
	if n := x.Entry(m.packets.pos(m.packets.cur)).N; int(n) != f.Evidence.First {
		t.Errorf("%s: packet %d selected, want its first frame %d", f.Kind, n, f.Evidence.First)
	}
	if l := m.scrub.line(); l.Conv != f.Conv {
		t.Errorf("%s: timeline of conversation %d, want %d", f.Kind, l.Conv, f.Conv)
	}
	switch ent := m.scrub.ent; {
	case len(f.Evidence.Frames) > 0:
		// The state the client had at the first game frame concerned.
		fr := f.Evidence.Frames[0]
		if ent.SLSN != fr.SLSN || ent.N > fr.From || ent.N < fr.From-40 {
			t.Errorf("%s: timeline at %d:%d, want the state at or just before %d:%d", f.Kind, ent.SLSN, ent.N, fr.SLSN, fr.From)
		}
	case ent.Time().Before(f.Start) && m.scrub.i < m.scrub.n-1:
		t.Errorf("%s: timeline at %s, before the finding's start %s", f.Kind, ent.Time(), f.Start)
	}
}

// The timeline and health charts mark the seconds where findings start.
func TestFindingsMarkers(t *testing.T) {
	m := newFindingsTest(t)
	e := m.e
	drive(t, m, "2")
	warned := false
	for _, f := range e.Findings() {
		warned = warned || f.Conv == m.scrub.line().Conv && f.Severity > engine.SeverityInfo
	}
	for _, view := range []string{"2", "5"} {
		drive(t, m, view)
		var row string
		for _, l := range strings.Split(screen(m), "\n") {
			if strings.HasPrefix(l, "findings (6)") {
				row = l
			}
		}
		if row == "" || !strings.Contains(row, "·") || warned != strings.Contains(row, "!") {
			t.Errorf("view %s: findings row %q (a warning or error: %v)", view, row, warned)
		}
	}
}

// Enter on a finding whose first frame the display filter hides clears
// the filter (and says so), selects that frame, and the timeline then
// shows the finding's conversation, not the one of a packet shown.
func TestFindingsJumpPastFilter(t *testing.T) {
	m := newFindingsTest(t)
	want := engine.SortFindings(m.e.Findings())
	pick := -1
	for i, f := range want {
		if f.Conv > 0 && f.Evidence.First > 1 && f.Kind != engine.KindJoin {
			pick = i
		}
	}
	if pick < 0 {
		t.Fatal("no finding with a conversation and a frame past the first")
	}
	f := want[pick]
	// Only packet 1 is shown: of conversation 1, before any state.
	drive(t, m, "/num == 1<enter>", "6", strings.Repeat("j", pick)+"<enter>")
	x := m.e.Index()
	if n := x.Entry(m.packets.pos(m.packets.cur)).N; int(n) != f.Evidence.First || m.packets.filter != nil {
		t.Errorf("%s: packet %d selected (filter %v), want its first frame %d, the filter cleared", f.Kind, n, m.packets.filter, f.Evidence.First)
	}
	if !strings.Contains(m.env.msg, "cleared") {
		t.Errorf("message %q does not say the filter was cleared", m.env.msg)
	}
	drive(t, m, "2")
	if l := m.scrub.line(); l.Conv != f.Conv {
		t.Errorf("%s: 2 shows conversation %d, want %d", f.Kind, l.Conv, f.Conv)
	}
}
