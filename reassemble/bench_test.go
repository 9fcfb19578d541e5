package reassemble_test

import (
	"testing"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
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

// BenchmarkRealDifs inflates and applies every dif of the real modern
// multi-client capture (one op: one dif, to a base of its size), the
// dense way (Inflate, then statedif.Apply scanning the whole dif) and the
// sparse way (InflateSparse, then statedif.ApplySpans on its spans).
func BenchmarkRealDifs(b *testing.B) {
	difs := realDifs(b)["modern/multi/multi.pcap"]
	base := make([]byte, stateSize)
	for i := range base {
		base[i] = byte(i * 7)
	}
	dst := make([]byte, stateSize)
	h := statedif.HashOf(base)
	compressed := 0
	for _, z := range difs {
		compressed += len(z)
	}
	b.Run("dense", func(b *testing.B) {
		var inf reassemble.Inflater
		var dif []byte
		b.SetBytes(stateSize)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var err error
			if dif, err = inf.Inflate(dif, difs[i%len(difs)], stateSize); err != nil {
				b.Fatal(err)
			}
			statedif.Apply(dst, base, dif, h)
			i++
		}
		b.ReportMetric(float64(compressed)/float64(len(difs)), "compressed-B")
	})
	b.Run("sparse", func(b *testing.B) {
		var inf reassemble.Inflater
		var dif []byte
		var spans []statedif.Span
		b.SetBytes(stateSize)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var err error
			if dif, spans, err = inf.InflateSparse(dif, spans, difs[i%len(difs)], stateSize); err != nil {
				b.Fatal(err)
			}
			statedif.ApplySpans(dst, base, dif, spans, h)
			i++
		}
		b.ReportMetric(float64(len(spans)), "spans")
	})
}
