package reassemble_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
)

// bomb returns a zlib stream of n zero bytes: a few KB that inflate to n.
func bomb(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(zeros))
		w.Write(zeros[:k])
		n -= k
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInflate checks Inflate's outcomes on valid, wrong-sized and damaged
// streams, with the state size known and not.
func TestInflate(t *testing.T) {
	dif, z := realisticDif(t, 1)
	small := deflate(t, []byte("a short dif"), 6)
	empty := deflate(t, nil, 6)
	badSum := bytes.Clone(z)
	badSum[len(badSum)-1] ^= 1
	badData := bytes.Clone(z)
	badData[len(badData)/2] ^= 0x55
	dict := []byte{0x78, 0xbb, 0, 0, 0, 1, 3, 0} // FDICT set: needs a preset dictionary
	maxState := deflate(t, make([]byte, reassemble.MaxState), 1)
	overMax := deflate(t, make([]byte, reassemble.MaxState+1), 1)
	tests := []struct {
		name    string
		z       []byte
		size    int
		want    []byte // nil: an error
		errSize int    // 1: the error wraps ErrSize, 0: it does not, -1: either
	}{
		{"realistic dif", z, stateSize, dif, 0},
		{"realistic dif, size unknown", z, 0, dif, 0},
		{"one byte short of the size", z, stateSize + 1, nil, 1},
		{"one byte more than the size", z, stateSize - 1, nil, 1},
		{"far smaller than the size", small, stateSize, nil, 1},
		{"small, size unknown", small, 0, []byte("a short dif"), 0},
		{"empty stream, size unknown", empty, 0, []byte{}, 0},
		{"empty stream, size known", empty, stateSize, nil, 1},
		{"MaxState, size unknown", maxState, 0, make([]byte, reassemble.MaxState), 0},
		{"MaxState+1, size unknown", overMax, 0, nil, 1},
		{"bad checksum", badSum, stateSize, nil, 0},
		{"bad data", badData, stateSize, nil, -1},
		{"no checksum", z[:len(z)-4], stateSize, nil, 0},
		{"half the stream", z[:len(z)/2], stateSize, nil, 0},
		{"half the stream, size unknown", z[:len(z)/2], 0, nil, 0},
		{"header only", z[:2], stateSize, nil, 0},
		{"one byte", z[:1], stateSize, nil, 0},
		{"nothing", nil, stateSize, nil, 0},
		{"not zlib", []byte("stdf stdf stdf stdf"), stateSize, nil, 0},
		{"preset dictionary", dict, 0, nil, 0},
	}
	var f reassemble.Inflater // one for all: it must recover from errors
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Inflate(nil, tt.z, tt.size)
			if tt.want != nil {
				if err != nil || !bytes.Equal(got, tt.want) {
					t.Fatalf("%d bytes, %v; want %d bytes", len(got), err, len(tt.want))
				}
				return
			}
			if err == nil {
				t.Fatalf("%d bytes and no error", len(got))
			}
			if len(got) != 0 {
				t.Errorf("%d bytes returned with the error %v", len(got), err)
			}
			if is := errors.Is(err, reassemble.ErrSize); tt.errSize >= 0 && is != (tt.errSize == 1) {
				t.Errorf("error %v; wraps ErrSize: %v, want %v", err, is, tt.errSize == 1)
			}
		})
	}
}

// TestInflateReuse checks that Inflate reuses dst's capacity and inflates
// correctly after errors.
func TestInflateReuse(t *testing.T) {
	var f reassemble.Inflater
	dst := make([]byte, 0, stateSize+1)
	for i := range uint64(5) {
		dif, z := realisticDif(t, i)
		got, err := f.Inflate(dst, z, stateSize)
		if err != nil || !bytes.Equal(got, dif) {
			t.Fatalf("dif %d: %v", i, err)
		}
		if &got[0] != &dst[:1][0] {
			t.Errorf("dif %d: dst not reused", i)
		}
		if _, err := f.Inflate(dst, z[:len(z)-3], stateSize); err == nil {
			t.Fatalf("dif %d: a cut stream inflated", i)
		}
	}
	_, z := realisticDif(t, 9)
	if n := testing.AllocsPerRun(20, func() { f.Inflate(dst, z, stateSize) }); n != 0 {
		t.Errorf("%v allocations per Inflate with a reused Inflater and dst, want 0", n)
	}
}

// TestInflateBomb checks that a stream inflating to far more than the state
// size fails with ErrSize after inflating only about the state's size.
func TestInflateBomb(t *testing.T) {
	const bombSize = 50 << 20
	z := bomb(t, bombSize)
	if len(z) > 64<<10 {
		t.Fatalf("the bomb is %d bytes", len(z))
	}
	var f reassemble.Inflater
	if _, err := f.Inflate(nil, z, stateSize); !errors.Is(err, reassemble.ErrSize) {
		t.Fatalf("error %v, want ErrSize", err)
	}
	// Bytes allocated: dst, about the state size, and nothing in
	// proportion to what the stream would inflate to.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := f.Inflate(nil, z, stateSize)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, reassemble.ErrSize) {
		t.Fatalf("error %v, want ErrSize", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > stateSize+16<<10 {
		t.Errorf("%d bytes allocated for a state of %d", alloc, stateSize)
	}
	// Time: a small fraction of inflating the whole bomb.
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if n, err := io.Copy(io.Discard, zr); err != nil || n != bombSize {
		t.Fatalf("the bomb inflates to %d (%v)", n, err)
	}
	full := time.Since(start)
	dst := make([]byte, stateSize+1)
	best := time.Hour
	for range 5 {
		start := time.Now()
		f.Inflate(dst, z, stateSize)
		best = min(best, time.Since(start))
	}
	if best*20 > full {
		t.Errorf("Inflate gave up after %v; inflating the whole bomb takes %v", best, full)
	}
	// With the size unknown, the bound is MaxState.
	if got, err := f.Inflate(nil, z, 0); !errors.Is(err, reassemble.ErrSize) || len(got) != 0 {
		t.Errorf("size unknown: %d bytes, %v; want ErrSize", len(got), err)
	}
}
