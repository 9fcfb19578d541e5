package reassemble

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zlib"
)

// MaxState bounds the size of a state when the caller does not know it: no
// version of the game has a state anywhere near 4 MiB.
const MaxState = 4 << 20

// Inflater inflates difs, reusing its decompressor and buffers. It is not
// safe for concurrent use; use one per goroutine.
type Inflater struct {
	src bytes.Reader
	zr  io.ReadCloser
}

// ErrSize is wrapped by Inflate's errors for a stream that inflates to the
// wrong size.
var ErrSize = errors.New("dif does not inflate to the state size")

// Inflate inflates a zlib stream into dst (reusing its capacity) and returns
// the result. size is the state size the dif must inflate to exactly, or 0
// when it is not known yet, in which case anything up to MaxState is
// accepted. Inflation stops one byte past the bound, so a stream that would
// inflate to far more (a zip bomb) costs no more than the bound.
func (f *Inflater) Inflate(dst, z []byte, size int) ([]byte, error) {
	limit := size
	if limit <= 0 {
		limit = MaxState
	}
	f.src.Reset(z)
	if f.zr == nil {
		zr, err := zlib.NewReader(&f.src)
		if err != nil {
			return dst[:0], fmt.Errorf("zlib: %w", err)
		}
		f.zr = zr
	} else if err := f.zr.(zlib.Resetter).Reset(&f.src, nil); err != nil {
		return dst[:0], fmt.Errorf("zlib: %w", err)
	}
	// Room for one byte past the bound, to see a stream that goes on. When
	// the size is not known, grow as the stream goes (a hostile stream
	// then costs what it inflates to, never the whole bound up front).
	want := limit + 1
	if size <= 0 {
		want = min(want, max(cap(dst), 256<<10))
	}
	if cap(dst) < want {
		dst = make([]byte, want)
	}
	dst = dst[:cap(dst)]
	if len(dst) > limit+1 {
		dst = dst[:limit+1]
	}
	// Not io.ReadFull: it would turn a stream cut short (io.ErrUnexpectedEOF
	// from the decompressor) into what looks like a normal end.
	n := 0
	for {
		if n == len(dst) && len(dst) < limit+1 {
			dst = append(dst, make([]byte, min(len(dst), limit+1-len(dst)))...)
			dst = dst[:min(cap(dst), limit+1)]
		}
		m, err := f.zr.Read(dst[n:])
		n += m
		if err == io.EOF {
			break // the stream ended and its checksum was verified
		}
		if err != nil {
			return dst[:0], fmt.Errorf("zlib after %d bytes: %w", n, err)
		}
		if n > limit {
			return dst[:0], fmt.Errorf("inflates to more than %d bytes: %w", limit, ErrSize)
		}
	}
	if n > limit {
		return dst[:0], fmt.Errorf("inflates to more than %d bytes: %w", limit, ErrSize)
	}
	if size > 0 && n != size {
		return dst[:0], fmt.Errorf("inflates to %d bytes, the state has %d: %w", n, size, ErrSize)
	}
	return dst[:n], nil
}
