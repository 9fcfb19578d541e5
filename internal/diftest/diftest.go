// Package diftest makes the game's state difs for tests, by their
// definitions rather than by the fast code under test: the dif base − new
// bytewise (Dif), zlib-compressed (Deflate), one that looks like the
// game's (Realistic), and the datagrams a server sends it in (Stdf).
// reassemble, replay and the test game client build their fixtures with
// it.
package diftest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// StateSize is the modern era's state size (the seeds').
const StateSize = 112384

// Dif returns the server's dif from base to next: base − next, byte by
// byte (mod 256). A nil base is all zeros (a keyframe).
func Dif(base, next []byte) []byte {
	d := make([]byte, len(next))
	for i := range d {
		var b byte
		if base != nil {
			b = base[i]
		}
		d[i] = b - next[i]
	}
	return d
}

// Deflate zlib-compresses b at level (statedif.ZlibLevel is the game's).
func Deflate(t testing.TB, b []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Realistic returns a dif the size of a state that looks like the game's:
// mostly zeros with a few hundred scattered changed bytes.
func Realistic(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	dif := make([]byte, StateSize)
	for range 300 {
		i := r.IntN(StateSize - 4)
		for k := range r.IntN(4) + 1 {
			dif[i+k] = byte(r.Uint32())
		}
	}
	return dif
}

// Stdf returns the stdf datagrams of the compressed dif z, in order, with
// the era's header.
func Stdf(era decode.Version, slsn uint8, src, dst int32, z []byte) [][]byte {
	var out [][]byte
	err := statedif.EachPiece(decode.MustNewKind(era, decode.KindDifPiece), statedif.Dif{SLSN: int32(slsn), Src: src, Dst: dst}, z, func(_ int, p *decode.Packet) error {
		out = append(out, decode.Encode(nil, p))
		return nil
	})
	if err != nil {
		panic(err) // a test's dif of more than 255 pieces
	}
	return out
}
