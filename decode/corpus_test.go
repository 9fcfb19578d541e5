package decode_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/fuzzcorpus"
)

// decodeSeeds: packets of every type of both eras with the values the real
// captures carry, then truncated and hostile variants.
func decodeSeeds(t *testing.T) map[string][]byte {
	seeds := map[string][]byte{}
	add := func(name string, b []byte) { seeds[name] = bytes.Clone(b) }
	L, M := decode.Legacy, decode.Modern
	enc := func(p *decode.Packet) []byte { return decode.Encode(nil, p) }
	zlib := append([]byte{0x78, 0xda}, bytes.Repeat([]byte{0x63, 0x60, 0x18, 0x05}, 12)...)

	// Legacy era, as in captures/legacy.
	add("legacy-1234", []byte("1234"))
	add("legacy-5678", []byte("5678\x00"))
	add("legacy-JUNK", []byte("JUNK"))
	add("legacy-CJON", enc(decode.MustNew(L, "CJON").Set("color", 8).SetBytes("hostname", []byte("vm"))))
	add("legacy-SJON", unhex(t, "534a4f4e 0004 000000c8 00000002 28 01 0b 00 03ed 00"))
	add("legacy-SJON-full", unhex(t, "534a4f4e 0000 00000000 00000000 00 63 00 00 0000 00"))
	add("legacy-cdat", enc(decode.MustNew(L, "cdat").Set("player", 1).Set("frame", 302).Set("move", 17)))
	add("legacy-cdat-esc", enc(decode.MustNew(L, "cdat").Set("player", 1).Set("frame", 2402).Set("move", 127)))
	add("legacy-sdat-sync", enc(decode.MustNew(L, "sdat").Set("frame", 540).Set("start_entry", 12).Set("n", 0)))
	add("legacy-sdat", enc(decode.MustNew(L, "sdat").Set("frame", 541).Set("start_entry", 12).
		AddEntry(540, 5, 1, 17).AddEntry(541, 5, 1, 3).AddEntry(540, 5, 2, 8).AddEntry(545, 1, 2, 71)))
	add("legacy-sdak-21", enc(decode.MustNew(L, "sdak").Set("player", 1).Set("frame", 205).Set("entry_pos", 2).
		Set("stdf_late", 0).Set("frames_skipped", 0).Drop("fps_chase")))
	add("legacy-sdak-25", enc(decode.MustNew(L, "sdak").Set("player", 1).Set("frame", 905).Set("entry_pos", 40).
		Set("stdf_late", 1).Set("frames_skipped", 3).Set("fps_chase", 42)))
	add("legacy-serr", enc(decode.MustNew(L, "serr").Set("err_type", 1).Set("frame", 733).
		Set("c_sync", int64(decode.EncodeNegative(-1))).Set("late_total", 12)))
	add("legacy-serr-300", enc(decode.MustNew(L, "serr").Set("err_type", 1).Set("frame", 733).
		Set("c_sync", int64(decode.EncodeNegative(-300))).Set("late_total", 12)))
	add("legacy-stdf-first", enc(decode.MustNew(L, "stdf").Set("src", 0).Set("dst", 200).Set("seq", 0).Set("count", 4).
		Set("start", 0).SetBytes("data", zlib)))
	add("legacy-stdf-last", enc(decode.MustNew(L, "stdf").Set("src", 0).Set("dst", 200).Set("seq", 3).Set("count", 4).
		Set("start", 3000).SetBytes("data", zlib[:20])))
	add("legacy-stak", enc(decode.MustNew(L, "stak").Set("player", 1).Set("corr", 1).Set("frame", 200)))

	// Modern era, as in captures/modern.
	add("modern-1234", []byte("1234"))
	add("modern-5678", []byte("5678"))
	add("modern-cjon", enc(decode.MustNew(M, "cjon").Set("color", 8).SetBytes("hostname", []byte("vm"))))
	add("modern-sjon", enc(decode.MustNew(M, "sjon").Set("level", 1).Set("frame", 127).Set("player", 1).Set("color", 8).Set("slsn", 0)))
	add("modern-cdat", enc(decode.MustNew(M, "cdat").Set("player", 1).Set("frame", 130).Set("move", 0x2d)))
	add("modern-stdf-first", enc(decode.MustNew(M, "stdf").Set("src", 0).Set("dst", 128).Set("seq", 0).Set("count", 4).
		Set("slsn", 0).Set("start", 0).SetBytes("data", zlib)))
	add("modern-stdf-empty-last", enc(decode.MustNew(M, "stdf").Set("src", 1500).Set("dst", 1504).Set("seq", 2).Set("count", 3).
		Set("slsn", 1).Set("start", 2000).SetBytes("data", nil)))
	add("modern-stak", enc(decode.MustNew(M, "stak").Set("player", 1).Set("ack_frame", 146).Set("client_frame", 0).
		SetFloat("chase_fps", 40).SetFloat("dsync", -0.012).Set("rewind", 110).SetFloat("local_correction", 0.5).
		SetFloat("remote_correction", 3.25).SetFloat("cpu", 61.7)))
	add("modern-ping", enc(decode.MustNew(M, "ping").SetFloat("t0", 12.345)))
	add("modern-pong", enc(decode.MustNew(M, "pong").SetFloat("t0", 12.345).SetFloat("t1", 301.5)))
	add("modern-pang", enc(decode.MustNew(M, "pang").SetFloat("t1", 301.5)))
	add("modern-crfl", []byte("crfl"))
	add("modern-sfil", enc(decode.MustNew(M, "sfil").Set("id", 1804289383).Set("seq", 0).Set("count", 1).Set("start", 0).
		Set("file_size", 9175).SetBytes("data", append([]byte{0x78, 0x9c}, zlib[2:]...))))
	add("modern-sfak", enc(decode.MustNew(M, "sfak").Set("id", 1804289383)))
	add("modern-cjrc", []byte("cjrc"))
	add("modern-sjrc", enc(decode.MustNew(M, "sjrc").SetFloat("value", 0)))
	add("modern-rctl", enc(decode.MustNew(M, "rctl").Set("command", 3).SetFloat("value", -1)))
	add("modern-snfo", enc(decode.MustNew(M, "snfo").Set("frame", 4000).Set("seq", 0).Set("count", 1).Set("start", 0).SetBytes("data", zlib)))
	add("modern-extr", append([]byte("extr"), make([]byte, 64)...))
	add("modern-unknown-clog", []byte("clog\x01\x02\x03\x04hello"))

	// The newer versions: each layout a version has beyond legacy and
	// modern's, with values as the real captures of 2024-08, 2026-01 and
	// 2026-08 carry them.
	for _, v := range decode.Versions() {
		if v == L || v == M {
			continue
		}
		for _, l := range v.Layouts() {
			add(v.String()+"-"+l.Name, enc(realistic(v, l, zlib)))
		}
	}
	N := decode.MustParseVersion("2026-07")
	add("2026-07-cjon-long", enc(decode.MustNew(N, "cjon").Set("color", 15).SetBytes("name", []byte("eightchr")).SetBytes("hostname", []byte("a-rather-long-host-name"))))
	add("2026-07-stdf-last-empty", enc(decode.MustNew(N, "stdf").Set("seq", 1).Set("count", 2).Set("start", 1400).Set("dst", 900).
		Set("src", 850).Set("slsn", 1).Set("level", 64).SetBytes("data", nil)))
	add("2026-07-srrf-off", enc(decode.MustNew(N, "srrf").Set("result", 5)))
	add("2024-06-clog", enc(decode.MustNew(decode.MustParseVersion("2024-06"), "clog").Set("log_type", 28).Set("frame", 1239).
		SetFloat("time", 31.25).SetBytes("text", []byte("rx stdf piece [1 of 3] 1400 bytes"))))

	// Truncated: every seed so far cut by one byte and cut to its header.
	clean := make([]string, 0, len(seeds))
	for name := range seeds {
		clean = append(clean, name)
	}
	for _, name := range clean {
		b := seeds[name]
		if len(b) > 4 {
			add("cut1-"+name, b[:len(b)-1])
		}
		if len(b) > 9 {
			add("cut9-"+name, b[:9])
		}
	}
	// Hostile.
	add("hostile-empty", nil)
	add("hostile-3", []byte("std"))
	add("hostile-stdf-size-max", unhex(t, "73746466 00000000 000000c8 00 01 00000000 7fffffff 78da"))
	add("hostile-stdf-size-neg", unhex(t, "73746466 00000000 c8000000 00 01 00 00000000 ffffffff 78da"))
	add("hostile-stdf-count0", unhex(t, "73746466 00000000 000000c8 00 00 00000000 00000000"))
	add("hostile-stdf-seq-count", unhex(t, "73746466 00000000 c8000000 09 09 00 00000000 00000000"))
	add("hostile-sdat-255", unhex(t, "73646174 0000021c 0000000c ff 0000021c 05 01 11"))
	add("hostile-sdak-23", unhex(t, "7364616b 01 00000190 00000011 00000000 00000003 0000"))
	add("hostile-CJON-16", []byte("CJON\x0bsixteen-chars-xx"))
	add("hostile-cjon-noNUL", []byte("cjon\x0b\xff\xfe\xfd\"\\\x00\x01abcdefghij"))
	add("hostile-sjon-99", enc(decode.MustNew(M, "sjon").Set("player", 99)))
	add("hostile-stak-nan", append([]byte("stak\x01"), bytes.Repeat([]byte{0xff}, 49)...))
	add("hostile-extr-long", append([]byte("extr"), bytes.Repeat([]byte{0xa5}, 1100)...))
	add("hostile-cjon-strn-huge", unhex(t, "636a6f6e 08000000 ffffff7f 6331 00"))
	add("hostile-cjon-strn-neg", unhex(t, "636a6f6e 08000000 feffffff 6331 00 02000000 766d 00"))
	add("hostile-cjon-strn-noNUL", unhex(t, "636a6f6e 08000000 02000000 6331 41 02000000 766d 00"))
	add("hostile-clog-strn-short", unhex(t, "636c6f67 1c000000 00000000 00000000 0000000000000000 20000000 6869 00"))
	add("hostile-stdf-i32-count-big", unhex(t, "73746466 00000000 00010000 00000000 02000000 c8000000 00000000 00000000 01000000 78da"))
	add("hostile-stdf-i32-seq-neg", unhex(t, "73746466 ffffffff 03000000 00000000 02000000 c8000000 00000000 00000000 01000000 78da"))
	return seeds
}

// realistic returns a packet of layout l of version v with values like the
// game's: small numbers, one piece holding z, a host "vm", a player "c1".
func realistic(v decode.Version, l *decode.Layout, z []byte) *decode.Packet {
	p := decode.MustNew(v, l.Name)
	for _, f := range l.Fields {
		switch {
		case f.Type == decode.Data:
			p.SetBytes(f.Name, z)
		case f.Type == decode.Rest:
			p.SetBytes(f.Name, make([]byte, 16))
		case f.Type == decode.Str16:
			p.SetBytes(f.Name, []byte("vm"))
		case f.Type == decode.StrN && f.Name == "name":
			p.SetBytes(f.Name, []byte("c1"))
		case f.Type == decode.StrN:
			p.SetBytes(f.Name, []byte("vm"))
		case f.Type == decode.F64:
			p.SetFloat(f.Name, 12.5)
		case f.Role == decode.RolePieceCount:
			p.Set(f.Name, 1)
		case f.Role == decode.RolePieceSeq, f.Role == decode.RolePieceStart, f.Role == decode.RoleSize, f.Role == decode.RoleLevelSeq:
		case f.Role == decode.RoleFrame:
			p.Set(f.Name, 1239)
		case f.Role == decode.RoleLevel:
			p.Set(f.Name, 64)
		case f.Role == decode.RolePlayer:
			p.Set(f.Name, 1)
		case f.Type == decode.I32 || f.Type == decode.U8:
			p.Set(f.Name, 8)
		}
	}
	return p
}

func TestSeedCorpus(t *testing.T) {
	seeds := decodeSeeds(t)
	// Every layout of both eras has a clean seed.
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			found := false
			var p decode.Packet
			for name, b := range seeds {
				if strings.HasPrefix(name, era.String()+"-") && decode.Decode(&p, b, era) == nil && p.Layout == l && decode.Agrees(&p, era) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("no clean seed for %s %s", era, l.Name)
			}
		}
	}
	fuzzcorpus.Sync(t, "FuzzDecode", seeds)
}
