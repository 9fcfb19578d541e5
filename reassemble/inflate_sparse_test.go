package reassemble_test

import (
	"bytes"
	"errors"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
)

// errKind names the kind of an Inflate error, what the sparse inflater
// must agree on.
func errKind(err error) string {
	var corrupt flate.CorruptInputError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, reassemble.ErrSize):
		return "size"
	case errors.Is(err, zlib.ErrChecksum):
		return "checksum"
	case errors.Is(err, zlib.ErrHeader):
		return "header"
	case errors.Is(err, zlib.ErrDictionary):
		return "dictionary"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "cut short"
	case errors.As(err, &corrupt):
		return "corrupt"
	}
	return "other: " + err.Error()
}

// sparseState is a sparse inflater with its buffer, reused from call to
// call as a rebuild does.
type sparseState struct {
	ref   reassemble.Inflater
	want  []byte
	inf   reassemble.Inflater
	dst   []byte
	spans []statedif.Span
}

// check inflates z both ways (the sparse inflater, and Inflate as the
// reference) and fails on any difference: other bytes,
// another kind of error, spans that do not cover every non-zero byte of
// the buffer, or a buffer left dirty after an error. It returns the kind.
func (s *sparseState) check(t testing.TB, z []byte, size int) string {
	t.Helper()
	want, werr := s.ref.Inflate(s.want, z, size)
	s.want = want[:0]
	got, spans, err := s.inf.InflateSparse(s.dst, s.spans, z, size)
	s.dst, s.spans = got, spans
	if reassemble.UsedEmptyCode(&s.inf) {
		return "empty code" // klauspost decodes it with a stale table
	}
	if errKind(err) != errKind(werr) || !bytes.Equal(got, want) {
		t.Fatalf("size %d: sparse gives %d bytes, %v; Inflate %d bytes, %v", size, len(got), err, len(want), werr)
	}
	if err != nil && (len(got) != 0 || len(spans) != 0) {
		t.Fatalf("size %d: %d bytes and %d spans with the error %v", size, len(got), len(spans), err)
	}
	// Zero outside the spans, over the whole buffer.
	whole := got[:cap(got)]
	at := 0
	for _, sp := range spans {
		if sp.Off < at || sp.End < sp.Off || sp.End > len(got) {
			t.Fatalf("size %d: spans %v out of order or past %d bytes", size, spans, len(got))
		}
		if i := nonZero(whole[at:sp.Off]); i >= 0 {
			t.Fatalf("size %d: byte %d is not zero, outside the spans", size, at+i)
		}
		at = sp.End
	}
	if i := nonZero(whole[at:]); i >= 0 {
		t.Fatalf("size %d: byte %d is not zero, outside the spans", size, at+i)
	}
	return errKind(err)
}

// nonZero returns the index of b's first byte that is not zero, or -1.
func nonZero(b []byte) int {
	for at := 0; at < len(b); at += len(zeros) {
		chunk := b[at:min(len(b), at+len(zeros))]
		if bytes.Equal(chunk, zeros[:len(chunk)]) {
			continue
		}
		for i, c := range chunk {
			if c != 0 {
				return at + i
			}
		}
	}
	return -1
}

var zeros = make([]byte, 1<<16)

// bitWriter writes a deflate stream by hand, least significant bit first.
type bitWriter struct {
	out  []byte
	bits uint
}

func (w *bitWriter) put(v uint, n uint) {
	for i := range n {
		if w.bits%8 == 0 {
			w.out = append(w.out, 0)
		}
		w.out[len(w.out)-1] |= byte(v>>i&1) << (w.bits % 8)
		w.bits++
	}
}

// code writes a Huffman code, most significant bit first.
func (w *bitWriter) code(c uint, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.put(c>>uint(i)&1, 1)
	}
}

// fixed writes a fixed code's literal/length symbol.
func (w *bitWriter) fixed(sym uint) {
	switch {
	case sym < 144:
		w.code(0x30+sym, 8)
	case sym < 256:
		w.code(0x190+sym-144, 9)
	case sym < 280:
		w.code(sym-256, 7)
	default:
		w.code(0xc0+sym-280, 8)
	}
}

// zlibOf wraps a deflate stream in zlib's header and the trailer of plain.
func zlibOf(deflated, plain []byte) []byte {
	z := append([]byte{0x78, 0x01}, deflated...)
	return append(z, beAdler(plain)...)
}

func beAdler(b []byte) []byte {
	s := adler32.Checksum(b)
	return []byte{byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)}
}

// fixedStream is a fixed block: "abc", a match of 10 at distance 3, a zero,
// a run of 258 zeros at distance 1, 'x', then a run of zeros at a long
// distance (the zeros 259 bytes back).
func fixedStream() (z, plain []byte) {
	var w bitWriter
	w.put(1, 1) // final
	w.put(1, 2) // fixed
	for _, c := range "abc" {
		w.fixed(uint(c))
	}
	w.fixed(264) // length 10
	w.code(2, 5) // distance 3
	w.fixed(0)
	w.fixed(285) // length 258
	w.code(0, 5) // distance 1
	w.fixed('x')
	w.fixed(284) // 227 + 5 extra bits
	w.put(31, 5) // length 258
	w.code(16, 5)
	w.put(2, 7) // distance code 16: 257 + 2 = 259
	w.fixed(256)
	plain = []byte("abcabcabcabca")
	plain = append(plain, make([]byte, 259)...)
	plain = append(plain, 'x')
	for range 258 {
		plain = append(plain, plain[len(plain)-259])
	}
	return zlibOf(w.out, plain), plain
}

// emptyDistStream is a dynamic block with no distance codes: a literal zero,
// then (used) a length, whose distance cannot be decoded, or (not used)
// the end of the block.
func emptyDistStream(used bool) []byte {
	var w bitWriter
	w.put(1, 1)
	w.put(2, 2)
	w.put(1, 5)  // 258 literal/length codes
	w.put(0, 5)  // one distance code
	w.put(14, 4) // 18 code length code lengths
	// 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1: 2 bits for 18, 0, 2, 1.
	for _, n := range []uint{0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2} {
		w.put(n, 3)
	}
	// Canonical codes: 0→00, 1→01, 2→10, 18→11.
	w.code(1, 2) // symbol 0: length 1
	w.code(3, 2) // 138 zeros
	w.put(127, 7)
	w.code(3, 2) // 117 zeros
	w.put(106, 7)
	w.code(2, 2) // end of block: length 2
	w.code(2, 2) // symbol 257: length 2
	w.code(0, 2) // the distance code: length 0
	// Codes: 0→0, 256→10, 257→11.
	w.code(0, 1)
	if used {
		w.code(3, 2)
		w.put(0, 8)
	}
	w.code(2, 2)
	return zlibOf(w.out, []byte{0})
}

// TestInflateSparse checks the sparse inflater against Inflate on every
// kind of block and every kind of damage, and the kind of error each
// gives.
func TestInflateSparse(t *testing.T) {
	dif, z := realisticDif(t, 1)
	fixed, fixedPlain := fixedStream()
	random := make([]byte, 3000)
	r := rand.New(rand.NewPCG(4, 5))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	stored := deflate(t, append(make([]byte, 70000), random...), zlib.NoCompression)
	badSum := bytes.Clone(z)
	badSum[len(badSum)-1] ^= 1
	badLen := bytes.Clone(stored)
	badLen[5] ^= 1 // the stored block's NLEN
	var reserved, farBack, lit286, dist30 bitWriter
	reserved.put(7, 3)
	farBack.put(3, 3)
	farBack.fixed(257)
	farBack.put(0, 5)
	lit286.put(3, 3)
	lit286.fixed('a')
	lit286.fixed(286)
	dist30.put(3, 3)
	dist30.fixed('a')
	dist30.fixed(257)
	dist30.code(30, 5)
	var overSub bitWriter // every code length code 1 bit long
	overSub.put(5, 3)
	overSub.put(0, 14)
	overSub.put(15, 4)
	for range 19 {
		overSub.put(1, 3)
	}
	overSub.put(0, 32)
	tests := []struct {
		name string
		z    []byte
		size int
		want string // the kind of outcome
	}{
		{"dynamic: realistic dif", z, stateSize, "ok"},
		{"dynamic: realistic dif, size unknown", z, 0, "ok"},
		{"dynamic: one byte short of the size", z, stateSize + 1, "size"},
		{"dynamic: one byte past the size", z, stateSize - 1, "size"},
		{"stored", stored, 0, "ok"},
		{"stored, size known", stored, 73000, "ok"},
		{"stored, cut short", stored[:len(stored)-100], 0, "cut short"},
		{"stored, bad NLEN", badLen, 0, "corrupt"},
		{"fixed", fixed, len(fixedPlain), "ok"},
		{"fixed, cut short", fixed[:len(fixed)-6], 0, "cut short"},
		{"fixed, length symbol 286", zlibOf(lit286.out, nil), 0, "corrupt"},
		{"fixed, distance code 30", zlibOf(dist30.out, nil), 0, "corrupt"},
		{"distance before the start", zlibOf(farBack.out, nil), 0, "corrupt"},
		{"reserved block type", zlibOf(reserved.out, nil), 0, "corrupt"},
		{"over-subscribed code", zlibOf(overSub.out, nil), 0, "corrupt"},
		{"empty distance code, not used", emptyDistStream(false), 1, "ok"},
		{"checksum mismatch", badSum, stateSize, "checksum"},
		{"no checksum", z[:len(z)-4], stateSize, "cut short"},
		{"half a checksum", z[:len(z)-2], stateSize, "cut short"},
		{"half the stream", z[:len(z)/2], stateSize, "cut short"},
		{"header only", z[:2], stateSize, "cut short"},
		{"nothing", nil, stateSize, "cut short"},
		{"not zlib", []byte("stdf stdf"), 0, "header"},
		{"preset dictionary", []byte{0x78, 0xbb, 0, 0, 0, 2, 3, 0}, 0, "dictionary"},
		{"a MiB of zeros, size unknown: the buffer grows", bomb(t, 1<<20), 0, "ok"},
		{"bomb", bomb(t, 8<<20), 0, "size"},
		{"bomb, size known", bomb(t, 8<<20), stateSize, "size"},
	}
	var s sparseState // one for all: it must recover from errors
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.check(t, tt.z, tt.size); got != tt.want {
				t.Errorf("%s, want %s", got, tt.want)
			}
		})
	}
	got, _, err := s.inf.InflateSparse(s.dst, s.spans, z, stateSize)
	if err != nil || !bytes.Equal(got, dif) {
		t.Fatalf("realistic dif after the rest: %v", err)
	}
	s.dst, s.spans = got, nil // dirty, spans forgotten: next call must not be trusted
	// An empty distance code used: the sparse inflater says corrupt.
	if _, _, err := new(reassemble.Inflater).InflateSparse(nil, nil, emptyDistStream(true), 0); errKind(err) != "corrupt" {
		t.Errorf("empty distance code used: %v", err)
	}
}

// TestInflateSparseBomb checks a zip bomb costs the bound, not what it
// would inflate to: time, and memory (the buffer stops one byte past the
// bound).
func TestInflateSparseBomb(t *testing.T) {
	z := bomb(t, 32<<20)
	var inf reassemble.Inflater
	start := time.Now()
	got, spans, err := inf.InflateSparse(nil, nil, z, 0)
	if !errors.Is(err, reassemble.ErrSize) || cap(got) > reassemble.MaxState+1 || len(spans) != 0 {
		t.Fatalf("%d bytes (cap %d), %v", len(got), cap(got), err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// TestInflateSparseReal checks the sparse inflater against Inflate on every
// dif of the real captures, with the state size and without.
func TestInflateSparseReal(t *testing.T) {
	for name, difs := range realDifs(t) {
		var s sparseState
		ok := 0
		for i, z := range difs {
			size := len(s.dst)
			if i%16 == 0 {
				size = 0 // now and then, the size unknown
			}
			if s.check(t, z, size) == "ok" {
				ok++
			}
		}
		t.Logf("%s: %d difs, %d inflate", name, len(difs), ok)
		if ok < len(difs)*9/10 {
			t.Errorf("%s: %d of %d difs inflate", name, ok, len(difs))
		}
	}
}

// FuzzInflateSparse checks the sparse inflater against Inflate on any
// stream, with the modern state size and with the size unknown, the
// buffer reused.
func FuzzInflateSparse(f *testing.F) {
	for _, s := range sparseSeeds(f) {
		f.Add(s)
	}
	for _, difs := range realDifs(f) {
		for i := 0; i < len(difs); i += max(1, len(difs)/10) {
			f.Add(difs[i])
		}
	}
	var s sparseState
	f.Fuzz(func(t *testing.T, z []byte) {
		s.ref = reassemble.Inflater{} // a new reference: no stale tables
		s.check(t, z, stateSize)
		s.check(t, z, 0)
	})
}

// sparseSeeds are FuzzInflateSparse's seeds but for the real captures'
// difs (added when ../shared is there): Inflate's, and hand-made blocks.
func sparseSeeds(t testing.TB) map[string][]byte {
	seeds := inflateSeeds(t)
	seeds["fixed"], _ = fixedStream()
	seeds["empty-distance-code"] = emptyDistStream(false)
	seeds["empty-distance-code-used"] = emptyDistStream(true)
	return seeds
}
