package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
)

// A stdf piece leads to its dif's state, a stak to the state it
// acknowledges, and a state back to its pieces and acks.
func TestPacketStateLinks(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	x := m.e.Index()
	// The first piece of a dif of several, and the first stak of
	// conversation 2, by what the packets say.
	piece, stak := -1, -1
	var r session.Record
	for i := 0; i < x.Len() && (piece < 0 || stak < 0); i++ {
		if err := x.Record(i, &r); err != nil {
			t.Fatal(err)
		}
		switch r.Packet.NameString() {
		case "stdf":
			if piece < 0 && r.Packet.Int("count") > 1 && r.Packet.Int("seq") == 0 && r.Conv.ID == 1 {
				piece = i
			}
		case "stak":
			if stak < 0 && r.Conv.ID == 2 && i > 100 {
				stak = i
			}
		}
	}
	if piece < 0 || stak < 0 {
		t.Fatal("no multi-piece dif or stak in sample:modern")
	}
	for _, c := range []struct {
		pos   int
		conv  int
		field string // the packet field the state's frame must equal
	}{{piece, 1, "dst"}, {stak, 2, "ack_frame"}} {
		if err := x.Record(c.pos, &r); err != nil {
			t.Fatal(err)
		}
		want := r.Packet.Int(c.field)
		drive(t, m, "1", fmt.Sprintf(":%d<enter>", r.N), "s")
		e := m.scrub.ent
		if m.env.view != viewTimeline || m.scrub.line().Conv != c.conv || int64(e.N) != want {
			t.Errorf("s on packet %d (%s): view %d, conversation %d, frame %d; want the timeline, %d, %d", r.N, r.Packet.NameString(), m.env.view, m.scrub.line().Conv, e.N, c.conv, want)
		}
		if c.field == "dst" && int(e.CaptureN) <= r.N {
			t.Errorf("the dif of piece %d ends at packet %d", r.N, e.CaptureN)
		}
		if c.field == "ack_frame" && !e.Acked() {
			t.Errorf("stak %d leads to a state never acknowledged", r.N)
		}
	}
	// Back: p lists the state's pieces and acks, its last piece selected.
	drive(t, m, "p")
	e, l := m.scrub.ent, m.scrub.line()
	if m.env.view != viewPackets || len(m.packets.rows) == 0 {
		t.Fatalf("p: view %d, %d rows", m.env.view, len(m.packets.rows))
	}
	names := map[string]int{}
	for _, row := range m.packets.rows {
		if err := x.Record(int(row), &r); err != nil {
			t.Fatal(err)
		}
		fr, _ := r.Packet.Frame()
		names[r.Packet.NameString()]++
		if r.Conv.ID != l.Conv || fr != int64(e.N) {
			t.Errorf("p lists packet %d (%s, conversation %d, frame %d) for state %d of conversation %d", r.N, r.Packet.NameString(), r.Conv.ID, fr, e.N, l.Conv)
		}
	}
	if names["stdf"] != int(e.Pieces) || names["stak"] == 0 {
		t.Errorf("p lists %v for a state of %d pieces, acknowledged", names, e.Pieces)
	}
	if got := x.Entry(m.packets.pos(m.packets.cur)).N; got != e.CaptureN {
		t.Errorf("p selects packet %d, want the dif's last piece %d", got, e.CaptureN)
	}
	// The first packet of a conversation comes before any of its states:
	// s says so of the first state it shows.
	drive(t, m, "/<ctrl+u><enter>", ":1<enter>", "s")
	if m.scrub.i != 0 || !strings.Contains(m.env.msg, "held no state yet") {
		t.Errorf("s on packet 1: state %d, message %q", m.scrub.i, m.env.msg)
	}
	drive(t, m, "1")
	// Selecting a packet, then the state view: that packet's conversation
	// at its moment.
	drive(t, m, "/<ctrl+u><enter>", fmt.Sprintf(":%d<enter>", x.Entry(stak).N), "3")
	if m.env.view != viewState || m.scrub.line().Conv != 2 || int(m.scrub.ent.CaptureN) > int(x.Entry(stak).N) {
		t.Errorf("3 after selecting packet %d: conversation %d, state of packet %d", x.Entry(stak).N, m.scrub.line().Conv, m.scrub.ent.CaptureN)
	}
}

// A packet whose state is not rebuilt yet shows its client's newest state
// (or, before any is in, none of another client), says so, and its own
// state once it is rebuilt, without a key press.
func TestLinkAwaitsRebuild(t *testing.T) {
	// Held at its first state, before any is in the timeline; or after
	// the first batch of states is in (the events come in batches).
	for _, early := range []bool{true, false} {
		t.Run(fmt.Sprintf("held before any state %v", early), func(t *testing.T) { testLinkAwaits(t, early) })
	}
}

// testLinkAwaits holds the rebuild (as soon as a state is rebuilt, or
// once the first states are in the timeline) and opens the state of the
// capture's last stdf piece.
func testLinkAwaits(t *testing.T, early bool) {
	m, e, free := heldModel(t, engine.Index|engine.Timeline|engine.Health, early, 160, 48)
	// The last stdf piece of the capture, and the frame of its dif.
	x := e.Index()
	var r session.Record
	pos := x.Len() - 1
	for ; pos >= 0; pos-- {
		if err := x.Record(pos, &r); err != nil {
			t.Fatal(err)
		}
		if r.Packet.NameString() == "stdf" {
			break
		}
	}
	frame, ok := r.Packet.Frame()
	if pos < 0 || !ok {
		t.Fatal("no stdf piece with a frame in the sample")
	}
	// The rebuild goes as far as it is let, then waits.
	for last := -1; e.Progress().Rebuilt != last; time.Sleep(20 * time.Millisecond) {
		last = e.Progress().Rebuilt
	}
	drive(t, m, m.refreshAll())
	drive(t, m, fmt.Sprintf("/num == %d<enter>", r.N))
	drive(t, m, "3")
	if m.env.view != viewState || m.scrub.await == nil {
		t.Fatalf("view %d, awaiting %v, message %q: the state of packet %d is not awaited", m.env.view, m.scrub.await, m.env.msg, r.N)
	}
	scr := screen(m)
	if !strings.Contains(m.env.msg, "is rebuilt to it") || !strings.Contains(scr, fmt.Sprintf("client %d", r.Conv.ID)) ||
		!strings.Contains(scr, "rebuilding") {
		t.Errorf("while the state is rebuilt, message %q, screen:\n%s", m.env.msg, scr)
	}
	// What is shown meanwhile is of the packet's client, or nothing.
	if n := e.EntryCount(m.scrub.line()); m.scrub.line().Conv != r.Conv.ID && (!m.scrub.awaitingOther() || strings.Contains(scr, "slsn")) {
		t.Errorf("while the state is rebuilt, conversation %d shown (%d states), screen:\n%s", m.scrub.line().Conv, n, scr)
	}
	t.Logf("while held: conversation %d shown, %d of its states in", m.scrub.line().Conv, e.EntryCount(m.scrub.line()))
	// A key that does not move the scrubber (the map and text panes)
	// leaves the state awaited.
	drive(t, m, "M")
	if m.scrub.await == nil || !strings.Contains(m.env.msg, "is rebuilt to it") {
		t.Errorf("after M: awaiting %v, message %q", m.scrub.await, m.env.msg)
	}
	free()
	e.Wait()
	drive(t, m, m.refreshAll())
	if m.scrub.await != nil || m.scrub.line().Conv != r.Conv.ID || int64(m.scrub.ent.N) != frame {
		t.Errorf("after the rebuild: awaiting %v, conversation %d frame %d shown, want conversation %d frame %d",
			m.scrub.await, m.scrub.line().Conv, m.scrub.ent.N, r.Conv.ID, frame)
	}
	if want := fmt.Sprintf("packet %d: the dif", r.N); !strings.HasPrefix(m.env.msg, want) {
		t.Errorf("after the rebuild, message %q, want %q…", m.env.msg, want)
	}
}

// With the same game read twice, two conversations have each client
// endpoint: the state header names the conversation.
func TestHeaderNamesSharedClient(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Index | engine.Timeline})
	if err := e.Run(context.Background(), "sample:modern", "sample:modern"); err != nil {
		t.Fatal(err)
	}
	m := New(Options{Engine: e})
	t.Cleanup(func() { m.Close() })
	drive(t, m, m.Init(), tea.WindowSizeMsg{Width: 200, Height: 40})
	if len(m.scrub.lines) != 4 {
		t.Fatalf("%d lines, want 4 (two games of two clients)", len(m.scrub.lines))
	}
	for i := 0; i < 4; i++ {
		drive(t, m, "2")
		l := m.scrub.line()
		if h := m.scrub.header(&m.env, 200)[0]; !strings.Contains(h, fmt.Sprintf("client %d · %s", l.Conv, l.Client)) {
			t.Errorf("header of conversation %d: %q", l.Conv, h)
		}
		// At a width for two of them, the list of clients still names
		// the one shown, and marks those left out.
		list := ansi.Strip(clientList(&m.env, &m.scrub, 60))
		if !strings.Contains(list, fmt.Sprintf(" %d %s ", l.Conv, l.Client)) || !strings.Contains(list, "…") || ansi.StringWidth(list) > 60 {
			t.Errorf("clients of width 60 with conversation %d shown: %q", l.Conv, list)
		}
		drive(t, m, "c")
	}
}

// p on a state lists its own acks only, not those of the same frame in
// another level sequence (a stak does not say its level sequence).
func TestPiecesOfOneLevel(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	l := m.e.Lines()[0]
	es := m.e.Entries(nil, l, 0, -1)
	// A state of a later level sequence whose frame an earlier one has too.
	at := -1
	for i, e := range es {
		if e.SLSN > 0 && e.Acked() && slices.ContainsFunc(es[:i], func(p replay.Entry) bool { return p.SLSN < e.SLSN && p.N == e.N && p.Acked() }) {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no frame acknowledged in two level sequences in sample:modern")
	}
	e := es[at]
	drive(t, m, fmt.Sprintf("2:%d:%d<enter>p", e.SLSN, e.N))
	if m.scrub.i != at {
		t.Fatalf("went to state %d, want %d", m.scrub.i, at)
	}
	x := m.e.Index()
	var r session.Record
	staks := 0
	for _, row := range m.packets.rows {
		if err := x.Record(int(row), &r); err != nil {
			t.Fatal(err)
		}
		if r.Packet.NameString() != "stak" {
			continue
		}
		staks++
		if r.N <= int(e.CaptureN) {
			t.Errorf("p on %d:%d (dif ended at packet %d) lists stak %d, an ack of the earlier level sequence", e.SLSN, e.N, e.CaptureN, r.N)
		}
	}
	if staks == 0 {
		t.Errorf("p on %d:%d lists no stak", e.SLSN, e.N)
	}
}
