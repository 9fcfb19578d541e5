package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/fuzzcorpus"
)

// The dissector on plain Lua interpreters, with a stand-in for Wireshark's
// API: the Lua versions Wireshark embeds, and the fuzz target.

// TestDissectorOnPlainLua runs the dissector on the Lua versions Wireshark
// embeds (5.2 in Wireshark 4.0 and 4.2, 5.4 from 4.4), with a stand-in for
// Wireshark's API (testdata/wsstub.lua), and compares it with pmdump read
// as the tshark test does: number arithmetic differs between the two.
func TestDissectorOnPlainLua(t *testing.T) {
	luas := plainLuas()
	if len(luas) == 0 {
		t.Skip("neither lua5.2 nor lua5.4 installed: skipping (apt-get install lua5.2 lua5.4)")
	}
	lua := writeDissector(t)
	stub, err := filepath.Abs(filepath.Join("testdata", "wsstub.lua"))
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]string{
		"sample-legacy": "../../captures/legacy.pcap",
		"sample-modern": "../../captures/modern.pcapng",
		"edge-cases":    edgeCapture(t),
		"mutated":       mutatedCapture(t),
	}
	for _, interp := range luas {
		for name, path := range caps {
			t.Run(filepath.Base(interp)+"/"+name, func(t *testing.T) {
				compareOnPlainLua(t, interp, stub, lua, path)
			})
		}
	}
}

// plainLuas returns the Lua interpreters installed of the versions
// Wireshark embeds.
func plainLuas() []string {
	var luas []string
	for _, name := range []string{"lua5.2", "lua5.4"} {
		if p, err := exec.LookPath(name); err == nil {
			luas = append(luas, p)
		}
	}
	return luas
}

// compareOnPlainLua runs the dissector with the stand-in API on every game
// packet of a capture and compares it with pmdump read and states.
func compareOnPlainLua(t *testing.T, interp, stub, lua, path string) {
	want, lines := readJSONAndText(t, path)
	packets := luaPackets(t, path)
	cmd := exec.Command(interp, stub, lua, packets)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v: %s", interp, err, stderr.String())
	}
	got := parseStubOutput(t, stdout.String())
	withStateSizes(t, path, got, want) // the stub inflates every dif
	if len(got) != len(want) {
		t.Errorf("dissector claims %d packets, pmdump read shows %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if msg := comparePacket(got[i], want[i], lines[i]); msg != "" {
			t.Fatalf("packet %d: %s", want[i].N, msg)
		}
	}
	compareDifs(t, got, path, true)

	// Without a tree, as tshark printing summary lines: the same packets
	// and Info column, nothing added to the tree.
	cmd = exec.Command(interp, stub, lua, packets, "notree")
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s without a tree: %v: %s", interp, err, stderr.String())
	}
	compareSummaries(t, parseStubOutput(t, stdout.String()), want, lines)
}

// FuzzDissector feeds datagrams between two clients (10.0.0.2:40000 and
// 10.0.0.3:40001) and a server (10.0.0.1, ports 50000 and 24785) to the
// dissector on plain Lua and to pmdump, which must agree. The input is a
// sequence of records: a route byte (low two bits: A c→s, A s→c, B c→s,
// B s→c), a length byte and that many payload bytes. Host names are kept
// to ASCII: the dissector quotes other text only approximately as Go does.
func FuzzDissector(f *testing.F) {
	luas := plainLuas()
	if len(luas) == 0 {
		f.Skip("neither lua5.2 nor lua5.4 installed: skipping (apt-get install lua5.2 lua5.4)")
	}
	lua := writeDissector(f)
	stub, err := filepath.Abs(filepath.Join("testdata", "wsstub.lua"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.pcap")
		if err := writeFuzzCapture(path, data); err != nil {
			t.Fatal(err)
		}
		compareOnPlainLua(t, luas[len(luas)-1], stub, lua, path)
	})
}

// luaPackets writes the game packets of a capture (from pmdump read --json
// -x) as a Lua table for the stub.
func luaPackets(t *testing.T, path string) string {
	t.Helper()
	var js, stderr bytes.Buffer
	if code := run([]string{"read", "--json", "-x", path}, &js, &stderr); code != exitOK {
		t.Fatalf("pmdump read: exit %d: %s", code, stderr.String())
	}
	var b strings.Builder
	b.WriteString("PACKETS = {\n")
	dec := json.NewDecoder(&js)
	for dec.More() {
		var p struct {
			N        int `json:"num"`
			TS       time.Time
			Src, Dst string
			Raw      string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		src, dst := netip.MustParseAddrPort(p.Src), netip.MustParseAddrPort(p.Dst)
		fmt.Fprintf(&b, "{n = %d, ts = %.9f, src = %q, sport = %d, dst = %q, dport = %d, hex = %q},\n",
			p.N, float64(p.TS.UnixNano())/1e9, src.Addr(), src.Port(), dst.Addr(), dst.Port(), p.Raw)
	}
	b.WriteString("}\n")
	f := filepath.Join(t.TempDir(), "packets.lua")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// parseStubOutput turns the stub's lines into tshark-like layers.
func parseStubOutput(t *testing.T, out string) []map[string][]string {
	t.Helper()
	var pkts []map[string][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		kind, rest, _ := strings.Cut(l, " ")
		switch kind {
		case "P":
			pkts = append(pkts, map[string][]string{"frame.number": {rest}})
		case "I":
			pkts[len(pkts)-1]["_ws.col.Info"] = []string{rest}
		case "F":
			k, v, _ := strings.Cut(rest, "\t")
			pkts[len(pkts)-1][k] = append(pkts[len(pkts)-1][k], v)
		case "E":
			if strings.Contains(rest, "dissector error") {
				t.Fatalf("Lua error in the dissector: %s", rest)
			}
		default:
			t.Fatalf("unexpected output %q", l)
		}
	}
	return pkts
}

// dissectorSeeds are FuzzDissector's seed inputs: a legacy and a modern
// conversation and a few damaged datagrams, in writeFuzzCapture's records.
func dissectorSeeds() map[string][]byte {
	rec := func(route byte, p []byte) []byte { return append([]byte{route, byte(len(p))}, p...) }
	be, le := binary.BigEndian, binary.LittleEndian
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	u32 := func(o binary.AppendByteOrder, v int64) []byte { return o.AppendUint32(nil, uint32(int32(v))) }
	f64 := func(v float64) []byte { return le.AppendUint64(nil, math.Float64bits(v)) }
	host := func(s string) []byte { return append([]byte(s), make([]byte, 16-len(s))...) }
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(bytes.Repeat([]byte{1, 2, 3, 0}, 200))
	zw.Close()
	zb := z.Bytes()
	half := len(zb) / 2
	return map[string][]byte{
		"legacy": cat(
			rec(0, []byte("1234")),
			rec(1, []byte("5678\x00")),
			rec(0, cat([]byte("CJON"), []byte{3}, host("pc1"))),
			rec(1, cat([]byte("SJON"), be.AppendUint16(nil, 4), u32(be, 9), u32(be, 1), []byte{40, 1, 3, 0}, be.AppendUint16(nil, 1005), []byte{0})),
			rec(0, cat([]byte("cdat"), []byte{1}, u32(be, 12), []byte{0x23})),
			rec(1, cat([]byte("serr"), []byte{1}, u32(be, 20), []byte{0, 0, 0xff, 0xd4}, u32(be, 1))),
			rec(1, cat([]byte("sdat"), u32(be, 22), u32(be, 1), []byte{1}, u32(be, 20), []byte{5, 1, 0x21})),
			rec(1, cat([]byte("stdf"), u32(be, 0), u32(be, 30), []byte{0, 1}, u32(be, 0), u32(be, int64(len(zb))), zb)),
			rec(0, cat([]byte("sdak"), []byte{1}, u32(be, 16), u32(be, 3), u32(be, 0), u32(be, 0))),
			rec(0, cat([]byte("stak"), []byte{1, 0}, u32(be, 30))),
		),
		"modern": cat(
			rec(2, []byte("1234")),
			rec(3, []byte("5678")),
			rec(2, cat([]byte("cjon"), []byte{5}, host("pc2"))),
			rec(3, cat([]byte("sjon"), u32(le, 7), u32(le, 100), []byte{2, 5, 1})),
			rec(2, cat([]byte("ping"), f64(1.5))),
			rec(3, cat([]byte("pong"), f64(1.5), f64(2.25))),
			rec(3, cat([]byte("stdf"), u32(le, 0), u32(le, 101), []byte{1, 2, 1}, u32(le, int64(half)), u32(le, int64(len(zb)-half)), zb[half:])),
			rec(3, cat([]byte("stdf"), u32(le, 0), u32(le, 101), []byte{0, 2, 1}, u32(le, 0), u32(le, int64(half)), zb[:half])),
			rec(2, cat([]byte("stak"), []byte{2}, u32(le, 101), u32(le, 100), f64(30), f64(0.01), []byte{0xff}, f64(0), f64(0), f64(12))),
		),
		"damaged": cat(
			rec(2, []byte("12")),
			rec(0, []byte("zzzzjunk")),
			rec(2, []byte("1234")),
			rec(3, cat([]byte("stdf"), u32(le, 0), u32(le, 5), []byte{3, 2, 0}, u32(le, 0), u32(le, 9), []byte("abc"))),
			rec(2, cat([]byte("cdat"), []byte{1}, u32(le, 2))),
			rec(2, []byte("wxyz")),
		),
	}
}

func TestDissectorSeedCorpus(t *testing.T) {
	fuzzcorpus.Sync(t, "FuzzDissector", dissectorSeeds())
}
