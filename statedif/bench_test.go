package statedif_test

import (
	"math/rand/v2"
	"testing"

	"github.com/pmdump/pmdump/statedif"
)

// stateSize is a modern state's size.
const stateSize = 112384

// twoStates returns a state and the next one: a few hundred bytes apart,
// as consecutive frames are.
func twoStates() (a, b []byte) {
	r := rand.New(rand.NewPCG(1, 3))
	a, b = make([]byte, stateSize), make([]byte, stateSize)
	for i := range a {
		if r.IntN(3) == 0 {
			a[i] = byte(r.Uint32())
		}
	}
	copy(b, a)
	for range 300 {
		b[r.IntN(stateSize)] = byte(r.Uint32())
	}
	return a, b
}

// BenchmarkSub makes the dif between two 112384-byte states.
func BenchmarkSub(b *testing.B) {
	s0, s1 := twoStates()
	dst := make([]byte, stateSize)
	b.SetBytes(stateSize)
	for b.Loop() {
		statedif.Sub(dst, s0, s1)
	}
}

// BenchmarkCompress makes and compresses the dif between two states, as a
// server does for every client every frame.
func BenchmarkCompress(b *testing.B) {
	s0, s1 := twoStates()
	var c statedif.Compressor
	b.SetBytes(stateSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compress(s0, s1); err != nil {
			b.Fatal(err)
		}
	}
}
