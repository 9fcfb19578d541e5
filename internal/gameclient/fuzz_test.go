package gameclient

import (
	"bytes"
	"net"
	"net/netip"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/diftest"
	"github.com/pmdump/pmdump/internal/fuzzcorpus"
	"github.com/pmdump/pmdump/statedif"
)

// fuzzSeeds are datagrams a client may receive: whole one-piece difs of
// both eras, a zero-length last piece, a pong, and damaged ones.
func fuzzSeeds(t testing.TB) map[string][]byte {
	z := diftest.Deflate(t, make([]byte, 300), statedif.ZlibLevel)
	modern := diftest.Stdf(decode.Modern, 0, 0, 5, z)[0]
	legacy := diftest.Stdf(decode.Legacy, 0, 0, 5, z)[0]
	empty := diftest.Stdf(decode.Modern, 0, 0, 5, nil)[0]
	bad := bytes.Clone(modern)
	bad[30] ^= 0xff
	newest := diftest.Stdf(decode.Newest, 0, 0, 5, z)[0]
	n3 := decode.MustParseVersion("2024-05b")
	return map[string][]byte{
		"newest-keyframe":   append([]byte{byte(decode.Newest)}, newest...),
		"2024-05b-keyframe": append([]byte{byte(n3)}, diftest.Stdf(n3, 0, 0, 5, z)[0]...),
		"modern-keyframe":   append([]byte{byte(decode.Modern)}, modern...),
		"legacy-keyframe":   append([]byte{byte(decode.Legacy)}, legacy...),
		"modern-empty-last": append([]byte{byte(decode.Modern)}, empty...),
		"modern-corrupt":    append([]byte{byte(decode.Modern)}, bad...),
		"modern-pong":       append([]byte{byte(decode.Modern)}, "pong0123456789abcdef"...),
		"short":             []byte{byte(decode.Legacy), 's', 't', 'd'},
	}
}

func TestSeedCorpus(t *testing.T) { fuzzcorpus.Sync(t, "FuzzPacket", fuzzSeeds(t)) }

// FuzzPacket feeds a client one datagram: the first byte picks the
// version (decode.Version's number).
func FuzzPacket(f *testing.F) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatal(err)
	}
	defer conn.Close()
	discard := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 5 {
			return
		}
		era := decode.Version(int(b[0]) % (len(decode.Versions()) + 1))
		if !era.Known() {
			era = decode.Modern
		}
		c := &Client{conn: conn, w: wires[era.String()], server: discard, last: -1, pending: map[difKey]*partial{}}
		c.packet(b[1:])
		c.packet(b[1:]) // a duplicate is not newer
		if len(c.Applied) > 1 {
			t.Fatalf("%d states applied from one dif", len(c.Applied))
		}
		for _, a := range c.Applied {
			if a.Src != 0 {
				t.Fatalf("applied a dif on base %d it never had", a.Src)
			}
		}
	})
}
