package statedif_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/pmdump/pmdump/statedif"
)

// spansOf returns spans covering dif's non-zero bytes, the test's own
// way: its runs of non-zero bytes, two runs merged when fewer than gap
// zeros part them (gap < 0: one span over everything).
func spansOf(dif []byte, gap int) []statedif.Span {
	if gap < 0 {
		return []statedif.Span{{Off: 0, End: len(dif)}}
	}
	var spans []statedif.Span
	for i := 0; i < len(dif); i++ {
		if dif[i] == 0 {
			continue
		}
		if k := len(spans); k > 0 && i-spans[k-1].End < gap {
			spans[k-1].End = i + 1
			continue
		}
		spans = append(spans, statedif.Span{Off: i, End: i + 1})
	}
	return spans
}

// applyBoth applies dif to base with Apply and with ApplySpans (the spans
// of spansOf(dif, gap)), in a new buffer and in place (or on the zero base
// when base is nil), and fails on any difference in the state or its
// Hash.
func applyBoth(t *testing.T, base, dif []byte, gap int) {
	t.Helper()
	spans := spansOf(dif, gap)
	h := statedif.HashOf(base)
	want := make([]byte, len(dif))
	wantHash := statedif.Apply(want, base, dif, h)
	got := bytes.Repeat([]byte{0xa5}, len(dif)) // not zeros: every byte must be set
	if hash := statedif.ApplySpans(got, base, dif, spans, h); !bytes.Equal(got, want) || hash != wantHash {
		t.Fatalf("%d bytes, gap %d: state equal %v, Hash %x, Apply's %x", len(dif), gap, bytes.Equal(got, want), hash, wantHash)
	}
	if base == nil {
		return
	}
	inPlace := bytes.Clone(base)
	if hash := statedif.ApplySpans(inPlace, inPlace, dif, spans, h); !bytes.Equal(inPlace, want) || hash != wantHash {
		t.Fatalf("%d bytes, gap %d, in place: state equal %v, Hash %x, Apply's %x", len(dif), gap, bytes.Equal(inPlace, want), hash, wantHash)
	}
	if hash := statedif.HashOf(want); hash != wantHash {
		t.Fatalf("Apply's Hash %x, HashOf %x", wantHash, hash)
	}
}

// TestApplySpans checks ApplySpans against Apply on lengths around words
// and blocks, difs from none to dense, bytes at the edges, with exact,
// merged and whole spans, on a base, in place and on zeros.
func TestApplySpans(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	random := func(n, every int) []byte {
		b := make([]byte, n)
		for i := range b {
			if r.IntN(every) == 0 {
				b[i] = byte(r.Uint32())
			}
		}
		return b
	}
	edges := func(n int) []byte {
		b := make([]byte, n)
		if n > 0 {
			b[0], b[n-1] = 1, 0x80
		}
		if n > 9 {
			b[7], b[8] = 0xff, 2
		}
		return b
	}
	difs := []struct {
		name string
		dif  func(n int) []byte
	}{
		{"zeros", func(n int) []byte { return make([]byte, n) }},
		{"edges", edges},
		{"one byte in 800", func(n int) []byte { return random(n, 800) }},
		{"one byte in 8", func(n int) []byte { return random(n, 8) }},
		{"dense", func(n int) []byte { return random(n, 1) }},
	}
	for _, n := range []int{0, 1, 7, 8, 9, 31, 33, 64, 100, 4099, 8201, stateSize} {
		for _, d := range difs {
			dif := d.dif(n)
			base := random(n, 3)
			for _, gap := range []int{0, 1, 16, 100, -1} {
				applyBoth(t, base, dif, gap)
				applyBoth(t, nil, dif, gap)
			}
		}
	}
}

// FuzzApplySpans checks ApplySpans against Apply on any base and dif (its
// bytes spread over zeros), with spans merged over gaps of any size.
func FuzzApplySpans(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{0, 0, 1}, uint8(0), int8(0))
	f.Add(bytes.Repeat([]byte{0x80}, 70), bytes.Repeat([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0}, 8), uint8(3), int8(16))
	f.Add([]byte{}, []byte{7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, uint8(1), int8(-1))
	f.Fuzz(func(t *testing.T, base, dif []byte, spread uint8, gap int8) {
		if len(dif) > 1<<12 || len(base) > 1<<16 {
			return
		}
		d := make([]byte, len(dif)*(1+int(spread)))
		for i, b := range dif {
			d[i*(1+int(spread))] = b
		}
		b := make([]byte, len(d))
		copy(b, base)
		applyBoth(t, b, d, int(gap))
		applyBoth(t, nil, d, int(gap))
	})
}

// BenchmarkApplySpans applies a game's dif by its spans, beside
// BenchmarkApply, which scans the whole dif.
func BenchmarkApplySpans(b *testing.B) {
	base, dif := gameDif()
	spans := spansOf(dif, 16)
	dst := make([]byte, stateSize)
	h := statedif.HashOf(base)
	b.SetBytes(stateSize)
	for b.Loop() {
		statedif.ApplySpans(dst, base, dif, spans, h)
	}
}
