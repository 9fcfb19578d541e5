package reassemble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
)

// MaxState bounds the size of a state when the caller does not know it: no
// version of the game has a state anywhere near 4 MiB.
const MaxState = 4 << 20

// Inflater inflates difs, reusing its decompressor and buffers. It is not
// safe for concurrent use; use one per goroutine.
//
// It reads the zlib framing (RFC 1950) itself around a flate decompressor,
// with zlib's errors, so that the checksum of a dif goes at the speed of
// its runs of zeros (see adlerSum).
type Inflater struct {
	src     bytes.Reader
	fr      io.ReadCloser
	scratch [4]byte
	sp      *sparse // InflateSparse's decoder
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
	if err := f.header(); err != nil {
		return dst[:0], fmt.Errorf("zlib: %w", err)
	}
	if f.fr == nil {
		f.fr = flate.NewReader(&f.src)
	} else if err := f.fr.(flate.Resetter).Reset(&f.src, nil); err != nil {
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
		m, err := f.fr.Read(dst[n:])
		n += m
		if err == io.EOF {
			err = f.trailer(dst[:n])
		}
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

// header reads a zlib stream's header (RFC 1950 section 2.2), as zlib's
// reader does: a preset dictionary is refused (none is given).
func (f *Inflater) header() error {
	h := f.scratch[:2]
	if _, err := io.ReadFull(&f.src, h); err != nil {
		return unexpected(err)
	}
	if h[0]&0x0f != 8 || h[0]>>4 > 7 || binary.BigEndian.Uint16(h)%31 != 0 {
		return zlib.ErrHeader
	}
	if h[1]&0x20 != 0 {
		sum := f.scratch[:4]
		if _, err := io.ReadFull(&f.src, sum); err != nil {
			return unexpected(err)
		}
		if binary.BigEndian.Uint32(sum) != 1 { // the checksum of no dictionary
			return zlib.ErrDictionary
		}
	}
	return nil
}

// trailer checks the checksum that follows the deflate stream against
// what it inflated to: io.EOF when it matches, as zlib's reader.
func (f *Inflater) trailer(out []byte) error {
	sum := f.scratch[:4]
	if _, err := io.ReadFull(&f.src, sum); err != nil {
		return unexpected(err)
	}
	if binary.BigEndian.Uint32(sum) != adlerSum(out) {
		return zlib.ErrChecksum
	}
	return io.EOF
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
