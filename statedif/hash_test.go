package statedif_test

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pmdump/pmdump/statedif"
)

// sparseDif returns a dif of n bytes with about one word in `every`
// changed, as a game's are (every 0: dense).
func sparseDif(r *rand.Rand, n, every int) []byte {
	d := make([]byte, n)
	for i := range d {
		if every == 0 || r.IntN(8*every) == 0 {
			d[i] = byte(r.Uint32())
		}
	}
	return d
}

// TestApply checks Apply against the bytewise definition and the Hash it
// returns against HashOf of the result: lengths around the word and run
// sizes, sparse and dense difs, dst apart from base, aliasing base,
// aliasing the dif, and the zero base.
func TestApply(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100, 1000, 4099, 112384} {
		for _, every := range []int{0, 1, 3, 100} {
			base, dif := sparseDif(r, n, 3), sparseDif(r, n, every)
			want := make([]byte, n)
			naiveSub(want, base, dif)
			wantHash := statedif.HashOf(want)
			cases := []struct {
				name      string
				dst, base []byte
				dif       []byte
			}{
				{"apart", make([]byte, n), base, dif},
				{"in place", bytes.Clone(base), nil, dif},
				{"over the dif", nil, base, bytes.Clone(dif)},
			}
			cases[1].base = cases[1].dst
			cases[2].dst = cases[2].dif
			for _, c := range cases {
				h := statedif.Apply(c.dst, c.base, c.dif, statedif.HashOf(base))
				if !bytes.Equal(c.dst, want) {
					t.Fatalf("n %d, one word in %d, %s: state differs from the definition", n, every, c.name)
				}
				if h != wantHash {
					t.Fatalf("n %d, one word in %d, %s: Hash %x, HashOf the result %x", n, every, c.name, h, wantHash)
				}
			}
			key := make([]byte, n)
			naiveSub(key, make([]byte, n), dif)
			got := bytes.Repeat([]byte{0xaa}, n) // a keyframe overwrites whatever dst held
			if h := statedif.Apply(got, nil, dif, statedif.Hash{1, 2}); !bytes.Equal(got, key) || h != statedif.HashOf(key) {
				t.Fatalf("n %d, one word in %d, keyframe: state equal %v, Hash %x, want %x", n, every, bytes.Equal(got, key), h, statedif.HashOf(key))
			}
		}
	}
}

// TestHashOf checks HashOf against the polynomial's definition evaluated
// with big integers, through what the keys make of the zero state and of
// single limbs, and that it tells apart what it must: states differing in
// one byte anywhere, and zero states of different lengths.
func TestHashOf(t *testing.T) {
	p := new(big.Int).SetUint64(1<<61 - 1)
	// The key's evaluation point comes out of H(state with limb 1 = 1)
	// − H(zeros) = k; then limb j = v must add v·kʲ.
	const n = 4096
	zero := statedif.HashOf(make([]byte, n))
	if zero != statedif.ZeroHash(n) {
		t.Fatalf("HashOf(zeros) %x, ZeroHash %x", zero, statedif.ZeroHash(n))
	}
	one := make([]byte, n)
	one[4] = 1
	h1 := statedif.HashOf(one)
	r := rand.New(rand.NewPCG(6, 7))
	for range 200 {
		j, v := r.IntN(n/4), r.Uint32()
		s := make([]byte, n)
		binary.LittleEndian.PutUint32(s[4*j:], v)
		got := statedif.HashOf(s)
		for key := range 2 {
			k := new(big.Int).Sub(new(big.Int).SetUint64(h1[key]), new(big.Int).SetUint64(zero[key]))
			k.Mod(k, p)
			want := new(big.Int).Exp(k, big.NewInt(int64(j)), p)
			want.Mul(want, new(big.Int).SetUint64(uint64(v)))
			want.Add(want, new(big.Int).SetUint64(zero[key]))
			want.Mod(want, p)
			if got[key] != want.Uint64() {
				t.Fatalf("limb %d = %d, key %d: %d, want %d", j, v, key, got[key], want.Uint64())
			}
		}
	}
	seen := map[statedif.Hash]int{}
	base := sparseDif(r, 1000, 3)
	for i := range base {
		s := bytes.Clone(base)
		s[i]++
		h := statedif.HashOf(s)
		if k, dup := seen[h]; dup {
			t.Fatalf("states differing at bytes %d and %d have one Hash", k, i)
		}
		seen[h] = i
	}
	for n := range 64 {
		h := statedif.HashOf(make([]byte, n))
		if k, dup := seen[h]; dup {
			t.Fatalf("zero states of %d and %d bytes have one Hash", n, k)
		}
		seen[h] = n
	}
}

// FuzzApply checks Apply against the bytewise definition and HashOf on
// any base and dif (the dif's zero bytes spread to make runs).
func FuzzApply(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{0, 0, 1}, uint8(0))
	f.Add(bytes.Repeat([]byte{0x80}, 70), bytes.Repeat([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0}, 8), uint8(3))
	f.Fuzz(func(t *testing.T, base, dif []byte, spread uint8) {
		if len(dif) > 1<<16 || len(base) > 1<<16 {
			return
		}
		// Spread the dif's bytes over zeros, so runs of zero words occur.
		d := make([]byte, len(dif)*(1+int(spread)))
		for i, b := range dif {
			d[i*(1+int(spread))] = b
		}
		b := make([]byte, len(d))
		copy(b, base)
		want := make([]byte, len(d))
		naiveSub(want, b, d)
		got := make([]byte, len(d))
		h := statedif.Apply(got, b, d, statedif.HashOf(b))
		if !bytes.Equal(got, want) || h != statedif.HashOf(want) {
			t.Fatalf("Apply differs: state equal %v, Hash %x, want %x", bytes.Equal(got, want), h, statedif.HashOf(want))
		}
		statedif.Sub(got, nil, d)
		naiveSub(want, nil, d)
		if !bytes.Equal(got, want) {
			t.Fatal("Sub on the zero base differs")
		}
	})
}
