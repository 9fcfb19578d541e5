package reassemble_test

import (
	"testing"

	"github.com/pmdump/pmdump/reassemble"
)

// BenchmarkInflate inflates a realistic dif of a 112384-byte state, reusing
// the Inflater and its output buffer as a Builder's chain does.
func BenchmarkInflate(b *testing.B) {
	_, z := realisticDif(b, 1)
	var f reassemble.Inflater
	dst, err := f.Inflate(nil, z, stateSize)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(stateSize)
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = f.Inflate(dst, z, stateSize); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(z)), "compressed-B")
}

// BenchmarkAssembler reassembles 9-piece difs whose pieces arrive in
// reverse order with one duplicate each (per message: 10 Adds).
func BenchmarkAssembler(b *testing.B) {
	_, z := streamOfSize(b, 8500, 1)
	ps := split(key(0, 0), z)
	n := 0
	a := reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) {
		if m.Status != reassemble.Complete {
			b.Fatal(m.Status, m.Err)
		}
	})
	b.SetBytes(int64(len(z)))
	b.ReportAllocs()
	for b.Loop() {
		n++
		k := key(int32(n), int32(n+1))
		for i := len(ps) - 1; i >= 0; i-- {
			p := ps[i]
			p.Key = k
			a.Add(p)
			if i == len(ps)-1 {
				a.Add(p)
			}
		}
	}
}
