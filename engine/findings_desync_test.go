package engine

import (
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/statedif"
)

// A desync is two clients' acknowledged states of one frame that differ;
// a state sent but not acknowledged is never compared (the acknowledgement
// may lag), whichever of the state and its stak comes first. A game the
// protocol-true generator makes never desyncs, so the collector is fed
// directly.
func TestFindingsDesync(t *testing.T) {
	server := netip.MustParseAddr("10.0.0.1")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var got []Finding
	fc := newFindingCollector(func(f *Finding) { got = append(got, *f) })
	for id := 1; id <= 3; id++ {
		c := &session.Conversation{ID: id, Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + id)}), 24785),
			Server: netip.AddrPortFrom(server, uint16(40000+id)), Player: id, Version: decode.Modern}
		fc.watch(c).last = t0
	}
	sum := func(b byte) statedif.Hash { return statedif.Hash{uint64(b)} }
	state := func(conv int, frame int32, b byte) {
		fc.state(&replay.State{Conv: conv, SLSN: 0, Dst: frame, Status: replay.OK, Hash: sum(b), N: int(frame)})
	}
	ack := func(conv int, frame int32) {
		fc.ackedState(fc.convs[conv], replay.Frame{SLSN: 0, N: frame}, int(frame)+1, t0.Add(time.Duration(frame)*25*time.Millisecond))
	}
	// Frame 10: all three agree (acks before and after their states).
	state(1, 10, 1)
	ack(1, 10)
	ack(2, 10)
	state(2, 10, 1)
	state(3, 10, 1)
	ack(3, 10)
	// Frame 11: client 2 holds another state, but never acknowledges it.
	state(1, 11, 1)
	ack(1, 11)
	state(2, 11, 2)
	if len(got) != 0 {
		t.Fatalf("found %v before any acknowledged disagreement", got)
	}
	// Frame 12: client 3 acknowledges another state than client 1.
	state(1, 12, 1)
	ack(1, 12)
	ack(3, 12)
	state(3, 12, 9)
	// Frame 12 again a minute later: another game of the same server.
	fc.ackedState(fc.convs[2], replay.Frame{SLSN: 0, N: 12}, 99, t0.Add(time.Minute))
	state(2, 12, 7)
	if len(got) != 1 || got[0].Kind != KindDesync || got[0].Severity != SeverityError || got[0].Conv != 3 ||
		got[0].Figures["other_conv"] != 1 || len(got[0].Evidence.States) != 1 || got[0].Evidence.States[0].Frame != 12 {
		t.Errorf("desync findings %+v", got)
	}
}
