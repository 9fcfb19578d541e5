package decode_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/source"
)

type realDatagram struct {
	n        int
	src, dst uint16 // ports
	payload  []byte
}

// readCapture returns every UDP datagram of a real capture, or skips the
// test when the capture is not there.
func readCapture(t *testing.T, rel string) []realDatagram {
	t.Helper()
	path := realcap.Path(t, rel)
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []realDatagram
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Truncated() {
			t.Fatalf("frame %d truncated", d.N)
		}
		out = append(out, realDatagram{d.N, d.Src.Port(), d.Dst.Port(), bytes.Clone(d.Payload)})
	}
	return out
}

// decodeAll decodes every datagram in the era, failing on any error, and
// counts them by name.
func decodeAll(t *testing.T, ds []realDatagram, era decode.Version) map[string]int {
	t.Helper()
	counts := map[string]int{}
	var p decode.Packet
	bad := 0
	for _, d := range ds {
		if err := decode.Decode(&p, d.payload, era); err != nil {
			if bad++; bad <= 5 {
				t.Errorf("frame %d: %v", d.n, err)
			}
			continue
		}
		counts[p.NameString()]++
		if again := decode.Encode(nil, &p); !bytes.Equal(again, d.payload) {
			t.Errorf("frame %d: %s re-encodes differently", d.n, p.NameString())
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d datagrams do not decode in the %s era", bad, len(ds), era)
	}
	return counts
}

func sameCounts(t *testing.T, got, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d packets, manifest says %d", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %d packets, not in the manifest", k, v)
		}
	}
}

func TestRealLegacy(t *testing.T) {
	for _, tt := range []struct {
		file   string
		counts map[string]int
	}{
		{"legacy/basic/capture.pcap", map[string]int{"1234": 1, "5678": 1, "CJON": 1, "SJON": 1, "cdat": 2268,
			"sdat": 1791, "sdak": 1791, "serr": 546, "stdf": 475, "stak": 457}},
		{"legacy/basic/capture.pcapng", map[string]int{"1234": 1, "5678": 1, "CJON": 1, "SJON": 1, "cdat": 2268,
			"sdat": 1791, "sdak": 1791, "serr": 546, "stdf": 475, "stak": 457}},
		{"legacy/lossy/capture.pcap", map[string]int{"1234": 2, "5678": 2, "CJON": 2, "SJON": 2, "cdat": 4972,
			"sdat": 2715, "sdak": 2600, "serr": 4316, "stdf": 654, "stak": 521}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			ds := readCapture(t, tt.file)
			sameCounts(t, decodeAll(t, ds, decode.Legacy), tt.counts)
			// The same bytes do not fit the modern era: CJON, SJON, sdat,
			// sdak and serr are unknown there and the 5-byte 5678 is too long.
			var p decode.Packet
			for _, d := range ds {
				if decode.Decode(&p, d.payload, decode.Modern) == nil {
					switch p.NameString() {
					case "1234", "cdat", "stak": // fit both eras by length
					default:
						t.Fatalf("frame %d: legacy %s decodes as modern", d.n, p.NameString())
					}
				}
			}
		})
	}
}

func TestRealLegacyBasicValues(t *testing.T) {
	ds := readCapture(t, "legacy/basic/capture.pcap")
	var p decode.Packet
	sdakLens := map[int]int{}
	cSync := map[int64]int{}
	type piece struct{ seq, count, start, size int64 }
	var first []piece
	for _, d := range ds {
		if err := decode.Decode(&p, d.payload, decode.Legacy); err != nil {
			t.Fatalf("frame %d: %v", d.n, err)
		}
		switch p.NameString() {
		case "5678":
			if len(d.payload) != 5 || d.payload[4] != 0 {
				t.Errorf("5678 is % x, want 35 36 37 38 00", d.payload)
			}
			if d.src != 52856 || d.dst != 24786 {
				t.Errorf("5678 from port %d to %d, want 52856 to 24786", d.src, d.dst)
			}
		case "1234":
			if d.src != 24786 || d.dst != 24785 {
				t.Errorf("1234 from port %d to %d, want 24786 to 24785", d.src, d.dst)
			}
		case "CJON":
			if h := p.Values[p.Layout.Field("hostname")].Text(); h != "vm" {
				t.Errorf("CJON hostname %q, want vm", h)
			}
		case "SJON":
			for name, want := range map[string]int64{"level": 4, "frame": 200, "entry_pos": 2, "fps": 40,
				"player": 1, "color": 11, "dm_bullets": 0, "dm_damage": 1005, "suicide_bullets": 0} {
				if got := p.Int(name); got != want {
					t.Errorf("SJON %s = %d, want %d", name, got, want)
				}
			}
			f := p.Layout.Fields[p.Layout.Field("dm_damage")]
			if m, _ := f.Meant(p.Int("dm_damage")); m != 5 {
				t.Errorf("SJON damage meant %d, want 5", m)
			}
		case "sdak":
			sdakLens[len(d.payload)]++
		case "serr":
			raw := p.Int("c_sync")
			cSync[raw]++
			f := p.Layout.Fields[p.Layout.Field("c_sync")]
			if m, _ := f.Meant(raw); m != raw-256 || m < -16 || m > -1 {
				t.Errorf("frame %d: serr c_sync raw %d meant %d", d.n, raw, m)
			}
			if p.Int("err_type") != 1 {
				t.Errorf("frame %d: serr type %d, want 1", d.n, p.Int("err_type"))
			}
		case "stdf":
			if p.Int("src") == 0 && p.Int("dst") == 200 {
				first = append(first, piece{p.Int("seq"), p.Int("count"), p.Int("start"), p.Int("size")})
				if p.Int("seq") == 0 && !bytes.HasPrefix(p.Payload(), []byte{0x78}) {
					t.Errorf("first piece starts % x, want a zlib header", p.Payload()[:2])
				}
			}
		case "sdat":
			if n := p.Int("n"); len(d.payload) != 13+7*int(n) || len(p.Entries) != 4*int(n) {
				t.Errorf("frame %d: sdat n %d, %d bytes, %d entry values", d.n, n, len(d.payload), len(p.Entries))
			}
		}
	}
	if sdakLens[21] != 1 || sdakLens[25] != 1790 || len(sdakLens) != 2 {
		t.Errorf("sdak lengths %v, want 21 x1 and 25 x1790", sdakLens)
	}
	wantSync := map[int64]int{240: 1, 241: 1, 242: 1, 243: 1, 244: 1, 245: 1, 246: 1, 247: 1, 248: 1, 249: 1,
		250: 2, 251: 4, 252: 6, 253: 15, 254: 98, 255: 411}
	if len(cSync) != len(wantSync) {
		t.Errorf("serr c_sync raw values %v, want %v", cSync, wantSync)
	}
	for k, v := range wantSync {
		if cSync[k] != v {
			t.Errorf("serr c_sync raw %d: %d packets, want %d", k, cSync[k], v)
		}
	}
	want := []piece{{0, 4, 0, 1000}, {1, 4, 1000, 1000}, {2, 4, 2000, 1000}, {3, 4, 3000, 606}}
	if len(first) != len(want) {
		t.Fatalf("src 0 dst 200 pieces %v, want %v", first, want)
	}
	for i := range want {
		if first[i] != want[i] {
			t.Errorf("src 0 dst 200 piece %d: %+v, want %+v", i, first[i], want[i])
		}
	}
}

func TestRealModern(t *testing.T) {
	for _, tt := range []struct {
		file      string
		counts    map[string]int
		zeroSized int // stdf pieces with no data
		ports     map[uint16]bool
	}{
		{"modern/basic/basic.pcap", map[string]int{"1234": 1, "5678": 1, "cdat": 1292, "cjon": 1, "pang": 61,
			"ping": 61, "pong": 61, "sjon": 1, "stak": 1275, "stdf": 2778}, 0, map[uint16]bool{58424: true}},
		{"modern/multi/multi.pcap", map[string]int{"1234": 3, "5678": 3, "cdat": 1635, "cjon": 3, "crfl": 2,
			"pang": 198, "ping": 198, "pong": 198, "sfak": 6, "sfil": 27, "sjon": 3, "stak": 2449, "stdf": 9601}, 2,
			map[uint16]bool{47183: true, 47316: true, 59425: true}},
		{"modern/basic_pcapng/basic.pcapng", map[string]int{"1234": 1, "5678": 1, "cdat": 1759, "cjon": 1,
			"pang": 65, "ping": 65, "pong": 65, "sjon": 1, "stak": 1868, "stdf": 2640}, 1, map[uint16]bool{56087: true}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			ds := readCapture(t, tt.file)
			sameCounts(t, decodeAll(t, ds, decode.Modern), tt.counts)
			var p decode.Packet
			zero := 0
			slsns := map[int64]bool{}
			for _, d := range ds {
				decode.Decode(&p, d.payload, decode.Modern)
				switch p.NameString() {
				case "stdf":
					if p.Int("size") == 0 {
						zero++
						if len(d.payload) != 23 || p.Int("seq") != p.Int("count")-1 {
							t.Errorf("frame %d: empty piece of %d bytes, seq %d of %d", d.n, len(d.payload), p.Int("seq"), p.Int("count"))
						}
					}
					if p.Int("start") != 1000*p.Int("seq") {
						t.Errorf("frame %d: piece %d starts at %d", d.n, p.Int("seq"), p.Int("start"))
					}
					slsns[p.Int("slsn")] = true
				case "5678":
					if !tt.ports[d.src] {
						t.Errorf("5678 from port %d, manifest gives %v", d.src, tt.ports)
					}
				case "cjon":
					if h := p.Values[p.Layout.Field("hostname")].Text(); h != "vm" {
						t.Errorf("cjon hostname %q, want vm", h)
					}
				case "sjon":
					if p.Int("player") < 1 || p.Int("player") > 3 || p.Int("slsn") != 0 || p.Int("level") != 1 {
						t.Errorf("sjon %s", p.AppendSummary(nil))
					}
				case "sfil":
					switch p.Int("file_size") {
					case 9175, 13443, 22490:
					default:
						t.Errorf("frame %d: sfil file size %d", d.n, p.Int("file_size"))
					}
					if p.Int("seq") == 0 && !bytes.HasPrefix(p.Payload(), []byte{0x78, 0x9c}) {
						t.Errorf("frame %d: first sfil piece starts % x, want 78 9c", d.n, p.Payload()[:2])
					}
				}
			}
			if zero != tt.zeroSized {
				t.Errorf("%d zero-length stdf pieces, manifest says %d", zero, tt.zeroSized)
			}
			if len(slsns) != 2 || !slsns[0] || !slsns[1] {
				t.Errorf("stdf slsn values %v, want 0 and 1", slsns)
			}
		})
	}
}

func TestRealModernBasicValues(t *testing.T) {
	ds := readCapture(t, "modern/basic/basic.pcap")
	var p decode.Packet
	// Frames 9-12 are the first dif: src 0, dst 128, slsn 0.
	type piece struct{ n, src, dst, seq, count, slsn, start, size int64 }
	want := []piece{{9, 0, 128, 0, 4, 0, 0, 1000}, {10, 0, 128, 1, 4, 0, 1000, 1000},
		{11, 0, 128, 2, 4, 0, 2000, 1000}, {12, 0, 128, 3, 4, 0, 3000, 296}}
	var got []piece
	for _, d := range ds {
		if d.n < 9 || d.n > 12 {
			continue
		}
		if err := decode.Decode(&p, d.payload, decode.Modern); err != nil || p.NameString() != "stdf" {
			t.Fatalf("frame %d: %s %v", d.n, p.NameString(), err)
		}
		got = append(got, piece{int64(d.n), p.Int("src"), p.Int("dst"), p.Int("seq"), p.Int("count"), p.Int("slsn"), p.Int("start"), p.Int("size")})
		if d.n == 9 && !bytes.HasPrefix(p.Payload(), []byte{0x78, 0xda}) {
			t.Errorf("first piece starts % x, want 78 da", p.Payload()[:2])
		}
		if d.src != 58424 || d.dst != 24786 {
			t.Errorf("frame %d from port %d to %d", d.n, d.src, d.dst)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("pieces %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("piece %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, d := range ds {
		decode.Decode(&p, d.payload, decode.Modern)
		if p.NameString() == "sjon" {
			if p.Int("player") != 1 || p.Int("level") != 1 || p.Int("slsn") != 0 || len(d.payload) != 15 {
				t.Errorf("sjon %s", p.AppendSummary(nil))
			}
			return
		}
	}
	t.Error("no sjon")
}

func TestRealModernMultiStak(t *testing.T) {
	ds := readCapture(t, "modern/multi/multi.pcap")
	var p decode.Packet
	for _, d := range ds {
		if string(d.payload[:4]) != "stak" {
			continue
		}
		if err := decode.Decode(&p, d.payload, decode.Modern); err != nil {
			t.Fatal(err)
		}
		// The manifest: "the first stak in multi carries 110, which stands
		// for -146" (only the low 8 bits of the rewind are sent).
		if got := p.Int("rewind"); got != 110 || d.payload[29] != 110 {
			t.Errorf("first stak rewind %d (byte %d), want 110", got, d.payload[29])
		}
		if pl := p.Int("player"); pl < 1 || pl > 3 {
			t.Errorf("first stak player %d", pl)
		}
		return
	}
	t.Error("no stak")
}

// TestRealNewerVersions decodes every datagram of the real captures of the
// versions after Feb 2024 in their version, with the per-name counts of
// their MANIFESTs, and checks that the bytes alone point to that version's
// family: what every datagram fits (the state size tells the siblings
// apart, in session and the engine).
func TestRealNewerVersions(t *testing.T) {
	for _, tt := range []struct {
		file    string
		version string
		family  string // what all the datagrams together fit
		counts  map[string]int
	}{
		{"aug-2024/basic/capture.pcap", "2024-06", "2024-06", map[string]int{"cdat": 355, "cjon": 1, "clog": 5136, "pang": 41,
			"ping": 41, "pong": 41, "sjon": 1, "stak": 379, "stdf": 2477}},
		{"aug-2024/multi/capture.pcap", "2024-06", "2024-06", map[string]int{"cdat": 634, "cjon": 3, "clog": 13076, "crfl": 3,
			"pang": 206, "ping": 207, "pong": 207, "sfak": 3, "sfil": 4, "sjon": 3, "srrf": 3, "stak": 663, "stdf": 7438}},
		{"jan-2026/basic/capture.pcap", "2026-01", "2026-01, 2026-01b, 2026-07", map[string]int{"cdat": 639, "cjon": 1,
			"pang": 56, "ping": 56, "pong": 56, "sjon": 1, "stak": 674, "stdf": 2516}},
		{"head-2026-08/basic/capture.pcap", "2026-07", "2026-01, 2026-01b, 2026-07", map[string]int{"cdat": 607, "cjon": 1,
			"pang": 67, "ping": 67, "pong": 67, "sjon": 1, "stak": 521, "stdf": 4356}},
		{"head-2026-08/multi/capture.pcap", "2026-07", "2026-01, 2026-01b, 2026-07", map[string]int{"cdat": 1173, "cjon": 3,
			"crfl": 2, "pang": 236, "ping": 236, "pong": 236, "sfak": 2, "sfil": 35, "sjon": 3, "srrf": 2, "stak": 1791, "stdf": 11273}},
		{"head-2026-08/lossy_joinfail/capture.pcap", "2026-07", "2026-01, 2026-01b, 2026-07", map[string]int{"cdat": 752,
			"cjon": 3, "pang": 64, "ping": 74, "pong": 69, "sjon": 1, "stak": 791, "stdf": 5763}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			ds := readCapture(t, tt.file)
			v := decode.MustParseVersion(tt.version)
			sameCounts(t, decodeAll(t, ds, v), tt.counts)
			all := decode.All()
			var scratch decode.Packet
			for _, d := range ds {
				f := decode.Fits(d.payload, &scratch)
				if !f.Clean.Has(v) {
					t.Fatalf("frame %d: fits %s, not %s", d.n, f.Clean, v)
				}
				all &= f.Clean
			}
			if all.String() != tt.family {
				t.Errorf("the datagrams together fit %s, want %s", all, tt.family)
			}
			// Every server datagram comes from the one server socket.
			for _, d := range ds {
				if decode.DirOf(d.payload) == decode.S2C && d.src != decode.ListenPort {
					t.Fatalf("frame %d: server datagram from port %d", d.n, d.src)
				}
			}
		})
	}
}

// TestRealOlderFitTheirVersions: the legacy and modern captures fit their
// own versions, and the modern ones what shares modern's packets.
func TestRealOlderFitTheirVersions(t *testing.T) {
	for _, tt := range []struct{ file, family string }{
		{"legacy/basic/capture.pcap", "legacy"},
		{"legacy/lossy/capture.pcap", "legacy"},
		{"modern/basic/basic.pcap", "modern, 2024-02b"},
		{"modern/multi/multi.pcap", "modern, 2024-02b"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			all := decode.All()
			var scratch decode.Packet
			for _, d := range readCapture(t, tt.file) {
				f := decode.Fits(d.payload, &scratch)
				all &= decode.Plausible(d.payload, f.Clean, &scratch)
			}
			if all.String() != tt.family {
				t.Errorf("the datagrams together fit %s, want %s", all, tt.family)
			}
		})
	}
}
