package statedif_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/diftest"
	"github.com/pmdump/pmdump/statedif"
)

// naiveSub is the definition Sub implements.
func naiveSub(dst, base, b []byte) { copy(dst, diftest.Dif(base, b)) }

// TestSub checks Sub against the bytewise definition for every length up to
// 100 and random data, with dst separate, aliasing base, aliasing b, and
// with a nil (all-zero) base.
func TestSub(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			switch r.IntN(4) { // favour the borrow edge cases
			case 0:
				b[i] = 0
			case 1:
				b[i] = 0x80
			case 2:
				b[i] = 0xff
			default:
				b[i] = byte(r.Uint32())
			}
		}
		return b
	}
	for n := 0; n <= 100; n++ {
		for range 50 {
			base, dif := fill(n), fill(n)
			want := make([]byte, n)
			naiveSub(want, base, dif)

			got := make([]byte, n)
			statedif.Sub(got, base, dif)
			if !bytes.Equal(got, want) {
				t.Fatalf("n %d: Sub(%x, %x) = %x, want %x", n, base, dif, got, want)
			}
			aliasBase := bytes.Clone(base)
			statedif.Sub(aliasBase, aliasBase, dif)
			if !bytes.Equal(aliasBase, want) {
				t.Fatalf("n %d, dst aliasing base: %x, want %x", n, aliasBase, want)
			}
			aliasDif := bytes.Clone(dif)
			statedif.Sub(aliasDif, base, aliasDif)
			if !bytes.Equal(aliasDif, want) {
				t.Fatalf("n %d, dst aliasing b: %x, want %x", n, aliasDif, want)
			}
			naiveSub(want, make([]byte, n), dif)
			statedif.Sub(got, nil, dif)
			if !bytes.Equal(got, want) {
				t.Fatalf("n %d: Sub(nil, %x) = %x, want %x", n, dif, got, want)
			}
		}
	}
	// Every byte pair, in every lane of a word.
	base, dif := make([]byte, 8*256*256), make([]byte, 8*256*256)
	for i := range base {
		base[i], dif[i] = byte(i>>11), byte(i>>3)+byte(i&7)
	}
	want, got := make([]byte, len(base)), make([]byte, len(base))
	naiveSub(want, base, dif)
	statedif.Sub(got, base, dif)
	if !bytes.Equal(got, want) {
		t.Fatal("Sub differs from the definition on some byte pair")
	}
	naiveSub(want, nil, dif)
	statedif.Sub(got, nil, dif)
	if !bytes.Equal(got, want) {
		t.Fatal("Sub with a nil base differs from the definition on some byte")
	}
}

// TestSubUnaligned checks Sub on slices that do not start on a word.
func TestSubUnaligned(t *testing.T) {
	buf := make([]byte, 200)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for off := range 8 {
		base, dif := buf[off:off+90], buf[100+off/2:190+off/2]
		want, got := make([]byte, 90), make([]byte, 91)
		naiveSub(want, base, dif)
		statedif.Sub(got[1:], base, dif)
		if !bytes.Equal(got[1:], want) {
			t.Errorf("offset %d: %x, want %x", off, got[1:], want)
		}
	}
}

// TestCompress checks that a compressed dif inflates to base − new and
// that a client rebuilds the new state from it, for a base and for zeros,
// with one Compressor reused across sizes.
func TestCompress(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c statedif.Compressor
	for _, n := range []int{0, 1, 9, 1003, 106144, 112384, 5000} {
		base, cur := make([]byte, n), make([]byte, n)
		for i := range base {
			base[i] = byte(r.Uint32())
			cur[i] = base[i]
			if r.IntN(50) == 0 {
				cur[i] = byte(r.Uint32())
			}
		}
		for _, b := range [][]byte{base, nil} {
			z, err := c.Compress(b, cur)
			if err != nil {
				t.Fatal(err)
			}
			zr, err := zlib.NewReader(bytes.NewReader(z))
			if err != nil {
				t.Fatalf("n %d: %v", n, err)
			}
			dif, err := io.ReadAll(zr)
			if err != nil || len(dif) != n {
				t.Fatalf("n %d: inflated %d bytes, %v", n, len(dif), err)
			}
			got := make([]byte, n)
			if b != nil {
				copy(got, b)
			}
			for i := range got {
				got[i] -= dif[i]
			}
			if !bytes.Equal(got, cur) {
				t.Fatalf("n %d, base %v: the dif does not rebuild the state", n, b != nil)
			}
		}
	}
}

// TestEachPiece checks the stdf pieces of difs of every size class: the
// header of each era, pieces of at most decode.Modern.PieceSize() that add up to
// the compressed dif, an empty last piece when the size is a multiple of
// decode.Modern.PieceSize(), and an error past decode.MaxPieces.
func TestEachPiece(t *testing.T) {
	tests := []struct {
		n, pieces, last int
	}{
		{0, 1, 0}, {1, 1, 1}, {999, 1, 999}, {1000, 2, 0}, {1001, 2, 1}, {3606, 4, 606}, {254*1000 + 999, 255, 999},
	}
	d := statedif.Dif{SLSN: 3, Src: 1200, Dst: 1207}
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		for _, tt := range tests {
			z := make([]byte, tt.n)
			for i := range z {
				z[i] = byte(i * 13)
			}
			var all []byte
			var lastLen int
			err := statedif.EachPiece(decode.MustNew(era, "stdf"), d, z, func(seq int, p *decode.Packet) error {
				var q decode.Packet
				if err := decode.Decode(&q, decode.Encode(nil, p), era); err != nil {
					t.Fatalf("%v %d bytes: piece %d does not decode: %v", era, tt.n, seq, err)
				}
				if q.Int("seq") != int64(seq) || q.Int("count") != int64(tt.pieces) || q.Int("start") != int64(seq*decode.Modern.PieceSize()) ||
					q.Int("src") != 1200 || q.Int("dst") != 1207 {
					t.Fatalf("%v %d bytes: piece %d header %s", era, tt.n, seq, q.Layout.Name)
				}
				if era == decode.Modern && q.Int("slsn") != 3 {
					t.Fatalf("modern piece slsn %d, want 3", q.Int("slsn"))
				}
				data := q.Payload()
				all = append(all, data...)
				lastLen = len(data)
				return nil
			})
			if err != nil {
				t.Fatalf("%v %d bytes: %v", era, tt.n, err)
			}
			if !bytes.Equal(all, z) || lastLen != tt.last {
				t.Errorf("%v %d bytes: pieces do not add up, or the last is %d bytes, not %d", era, tt.n, lastLen, tt.last)
			}
		}
		err := statedif.EachPiece(decode.MustNew(era, "stdf"), d, make([]byte, 255*1000), func(int, *decode.Packet) error {
			t.Fatal("a dif of 256 pieces was sent")
			return nil
		})
		if err == nil {
			t.Errorf("%v: a dif of 256 pieces gave no error", era)
		}
	}
}
