package tui

import (
	"fmt"
	"testing"

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
	// Selecting a packet, then the state view: that packet's conversation
	// at its moment.
	drive(t, m, "/<ctrl+u><enter>", fmt.Sprintf(":%d<enter>", x.Entry(stak).N), "3")
	if m.env.view != viewState || m.scrub.line().Conv != 2 || int(m.scrub.ent.CaptureN) > int(x.Entry(stak).N) {
		t.Errorf("3 after selecting packet %d: conversation %d, state of packet %d", x.Entry(stak).N, m.scrub.line().Conv, m.scrub.ent.CaptureN)
	}
}
