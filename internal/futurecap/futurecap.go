// Package futurecap makes, for tests, captures of a wire version pmdump
// does not know: a synthetic game of a known version whose packets are
// rewritten the way a future build that adds a field would send them:
// every stdf with 4 more header bytes after its name (Stdf), every stak
// with one more int32 field at its end (Stak).
package futurecap

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

// Extra is the value of the field a future build adds (little-endian
// int32): a plausible flags word, neither 0 nor a frame number.
const Extra = 0x00010002

// Rewrite is the set of packets a Writer lengthens.
type Rewrite uint8

// The rewrites, by the kind of the packets they lengthen (so the rule
// that code outside decode asks a packet's kind, not its name, holds).
const (
	// Stdf inserts 4 bytes (Extra) after the name of every dif piece
	// (stdf): its header is 4 bytes longer.
	Stdf Rewrite = 1 << iota
	// Stak appends one int32 field (Extra) to every dif acknowledgement
	// (stak).
	Stak
)

// Writer is a synth.PacketWriter that rewrites the packets of Rewrite
// before passing every datagram on to W.
type Writer struct {
	W       synth.PacketWriter
	Rewrite Rewrite
	buf     []byte
	// Rewritten counts the packets rewritten.
	Rewritten int
}

// WriteDatagram rewrites payload (when it is one of w.Rewrite) and writes
// it to w.W.
func (w *Writer) WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error {
	if p, ok := w.rewrite(payload); ok {
		payload = p
		w.Rewritten++
	}
	return w.W.WriteDatagram(ts, src, dst, payload)
}

func (w *Writer) rewrite(p []byte) ([]byte, bool) {
	if len(p) < 4 {
		return p, false
	}
	switch k := decode.KindOf(p); {
	case k == decode.KindDifPiece && w.Rewrite&Stdf != 0:
		w.buf = append(append(w.buf[:0], p[:4]...), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(w.buf[4:], Extra)
		return append(w.buf, p[4:]...), true
	case k == decode.KindDifAck && w.Rewrite&Stak != 0:
		w.buf = binary.LittleEndian.AppendUint32(append(w.buf[:0], p...), Extra)
		return w.buf, true
	}
	return p, false
}

// Config is the game a test capture holds: two players for two seconds
// of version 2026-07, with no loss.
func Config() synth.Config {
	return synth.Config{Era: decode.MustParseVersion("2026-07"), Players: 2, Duration: 2 * time.Second, Seed: 7}
}

// Write generates the game of cfg with the packets of rw rewritten into a
// pcap file named name in a temporary folder of the test and returns its
// path.
func Write(t testing.TB, name string, cfg synth.Config, rw Rewrite) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cw, err := synth.NewCaptureWriter(f, synth.FormatFor(path))
	if err != nil {
		t.Fatal(err)
	}
	w := &Writer{W: cw, Rewrite: rw}
	if _, err := synth.Generate(cfg, w, nil); err != nil {
		t.Fatal(err)
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Rewritten == 0 {
		t.Fatalf("futurecap: the game of %v has no packet to rewrite", cfg.Era)
	}
	return path
}

// Future writes the test capture of a future version, future.pcap: the
// game of Config as a build that added a field to stdf and to stak would
// send it (Stdf|Stak). Every conversation of it is of no known version,
// for the reason "stdf header fits no known version" (the first stdf comes
// before the first stak).
func Future(t testing.TB) string {
	t.Helper()
	return Write(t, "future.pcap", Config(), Stdf|Stak)
}
