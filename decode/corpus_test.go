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
	return seeds
}

func TestSeedCorpus(t *testing.T) {
	seeds := decodeSeeds(t)
	// Every layout of both eras has a clean seed.
	for _, era := range decode.Eras {
		for _, l := range decode.Layouts(era) {
			found := false
			var p decode.Packet
			for name, b := range seeds {
				if strings.HasPrefix(name, era.String()+"-") && decode.Decode(&p, b, era) == nil && p.Layout == l {
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
