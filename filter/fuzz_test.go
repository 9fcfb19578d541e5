package filter

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// fuzzSeeds are filter expressions and packets (an era byte, 0 auto, 1
// legacy, 2 modern, then the payload) to start FuzzFilter from; the same
// pairs are in testdata/fuzz/FuzzFilter.
var fuzzSeeds = []struct {
	expr   string
	packet []byte
}{
	{"stdf and src == 0", append([]byte{1}, decode.Encode(nil, decode.MustNew(decode.Legacy, "stdf").Set("count", 1).SetBytes("data", []byte("xy")))...)},
	{"1234 or 5678", []byte("\x001234")},
	{`type == "5678" or _1234`, []byte("\x025678")},
	{"any(entries, .data2 == 71)", append([]byte{1}, decode.Encode(nil, decode.MustNew(decode.Legacy, "sdat").AddEntry(5, 1, 2, 71))...)},
	{"not frame == 5 and player != 1", append([]byte{2}, decode.Encode(nil, decode.MustNew(decode.Modern, "cdat").Set("frame", 5).Set("player", 1))...)},
	{`c_sync < -5 or name_raw matches "^a"`, append([]byte{1}, decode.Encode(nil, decode.MustNew(decode.Legacy, "serr").Set("c_sync", 250))...)},
	{"dsync > 0.5 || chase_fps in 10..20", append([]byte{2}, decode.Encode(nil, decode.MustNew(decode.Modern, "stak").SetFloat("dsync", 1))...)},
	{`hostname startsWith "vm" and color in [1, 2, 3]`, append([]byte{0}, decode.Encode(nil, decode.MustNew(decode.Modern, "cjon").SetBytes("hostname", []byte("vm")))...)},
	{"malformed or unknown and len > 3", []byte("\x00zzzz\x01")},
	{"all(entries, .frame > 0) and one(entries, .type == 5)", []byte("\x01sdat\x00\x00\x00\x01")},
}

// FuzzFilter compiles any expression and matches it against any packet:
// neither ever panics, and a filter that compiles matches deterministically,
// the same as when every name is defined.
func FuzzFilter(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.expr, s.packet)
	}
	cli := netip.MustParseAddrPort("10.0.0.2:24785")
	srv := netip.MustParseAddrPort("10.0.0.1:24785")
	f.Fuzz(func(t *testing.T, src string, packet []byte) {
		flt, err := Compile(src)
		if err != nil {
			return
		}
		if len(packet) == 0 {
			return
		}
		tr := session.NewTracker(decode.Version(packet[0] % 3))
		payload := packet[1:]
		d := &source.Datagram{N: 1, TS: time.Unix(0, 0), Src: cli, Dst: srv, Payload: payload, Length: len(payload)}
		if decode.DirOf(payload) == decode.S2C {
			d.Src, d.Dst = srv, cli
		}
		r := tr.Process(d)
		first := flt.Match(r)
		if again := flt.Match(r); again != first {
			t.Fatalf("%q: %v then %v", src, first, again)
		}
		if all := everyName(flt).Match(r); all != first {
			t.Fatalf("%q: %v, and %v with every name defined", src, first, all)
		}
	})
}

// TestFuzzSeedFiles keeps testdata/fuzz/FuzzFilter in step with fuzzSeeds:
// run with PMDUMP_WRITE_SEEDS=1 to write them.
func TestFuzzSeedFiles(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzFilter")
	for i, s := range fuzzSeeds {
		want := fmt.Sprintf("go test fuzz v1\nstring(%s)\n[]byte(%s)\n", strconv.Quote(s.expr), strconv.Quote(string(s.packet)))
		path := filepath.Join(dir, fmt.Sprintf("seed-%02d", i))
		if os.Getenv("PMDUMP_WRITE_SEEDS") != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("seed file: %v (write with PMDUMP_WRITE_SEEDS=1)", err)
		}
		if string(got) != want {
			t.Errorf("%s differs from seed %d", path, i)
		}
	}
}
