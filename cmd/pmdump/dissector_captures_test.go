package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

// The captures the dissector's tests build.

// udpDatagram is one UDP datagram of a test capture (cli_test.go has one
// with textual addresses).
type udpDatagram struct {
	src, dst netip.AddrPort
	b        []byte
}

// writeDatagrams writes datagrams to a new capture at path (pcap or pcapng
// by its extension), step apart from 2026-01-01 00:00 UTC.
func writeDatagrams(path string, step time.Duration, dgs []udpDatagram) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := synth.NewCaptureWriter(f, synth.FormatFor(path))
	if err != nil {
		return err
	}
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range dgs {
		if err := w.WriteDatagram(ts, d.src, d.dst, d.b); err != nil {
			return err
		}
		ts = ts.Add(step)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// testCapture writes datagrams to a capture named name in the test's
// temporary directory and returns its path.
func testCapture(t testing.TB, name string, step time.Duration, dgs []udpDatagram) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := writeDatagrams(path, step, dgs); err != nil {
		t.Fatal(err)
	}
	return path
}

// edgeCapture writes a capture of the cases real captures lack: packets that
// do not fit their layout, an unknown name on a game conversation, legacy
// values recovered from their wire form, a short sdak, a full server, control
// bits, floats of every form, texts of their own length (whole, cut, damaged),
// enumerations shown by name, a new session without a handshake, a
// conversation of no known version, and non-game UDP.
func edgeCapture(t *testing.T) string {
	t.Helper()
	ap := netip.MustParseAddrPort
	lc, ls, lsrv := ap("10.0.0.2:40000"), ap("10.0.0.1:24785"), ap("10.0.0.1:50000")
	mc, ms, msrv := ap("10.0.0.3:40001"), ap("10.0.0.1:24785"), ap("10.0.0.1:50001")
	nc, uc, srv := ap("10.0.0.4:40002"), ap("10.0.0.5:40003"), ap("10.0.0.1:24785")
	be, le := binary.BigEndian, binary.LittleEndian
	pkt := func(name string, parts ...any) []byte {
		b := []byte(name)
		for _, p := range parts {
			switch v := p.(type) {
			case byte:
				b = append(b, v)
			case []byte:
				b = append(b, v...)
			case string:
				b = append(b, v...)
			}
		}
		return b
	}
	u32 := func(o binary.AppendByteOrder, v int64) []byte { return o.AppendUint32(nil, uint32(int32(v))) }
	f64 := func(v float64) []byte { return le.AppendUint64(nil, math.Float64bits(v)) }
	host := func(s string) []byte { return append([]byte(s), make([]byte, 16-len(s))...) }
	strn := func(s string) []byte { return append(append(u32(le, int64(len(s))), s...), 0) }
	dgs := []udpDatagram{
		{ap("10.0.0.9:5353"), ap("10.0.0.8:5353"), []byte("hello, not a game")},
		{ap("10.0.0.9:6000"), ap("10.0.0.8:6001"), pkt("ping", "xx")}, // a common word off the game
		// legacy conversation
		{lc, ls, pkt("1234")},
		{lsrv, lc, pkt("5678", byte(0))},
		{lc, lsrv, pkt("CJON", byte(3), host("häst\"q\x01"))},
		{lsrv, lc, pkt("SJON", be.AppendUint16(nil, 4), u32(be, 9), u32(be, 1), byte(40), byte(99), byte(3), byte(0), be.AppendUint16(nil, 1005), byte(0))},
		{lsrv, lc, pkt("SJON", be.AppendUint16(nil, 4), u32(be, 9), u32(be, 1), byte(40), byte(2), byte(3), byte(1), be.AppendUint16(nil, 990), byte(1))},
		{lc, lsrv, pkt("cdat", byte(2), u32(be, 12), byte(0x23))},
		{lc, lsrv, pkt("cdat", byte(2), u32(be, 13), byte(127))},
		{lc, lsrv, pkt("cdat", byte(2), u32(be, 14), byte(0x81))},
		{lc, lsrv, pkt("cdat", byte(2), u32(be, 15))},                                     // short
		{lc, lsrv, pkt("cdat", byte(2), u32(be, 15), byte(1), byte(9))},                   // long
		{lc, lsrv, pkt("sdak", byte(2), u32(be, 16), u32(be, 3), u32(be, 0), u32(be, 0))}, // short form
		{lc, lsrv, pkt("sdak", byte(2), u32(be, 17), u32(be, 3), u32(be, 0), u32(be, 0), u32(be, 41))},
		{lsrv, lc, pkt("serr", byte(1), u32(be, 20), []byte{0, 0, 0xff, 0xd4}, u32(be, 1))},
		{lsrv, lc, pkt("serr", byte(1), u32(be, 21), u32(be, 0), u32(be, 2))},
		{lsrv, lc, pkt("sdat", u32(be, 22), u32(be, 1), byte(2), u32(be, 20), byte(5), byte(2), byte(0x21), u32(be, 21), byte(1), byte(2), byte(64))},
		{lsrv, lc, pkt("sdat", u32(be, 23), u32(be, 1), byte(3), u32(be, 20), byte(5), byte(2), byte(0x21))}, // entries overrun
		{lsrv, lc, pkt("stdf", u32(be, 0), u32(be, 30), byte(0), byte(0), u32(be, 0), u32(be, 2), "ab")},     // count 0
		{lsrv, lc, pkt("stdf", u32(be, 0), u32(be, 30), byte(2), byte(2), u32(be, 0), u32(be, 2), "ab")},     // seq >= count
		{lsrv, lc, pkt("stdf", u32(be, 0), u32(be, 30), byte(0), byte(1), u32(be, -4), u32(be, 2), "ab")},    // negative start
		{lsrv, lc, pkt("stdf", u32(be, 0), u32(be, 30), byte(0), byte(1), u32(be, 0), u32(be, 9), "ab")},     // size overruns
		{lsrv, lc, pkt("stdf", u32(be, 0), u32(be, 31), byte(0), byte(1), u32(be, 0), u32(be, 3), "abc")},    // fits; not zlib
		{lc, lsrv, pkt("stak", byte(2), byte(1), u32(be, 31))},
		{lc, lsrv, pkt("zzzz", "what")}, // unknown name on the conversation
		{lc, lsrv, pkt("s", "x")},       // too short for a name
		{lc, lsrv, pkt("st")},
		// modern conversation
		{mc, ms, pkt("1234")},
		{msrv, mc, pkt("5678")},
		{mc, msrv, pkt("cjon", byte(5), host("pc\\2"))},
		{msrv, mc, pkt("sjon", u32(le, 7), u32(le, 100), byte(1), byte(5), byte(2))},
		{mc, msrv, pkt("ping", f64(1.5))},
		{msrv, mc, pkt("pong", f64(1.5), f64(1234567.875))},
		{mc, msrv, pkt("pang", f64(math.Inf(1)))},
		{mc, msrv, pkt("stak", byte(1), u32(le, 100), u32(le, 99), f64(0.1), f64(-1e-7), byte(0xfe), f64(math.NaN()), f64(3e20), f64(math.Copysign(0, -1)))},
		{mc, msrv, pkt("rctl", u32(le, 3), f64(-2))},
		{msrv, mc, pkt("sfil", u32(le, 1), byte(0), byte(1), u32(le, 0), u32(le, 2), u32(le, 10), "hi")},
		{mc, msrv, pkt("sfak", u32(le, 1))},
		{msrv, mc, pkt("extr", make([]byte, 7))},
		{msrv, mc, pkt("snfo", u32(le, 3), byte(1), byte(1), u32(le, 0), u32(le, 0))}, // seq >= count
		{mc, msrv, pkt("crfl")},
		{mc, msrv, pkt("cjrc")},
		{msrv, mc, pkt("sjrc", f64(0))},
		{msrv, mc, pkt("sdat", u32(le, 1))}, // a legacy name in a modern conversation
		{mc, msrv, pkt("cdat", byte(1), u32(le, 101), byte(4))},
		{mc, msrv, pkt("1234")}, // the client shakes hands again
		{mc, msrv, pkt("cdat", byte(1), u32(le, 2), byte(0))},
		// a conversation of the versions of 2026: no handshake, the server
		// on its listening port, texts of their own length (strn),
		// enumerations shown by name
		{nc, srv, pkt("cjon", u32(le, 9), strn("p1"), strn("häst\"\t"))},
		{srv, nc, pkt("sjon", u32(le, 1), u32(le, 50), u32(le, 3), u32(le, 9), u32(le, 0))},
		{nc, srv, pkt("cdat", u32(le, 0), u32(le, 3), u32(le, 51), u32(le, 0x41))},
		{nc, srv, pkt("clog", u32(le, 36), u32(le, 0), u32(le, 52), f64(2.5), strn("ping 12 ms"))},
		{nc, srv, pkt("clog", u32(le, 99), u32(le, 1), u32(le, 53), f64(-1), strn(""))},                  // a log type with no name
		{nc, srv, pkt("clog", u32(le, 10), u32(le, 1), u32(le, 54), f64(0), strn("a\x00b"))},             // text cut at its NUL
		{nc, srv, pkt("clog", u32(le, 10), u32(le, 1), u32(le, 55), f64(0), u32(le, -1), byte(0))},       // negative length
		{nc, srv, pkt("clog", u32(le, 10), u32(le, 1), u32(le, 56), f64(0), u32(le, 9), "abc", byte(0))}, // length overruns
		{nc, srv, pkt("clog", u32(le, 10), u32(le, 1), u32(le, 57), f64(0), u32(le, 3), "abcd")},         // no NUL after the text
		{nc, srv, pkt("clog", u32(le, 10), u32(le, 1), u32(le, 58), f64(0), u32(le, 3), "ab")},           // short
		{nc, srv, pkt("cjon", u32(le, 9), strn("p1"), u32(le, 40), "vm", byte(0))},                       // host name overruns
		{nc, srv, pkt("crfl")},
		{srv, nc, pkt("srrf", u32(le, 5))},
		{srv, nc, pkt("srrf", u32(le, 7))},
		{nc, srv, pkt("rctl", u32(le, 20), f64(1))},
		{srv, nc, pkt("stdf", u32(le, 0), u32(le, 1), u32(le, 0), u32(le, 3), u32(le, 60), u32(le, 0), u32(le, 0), u32(le, 2), "abc")},
		{srv, nc, pkt("stdf", u32(le, 1), u32(le, 2), u32(le, 1000), u32(le, 1000), u32(le, 61), u32(le, 0), u32(le, 0), u32(le, 2), make([]byte, 1000))}, // 1000-byte pieces: of no version of these fields
		{nc, srv, pkt("stak", u32(le, 0), u32(le, 3), u32(le, 60), u32(le, 59), f64(40), f64(0.01), u32(le, -2), f64(0), f64(1.5), f64(33))},
		{nc, srv, pkt("cjon", u32(le, 9), strn("p1"), strn("vm"))}, // a join request after the reply: a new session
		{srv, nc, pkt("sjon", u32(le, 1), u32(le, 80), u32(le, 4), u32(le, 9), u32(le, 0))},
		// a conversation whose packets fit no known version
		{uc, srv, pkt("cjon", make([]byte, 26))},
		{uc, srv, pkt("cjon", make([]byte, 26))},
		{uc, srv, pkt("ping", f64(1))},
		{uc, srv, pkt("stdf", make([]byte, 3))},
		{srv, uc, pkt("pong", f64(1), f64(2))},
		{srv, uc, pkt("pong", f64(1), f64(3))},
		{uc, srv, pkt("cdat", make([]byte, 7))},
	}
	return testCapture(t, "edge.pcap", time.Millisecond, dgs)
}

// snapCapture is the legacy sample cut to a 70-byte snap length by
// editcap (installed with tshark): most payloads are cut short.
func snapCapture(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "snap.pcap")
	editcap, err := exec.LookPath("editcap")
	if err != nil {
		return "" // the subtest says it is skipped
	}
	if b, err := exec.Command(editcap, "-s", "70", "../../captures/legacy.pcap", out).CombinedOutput(); err != nil {
		t.Fatalf("editcap: %v: %s", err, b)
	}
	return out
}

// mutatedCapture writes the packets of both samples and of a short
// synthetic game of every later version (each on addresses of its own),
// each packet followed by a damaged copy (cut short, lengthened, a byte
// changed, a count or size field changed, the name's case flipped), so
// that the dissector meets every way a packet can fail to fit, in
// conversations whose version and player it must follow. The damage is
// random with a fixed seed.
func mutatedCapture(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(12, 34))
	var dgs []udpDatagram
	inputs := []string{"../../captures/legacy.pcap", "../../captures/modern.pcapng"}
	for _, v := range decode.Versions()[2:] { // the samples are of the first two
		path := filepath.Join(t.TempDir(), v.String()+".pcap")
		var stderr bytes.Buffer
		args := []string{"synth", "-o", path, "--era", v.String(), "--players", "2", "--duration", "1s", "--seed", "3", "--no-truth"}
		if code := run(args, &bytes.Buffer{}, &stderr); code != exitOK {
			t.Fatalf("pmdump %v: exit %d: %s", args, code, stderr.String())
		}
		inputs = append(inputs, path)
	}
	for k, sample := range inputs {
		var js, stderr bytes.Buffer
		if code := run([]string{"read", "--json", "-x", sample}, &js, &stderr); code != exitOK {
			t.Fatalf("pmdump read: exit %d: %s", code, stderr.String())
		}
		dec := json.NewDecoder(&js)
		for dec.More() {
			var p struct {
				Src, Dst string
				Raw      string
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			raw, err := hex.DecodeString(p.Raw)
			if err != nil {
				t.Fatal(err)
			}
			src, dst := netip.MustParseAddrPort(p.Src), netip.MustParseAddrPort(p.Dst)
			if k >= 2 {
				src, dst = moved(src, k), moved(dst, k)
			}
			dgs = append(dgs, udpDatagram{src, dst, raw})
			m := append([]byte(nil), raw...)
			switch rng.IntN(6) {
			case 0:
				m = m[:rng.IntN(len(m)+1)]
			case 1:
				for n := 1 + rng.IntN(9); n > 0; n-- {
					m = append(m, byte(rng.IntN(256)))
				}
			case 2:
				if len(m) > 4 {
					m[4+rng.IntN(len(m)-4)] = byte(rng.IntN(256))
				}
			case 3: // a byte of the piece header or the entry count
				if len(m) > 13 {
					m[13+rng.IntN(min(len(m)-13, 10))] ^= byte(1 + rng.IntN(255))
				}
			case 4:
				if len(m) >= 4 {
					m[rng.IntN(4)] ^= 0x20
				}
			case 5:
				continue
			}
			dgs = append(dgs, udpDatagram{src, dst, m})
		}
	}
	return testCapture(t, "mutated.pcap", time.Millisecond, dgs)
}

// moved is an IPv4 endpoint moved to the network 10.k (the synthetic
// games all use 10.0.0.x).
func moved(a netip.AddrPort, k int) netip.AddrPort {
	b := a.Addr().As4()
	b[1] = byte(k)
	return netip.AddrPortFrom(netip.AddrFrom4(b), a.Port())
}

// writeFuzzCapture writes FuzzDissector's input as a capture at path.
func writeFuzzCapture(path string, data []byte) error {
	ap := netip.MustParseAddrPort
	a, as := ap("10.0.0.2:40000"), ap("10.0.0.1:50000")
	b, bs := ap("10.0.0.3:40001"), ap("10.0.0.1:24785")
	routes := [4][2]netip.AddrPort{{a, as}, {as, a}, {b, bs}, {bs, b}}
	var dgs []udpDatagram
	for len(data) >= 2 {
		route, n := routes[data[0]&3], int(data[1])
		data = data[2:]
		n = min(n, len(data))
		p := bytes.Clone(data[:n])
		data = data[n:]
		if len(p) >= 21 && (string(p[:4]) == "CJON" || string(p[:4]) == "cjon") {
			for i := 5; i < 21; i++ {
				p[i] &= 0x7f
			}
		}
		dgs = append(dgs, udpDatagram{route[0], route[1], p})
	}
	return writeDatagrams(path, 300*time.Millisecond, dgs)
}
