package reassemble

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// TestAdler32 checks adlerSum against hash/adler32 on zeros, 0xff (the
// largest sums), dense random bytes and dif-like sparse ones, of lengths
// around the block and chunk sizes, up to a few chunks.
func TestAdler32(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	fills := []struct {
		name string
		byte func(i int) byte
	}{
		{"zeros", func(int) byte { return 0 }},
		{"0xff", func(int) byte { return 0xff }},
		{"random", func(int) byte { return byte(r.Uint32()) }},
		{"one word in a hundred", func(int) byte {
			if r.IntN(800) == 0 {
				return byte(r.Uint32())
			}
			return 0
		}},
		{"zeros then 0xff", func(i int) byte {
			if i > 70000 {
				return 0xff
			}
			return 0
		}},
	}
	for _, f := range fills {
		for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 5552, 65535, 65536, 65537, 112384, 200003, 1 << 20} {
			b := make([]byte, n)
			for i := range b {
				b[i] = f.byte(i)
			}
			if got, want := adlerSum(b), adler32.Checksum(b); got != want {
				t.Errorf("%s, %d bytes: %08x, hash/adler32 %08x", f.name, n, got, want)
			}
		}
	}
}

// FuzzAdler32 checks adlerSum against hash/adler32, the input's bytes
// spread over zeros to make runs.
func FuzzAdler32(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint16(0))
	f.Add([]byte{0xff, 0, 0xff}, uint16(40))
	f.Fuzz(func(t *testing.T, b []byte, spread uint16) {
		if len(b)*(1+int(spread)) > 1<<20 {
			return
		}
		d := make([]byte, len(b)*(1+int(spread)))
		for i, c := range b {
			d[i*(1+int(spread))] = c
		}
		if got, want := adlerSum(d), adler32.Checksum(d); got != want {
			t.Fatalf("%08x, hash/adler32 %08x", got, want)
		}
	})
}

// BenchmarkAdler32 checksums an inflated dif as a game's are, beside
// hash/adler32.
func BenchmarkAdler32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	d := make([]byte, 112384)
	for i := range d {
		if r.IntN(800) == 0 {
			d[i] = byte(r.Uint32())
		}
	}
	b.Run("zero-runs", func(b *testing.B) {
		b.SetBytes(int64(len(d)))
		for b.Loop() {
			adlerSum(d)
		}
	})
	b.Run("hash-adler32", func(b *testing.B) {
		b.SetBytes(int64(len(d)))
		for b.Loop() {
			adler32.Checksum(d)
		}
	})
}
