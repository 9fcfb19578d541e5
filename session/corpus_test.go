package session_test

import (
	"bytes"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/fuzzcorpus"
)

func trackerSeeds() map[string][]byte {
	A1234, AReply, AToSrv := 0, 1, 2 // client A: to the listen port, from and to its server port
	B1234, BReply, BToSrv := 3, 4, 5
	Other := 6
	d := func(pair int, p []byte) fuzzDatagram { return fuzzDatagram{pair: pair, payload: p} }
	legacy := []fuzzDatagram{
		d(A1234, []byte("1234")), d(AReply, []byte("5678\x00")), d(AToSrv, lCJON(8, "vm")), d(AReply, lSJON(1, 11)),
		d(AReply, lStdf(300)), d(AToSrv, enc(L, "stak", func(p *decode.Packet) { p.Set("player", 1).Set("frame", 200) })),
		d(AReply, lSdat), d(AToSrv, lCdat(1, 300)),
		d(AReply, enc(L, "serr", func(p *decode.Packet) {
			p.Set("err_type", 1).Set("frame", 301).Set("c_sync", 255).Set("late_total", 1)
		})),
		d(AToSrv, enc(L, "sdak", func(p *decode.Packet) {
			p.Set("player", 1).Set("frame", 300).Set("entry_pos", 3).Set("stdf_late", 0).Set("frames_skipped", 0).Drop("fps_chase")
		})),
	}
	modern := []fuzzDatagram{
		d(B1234, []byte("1234")), d(BReply, []byte("5678")), d(BToSrv, mCjon(8, "vm")), d(BReply, mSjon(2, 8)),
		d(BReply, mStdf(300)), d(BToSrv, mStak(2, 128)), d(BToSrv, mCdat(2, 130)), d(BToSrv, mPing),
		d(BReply, enc(M, "pong", func(p *decode.Packet) { p.SetFloat("t0", 1.5).SetFloat("t1", 2) })),
		d(BToSrv, []byte("crfl")),
		d(BReply, enc(M, "sfil", func(p *decode.Packet) {
			p.Set("id", 7).Set("seq", 0).Set("count", 1).Set("file_size", 100).SetBytes("data", []byte{0x78, 0x9c, 1, 2})
		})),
		d(BToSrv, enc(M, "sfak", func(p *decode.Packet) { p.Set("id", 7) })),
	}
	var mixed []fuzzDatagram
	for i := 0; i < max(len(legacy), len(modern)); i++ {
		if i < len(legacy) {
			mixed = append(mixed, legacy[i])
		}
		if i < len(modern) {
			mixed = append(mixed, modern[i])
		}
	}
	hostile := []fuzzDatagram{
		d(Other, dnsQuery), d(Other+1, []byte("12345678")), d(Other, []byte("ab")), d(Other, nil),
		d(AToSrv, []byte("clog hello")), d(AReply, []byte("srrf\x00")), d(A1234, []byte("JUNK")),
		d(AReply, mStdf(300)[:40]), {pair: AReply, cut: true, payload: mStdf(300)[:100]},
		d(BToSrv, lCJON(1, "x")), d(BReply, []byte("5678\x00")), d(AToSrv, mCdat(99, -1)),
		d(AReply, enc(L, "stdf", func(p *decode.Packet) { p.Set("seq", 5).Set("count", 0).SetBytes("data", nil) })),
		d(BReply, mSjon(99, 0)),
	}
	seeds := map[string][]byte{
		"legacy-session":        frameFuzz(decode.VersionUnknown, legacy...),
		"modern-session":        frameFuzz(decode.VersionUnknown, modern...),
		"mixed-sessions":        frameFuzz(decode.VersionUnknown, mixed...),
		"hostile":               frameFuzz(decode.VersionUnknown, hostile...),
		"forced-legacy-modern":  frameFuzz(decode.Legacy, modern...),
		"forced-modern-legacy":  frameFuzz(decode.Modern, legacy...),
		"forced-legacy-mixed":   frameFuzz(decode.Legacy, mixed...),
		"midgame-legacy":        frameFuzz(decode.VersionUnknown, legacy[4:]...),
		"midgame-modern":        frameFuzz(decode.VersionUnknown, modern[4:]...),
		"hostile-after-session": frameFuzz(decode.VersionUnknown, append(append([]fuzzDatagram(nil), modern...), hostile...)...),
	}
	return seeds
}

func TestSeedCorpus(t *testing.T) {
	seeds := trackerSeeds()
	// The framing round-trips.
	for name, b := range seeds {
		force, ds := parseFuzz(b)
		again := frameFuzz(force, ds...)
		if !bytes.Equal(again, b) {
			t.Errorf("%s: framing does not round-trip", name)
		}
	}
	fuzzcorpus.Sync(t, "FuzzTracker", seeds)
}
