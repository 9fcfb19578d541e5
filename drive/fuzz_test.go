package drive

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/pmdump/pmdump/internal/fuzzcorpus"
	"github.com/pmdump/pmdump/synth"
)

// fuzzSeeds are datagrams a server may send a driven client: a one-piece
// keyframe, a dif on a base the client lacks, a file piece, a join reply
// and damaged ones.
func fuzzSeeds() map[string][]byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, 7)
	zw.Write(make([]byte, synth.ModernStateSize))
	zw.Close()
	le := binary.LittleEndian
	stdf := make([]byte, 23, 23+z.Len())
	copy(stdf, "stdf")
	le.PutUint32(stdf[8:], 5)
	stdf[13] = 1
	le.PutUint32(stdf[19:], uint32(z.Len()))
	stdf = append(stdf, z.Bytes()...)
	based := bytes.Clone(stdf)
	le.PutUint32(based[4:], 3)
	bad := bytes.Clone(stdf)
	bad[30] ^= 0xff
	sfil := make([]byte, 22, 30)
	copy(sfil, "sfil")
	le.PutUint32(sfil[4:], 77)
	sfil[9] = 1
	le.PutUint32(sfil[14:], 8)
	sfil = append(sfil, "12345678"...)
	sjon := []byte("sjon\x01\x00\x00\x00\x0a\x00\x00\x00\x01\x03\x00")
	return map[string][]byte{
		"keyframe":     stdf,
		"missing-base": based,
		"corrupt":      bad,
		"file":         sfil,
		"join":         sjon,
		"short":        []byte("stdf\x00"),
	}
}

func TestSeedCorpus(t *testing.T) { fuzzcorpus.Sync(t, "FuzzServerDatagram", fuzzSeeds()) }

// FuzzServerDatagram feeds a driven client what a server sends it, twice.
func FuzzServerDatagram(f *testing.F) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatal(err)
	}
	defer conn.Close()
	discard := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 4 {
			return
		}
		rec := &Recording{}
		c := &Client{N: 1, states: map[Key][32]byte{}}
		rec.Clients = []*Client{c}
		r := &runner{rec: rec, size: synth.ModernStateSize, sent: map[*Action]Key{}}
		d := &driven{rec: c, conn: conn, server: discard, pending: map[difKey]*partial{}, files: map[int32]*partial{}, seen: map[Key]bool{}, newest: -1}
		for range 2 {
			if err := r.client(d, arrival{from: discard, data: b}); err != nil {
				t.Fatal(err)
			}
		}
		if len(d.hist) > 8 || len(d.pending) > maxPending {
			t.Fatalf("%d states held, %d difs pending", len(d.hist), len(d.pending))
		}
		for _, h := range d.hist {
			if len(h.data) != synth.ModernStateSize {
				t.Fatalf("a state of %d bytes", len(h.data))
			}
		}
	})
}
