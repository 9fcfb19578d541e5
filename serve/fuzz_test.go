package serve

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// FuzzClientDatagram sends a joined client's socket any datagram: the
// server must neither panic nor let an acknowledgement claim more than the
// client was sent. The first byte picks the era (odd: legacy).
func FuzzClientDatagram(f *testing.F) {
	eras := map[decode.Version]*client{}
	for _, in := range []string{"sample:legacy", "sample:modern"} {
		rec, err := Load([]string{in}, LoadOptions{Player: 1})
		if err != nil {
			f.Fatal(err)
		}
		ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			f.Fatal(err)
		}
		defer ln.Close()
		srv, err := New(rec, ln, Options{})
		if err != nil {
			f.Fatal(err)
		}
		conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			f.Fatal(err)
		}
		defer conn.Close()
		// A joined client that was sent the first state and game moves
		// (the replies go to the discard port).
		c := newClient(context.Background(), srv, conn, netip.MustParseAddrPort("127.0.0.1:9"), time.Now())
		c.joined.Store(true)
		srv.joined[c.addr] = c
		data, err := rec.State(0, rec.Cursor())
		if err != nil {
			f.Fatal(err)
		}
		newSender(c).state(rec.States[0].SLSN&0xff, rec.States[0].Frame, data, 0)
		for _, t := range rec.Sdat[:min(len(rec.Sdat), 5)] {
			c.sentSdat(t.Payload)
		}
		eras[rec.Era] = c
	}
	seeds := []struct {
		era  decode.Version
		name string
		set  map[string]int64
	}{
		{decode.Legacy, "stak", map[string]int64{"frame": 0}},
		{decode.Legacy, "sdak", map[string]int64{"frame": 10, "entry_pos": 3}},
		{decode.Legacy, "CJON", map[string]int64{"color": 3}},
		{decode.Modern, "stak", map[string]int64{"ack_frame": 127}},
		{decode.Modern, "ping", nil},
		{decode.Modern, "cjon", map[string]int64{"color": 3}},
	}
	for _, s := range seeds {
		p := decode.MustNew(s.era, s.name)
		for k, v := range s.set {
			p.Set(k, v)
		}
		b := []byte{0}
		if s.era == decode.Legacy {
			b[0] = 1
		}
		f.Add(append(b, decode.Encode(nil, p)...))
	}
	var pk decode.Packet
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 1 {
			return
		}
		c := eras[decode.Modern]
		if b[0]&1 == 1 {
			c = eras[decode.Legacy]
		}
		c.handle(&pk, b[1:], time.Now())
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.sdakEntry > c.sdatEntry {
			t.Fatalf("sdak acknowledged game move %d, only %d sent", c.sdakEntry, c.sdatEntry)
		}
		if src, _, ok := c.bases.Base(); ok && !slices.ContainsFunc(c.bases.Kept(), func(b statedif.Base[[]byte]) bool { return b.Frame == src }) {
			t.Fatalf("base %d is not one of the %d states kept", src, c.bases.Len())
		}
	})
}
