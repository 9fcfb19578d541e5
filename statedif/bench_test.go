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

// gameDif is a dif as a game's are: one word in a hundred changed (the
// real modern/multi capture's: 1.35 %).
func gameDif() (base, dif []byte) {
	r := rand.New(rand.NewPCG(1, 4))
	base, _ = twoStates()
	return base, sparseDif(r, stateSize, 100)
}

// BenchmarkApply applies a game's dif to a state, in a new buffer, as the
// rebuild does, following the state's Hash.
func BenchmarkApply(b *testing.B) {
	base, dif := gameDif()
	dst := make([]byte, stateSize)
	h := statedif.HashOf(base)
	b.SetBytes(stateSize)
	for b.Loop() {
		statedif.Apply(dst, base, dif, h)
	}
}

// BenchmarkSubDif applies a game's dif with Sub.
func BenchmarkSubDif(b *testing.B) {
	base, dif := gameDif()
	dst := make([]byte, stateSize)
	b.SetBytes(stateSize)
	for b.Loop() {
		statedif.Sub(dst, base, dif)
	}
}

// BenchmarkHashOf hashes a whole state (a third of its bytes nonzero).
func BenchmarkHashOf(b *testing.B) {
	s, _ := twoStates()
	b.SetBytes(stateSize)
	for b.Loop() {
		statedif.HashOf(s)
	}
}
