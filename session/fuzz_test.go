package session_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// The fuzz input is a forced-era byte (0 auto, 1 legacy, 2 modern, modulo
// 3) followed by datagrams, each as one control byte, a 2-byte big-endian
// length and the payload. The control byte's low 3 bits pick the endpoint
// pair (fuzzPairs); bit 3 marks the datagram as cut by the snap length.
var (
	fuzzHostA  = netip.MustParseAddrPort("10.0.0.2:24785")
	fuzzHostB  = netip.MustParseAddrPort("10.0.0.3:24786")
	fuzzListen = netip.MustParseAddrPort("10.0.0.1:24785")
	fuzzEphA   = netip.MustParseAddrPort("10.0.0.1:50001")
	fuzzEphB   = netip.MustParseAddrPort("10.0.0.1:50002")
	fuzzOther  = netip.MustParseAddrPort("10.0.0.9:53")
	fuzzOther2 = netip.MustParseAddrPort("10.0.0.2:5353")
	fuzzPairs  = [8][2]netip.AddrPort{
		{fuzzHostA, fuzzListen}, {fuzzEphA, fuzzHostA}, {fuzzHostA, fuzzEphA},
		{fuzzHostB, fuzzListen}, {fuzzEphB, fuzzHostB}, {fuzzHostB, fuzzEphB},
		{fuzzOther, fuzzOther2}, {fuzzOther2, fuzzOther},
	}
)

type fuzzDatagram struct {
	pair    int
	cut     bool
	payload []byte
}

// frameFuzz packs a fuzz input (the inverse of parseFuzz).
func frameFuzz(force decode.Version, ds ...fuzzDatagram) []byte {
	b := []byte{byte(force)}
	for _, d := range ds {
		ctl := byte(d.pair & 7)
		if d.cut {
			ctl |= 8
		}
		b = append(b, ctl, byte(len(d.payload)>>8), byte(len(d.payload)))
		b = append(b, d.payload...)
	}
	return b
}

func parseFuzz(data []byte) (decode.Version, []fuzzDatagram) {
	if len(data) == 0 {
		return decode.VersionUnknown, nil
	}
	force := decode.Version(data[0] % 3)
	var out []fuzzDatagram
	for rest := data[1:]; len(rest) >= 3; {
		ctl, n := rest[0], int(rest[1])<<8|int(rest[2])
		rest = rest[3:]
		n = min(n, len(rest))
		out = append(out, fuzzDatagram{int(ctl & 7), ctl&8 != 0, rest[:n]})
		rest = rest[n:]
	}
	return force, out
}

// FuzzTracker feeds a sequence of payloads to a Tracker as datagrams: it
// never panics, and its records and counts stay consistent.
func FuzzTracker(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		force, ds := parseFuzz(data)
		tr := session.NewTracker(force)
		kinds := map[session.Kind]int{}
		for i, fd := range ds {
			pair := fuzzPairs[fd.pair]
			d := &source.Datagram{N: i + 1, TS: time.Unix(int64(i), 0), Src: pair[0], Dst: pair[1],
				Payload: fd.payload, Length: len(fd.payload)}
			if fd.cut {
				d.Length += 100
			}
			r := tr.Process(d)
			kinds[r.Kind]++
			if r.Kind == session.Game || r.Kind == session.Malformed {
				if want := map[decode.Dir]netip.AddrPort{decode.C2S: d.Src, decode.S2C: d.Dst}[r.Dir]; r.Client != want {
					t.Fatalf("datagram %d (%s): client %v, want %v", i+1, r.Dir, r.Client, want)
				}
			}
			if r.Conv != nil && r.Conv.ID != 0 && r.Client != r.Conv.Client {
				t.Fatalf("datagram %d: client %v on conversation of %v", i+1, r.Client, r.Conv.Client)
			}
			switch r.Kind {
			case session.NonGame:
				if r.Conv != nil || r.Err() != nil {
					t.Fatalf("datagram %d: non-game with conversation %v, err %v", i+1, r.Conv, r.Err())
				}
			case session.Game:
				if r.Conv == nil || r.Err() != nil || r.Packet.Layout == nil || r.Dir != r.Packet.Layout.Dir || fd.cut {
					t.Fatalf("datagram %d: game record %+v", i+1, r)
				}
				if force != decode.VersionUnknown && (r.Version != force || r.Conv.Version != force) {
					t.Fatalf("datagram %d: era %s / conversation %s, forced %s", i+1, r.Version, r.Conv.Version, force)
				}
			case session.Malformed:
				if r.Conv == nil || r.Err() == nil {
					t.Fatalf("datagram %d: malformed record without conversation or error", i+1)
				}
			case session.Unknown:
				if r.Err() == nil || r.Packet.Layout != nil {
					t.Fatalf("datagram %d: unknown record %+v", i+1, r)
				}
			default:
				t.Fatalf("datagram %d: kind %d", i+1, r.Kind)
			}
			// The packet and its renderings never panic.
			r.Packet.AppendSummary(nil)
			r.Packet.AppendTree(nil, "")
			r.Packet.AppendJSONFields(nil)
		}
		st := tr.Stats
		if st.Game.Packets != kinds[session.Game] || st.Malformed.Packets != kinds[session.Malformed] ||
			st.Unknown.Packets != kinds[session.Unknown] || st.NonGame.Packets != kinds[session.NonGame] {
			t.Fatalf("stats %+v, records %v", st, kinds)
		}
		byName := st.Untracked.Names.Packets
		for _, c := range st.ByName {
			byName += c.Packets
		}
		if byName != len(ds)-kinds[session.NonGame] {
			t.Fatalf("ByName counts %d packets, %d game datagrams", byName, len(ds)-kinds[session.NonGame])
		}
		convPackets := 0
		for i, c := range tr.Conversations() {
			if c.ID != i+1 && c.ID != 0 {
				t.Fatalf("conversation %d has ID %d", i, c.ID)
			}
			convPackets += c.Packets
		}
		if convPackets > len(ds)-kinds[session.NonGame] {
			t.Fatalf("conversations count %d packets of %d", convPackets, len(ds))
		}
	})
}
