package serve

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestSub(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 1000, 112384} {
		a, b := make([]byte, n), make([]byte, n)
		for i := range a {
			a[i], b[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		if n > 2 {
			a[0], b[0], a[1], b[1] = 0, 255, 255, 0 // borrows at both ends
		}
		want := make([]byte, n)
		for i := range want {
			want[i] = a[i] - b[i]
		}
		got := make([]byte, n)
		sub(got, a, b)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: differs", n)
		}
		sub(a, a, b) // in place
		if !bytes.Equal(a, want) {
			t.Fatalf("%d bytes in place: differs", n)
		}
	}
}
