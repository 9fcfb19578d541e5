package reassemble

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/statedif"
)

// The sparse decoder is a deflate (RFC 1951) decoder of our own, because
// no decoder we could use exposes a stream's literals and matches or can
// leave bytes unwritten: klauspost's and the standard library's flate
// offer an io.Reader only, so every dif costs its whole size (~112 KB)
// inflated into a window, copied out, checksummed and scanned again to be
// applied. A dif is zeros but for about one word in a hundred, and its
// stream is mostly long matches of zeros: this decoder writes into a
// buffer it keeps zero, skips a match whose source is zeros and a literal
// zero, records the spans it wrote, takes Adler-32 over the zero runs in
// closed form, and the rebuild applies the spans alone
// (statedif.ApplySpans). A dif then costs what its stream costs.
//
// It gives what Inflate gives on every input (the same bytes, or an
// error of the same kind: zlib's and flate's errors, ErrSize), which
// FuzzInflateSparse checks against Inflate. It mirrors klauspost's decoder
// where a broken stream gives it a choice: how many bits it needs before
// a symbol (an error at the end of a stream cut short), and when a window
// of 32 KiB is handed on (the size error at the bound). One difference:
// klauspost decodes with an empty Huffman code (one no valid stream uses)
// through the table of the code before it, this decoder reports the
// stream corrupt.

// spanGap is how close a write must come to the last span to extend it
// rather than start a new one: fewer, longer spans to apply.
const spanGap = 16

// window is the size of klauspost's window, whose filling hands its bytes
// on to Inflate.
const window = 1 << 15

// sparse is the state of one sparse inflation.
type sparse struct {
	in   []byte // the zlib stream
	ip   int    // the next byte of in to load into bits
	bits uint64 // bits loaded, not consumed, least significant first
	nb   uint   // how many
	pad  int    // zero bytes loaded past the end of in

	out   []byte // zero from pos on
	pos   int
	max   int  // output past it is an error (the bound plus one)
	grow  bool // out grows up to max as needed
	spans []statedif.Span

	lit, dist, clen huffman
	lens            [286 + 30]uint8
	emptyCode       bool // a symbol was decoded with an empty code
}

// errSparseSize stands for ErrSize until Inflate's message is made.
var errSparseSize = fmt.Errorf("too long: %w", ErrSize)

// InflateSparse is Inflate for a buffer kept zero: dst must be zero but
// for the spans dirty (those of an earlier result in it), which it zeroes
// first. It returns the dif, zero outside the returned spans (sorted, not
// overlapping; they reuse dirty's storage), and Inflate's error for the
// same stream; on an error the dif is empty and its buffer all zeros.
func (f *Inflater) InflateSparse(dst []byte, dirty []statedif.Span, z []byte, size int) ([]byte, []statedif.Span, error) {
	statedif.ClearSpans(dst[:cap(dst)], dirty)
	limit := size
	if limit <= 0 {
		limit = MaxState
	}
	if f.sp == nil {
		f.sp = new(sparse)
	}
	d := f.sp
	d.in, d.ip, d.bits, d.nb, d.pad = z, 0, 0, 0, 0
	d.pos, d.max, d.grow, d.spans, d.emptyCode = 0, limit+1, size <= 0, dirty[:0], false
	want := d.max
	if d.grow {
		want = min(want, max(cap(dst), 256<<10))
	}
	if cap(dst) < want {
		dst = make([]byte, want)
	}
	d.out = dst[:min(cap(dst), d.max)]
	defer func() { d.in, d.out, d.spans = nil, nil, nil }() // the caller's, not to be kept

	if err := d.header(); err != nil {
		return d.fail(fmt.Errorf("zlib: %w", err))
	}
	sum, err := d.inflate()
	if err == errSparseSize {
		return d.fail(fmt.Errorf("inflates to more than %d bytes: %w", limit, ErrSize))
	}
	if err == nil && sum != d.adler() {
		err = zlib.ErrChecksum
	}
	if err != nil {
		return d.fail(fmt.Errorf("zlib after %d bytes: %w", d.pos, err))
	}
	if d.pos > limit {
		return d.fail(fmt.Errorf("inflates to more than %d bytes: %w", limit, ErrSize))
	}
	if size > 0 && d.pos != size {
		return d.fail(fmt.Errorf("inflates to %d bytes, the state has %d: %w", d.pos, size, ErrSize))
	}
	d.room(d.pos)
	return d.out[:d.pos], d.spans, nil
}

// fail zeroes what was written and returns err.
func (d *sparse) fail(err error) ([]byte, []statedif.Span, error) {
	statedif.ClearSpans(d.out, d.spans)
	return d.out[:0], d.spans[:0], err
}

// header reads the zlib header (RFC 1950 section 2.2) as Inflater.header.
func (d *sparse) header() error {
	if len(d.in) < 2 {
		return io.ErrUnexpectedEOF
	}
	h := d.in[:2]
	if h[0]&0x0f != 8 || h[0]>>4 > 7 || binary.BigEndian.Uint16(h)%31 != 0 {
		return zlib.ErrHeader
	}
	d.ip = 2
	if h[1]&0x20 != 0 {
		if len(d.in) < 6 {
			return io.ErrUnexpectedEOF
		}
		if binary.BigEndian.Uint32(d.in[2:]) != 1 {
			return zlib.ErrDictionary
		}
		d.ip = 6
	}
	return nil
}

// inflate decodes the deflate stream and returns the Adler-32 of the
// zlib trailer after it.
func (d *sparse) inflate() (uint32, error) {
	for {
		d.refill()
		if d.short(3) {
			return 0, io.ErrUnexpectedEOF
		}
		final := d.bits&1 == 1
		typ := d.bits >> 1 & 3
		d.consume(3)
		var err error
		switch typ {
		case 0:
			err = d.stored()
		case 1:
			err = d.block(fixedLit, nil, 7)
		case 2:
			var need uint
			if need, err = d.dynamic(final); err == nil {
				err = d.block(&d.lit, &d.dist, need)
			}
		default:
			err = d.corrupt()
		}
		if err != nil {
			return 0, err
		}
		if final {
			break
		}
	}
	// The trailer starts at the byte after the last bit used.
	p := d.ip + d.pad - int(d.nb/8)
	if p+4 > len(d.in) {
		return 0, io.ErrUnexpectedEOF
	}
	return binary.BigEndian.Uint32(d.in[p:]), nil
}

// refill loads bits up to at least 56 of them, zeros past the stream's end.
func (d *sparse) refill() {
	if d.ip+8 <= len(d.in) {
		d.bits |= binary.LittleEndian.Uint64(d.in[d.ip:]) << d.nb
		d.ip += int(63-d.nb) >> 3
		d.nb |= 56
		return
	}
	for d.nb <= 56 {
		if d.ip < len(d.in) {
			d.bits |= uint64(d.in[d.ip]) << d.nb
			d.ip++
		} else {
			d.pad++
		}
		d.nb += 8
	}
}

// short says whether fewer than n bits of the stream are left loaded.
func (d *sparse) short(n uint) bool {
	return d.pad > 0 && int(d.nb)-8*d.pad < int(n)
}

func (d *sparse) consume(n uint) {
	d.bits >>= n
	d.nb -= n
}

// corrupt is flate's error at the stream's current byte.
func (d *sparse) corrupt() error {
	return flate.CorruptInputError(max(0, d.ip+d.pad-int(d.nb/8)-2))
}

// stored copies a stored block (RFC 1951 section 3.2.4).
func (d *sparse) stored() error {
	d.consume(d.nb & 7)
	p := d.ip + d.pad - int(d.nb/8)
	d.ip, d.bits, d.nb, d.pad = p, 0, 0, 0
	if p+4 > len(d.in) {
		return io.ErrUnexpectedEOF
	}
	n := int(binary.LittleEndian.Uint16(d.in[p:]))
	if binary.LittleEndian.Uint16(d.in[p+2:]) != ^uint16(n) {
		d.ip += 4
		return d.corrupt()
	}
	p += 4
	cnt := min(n, len(d.in)-p)
	if d.pos+cnt > d.max {
		return errSparseSize
	}
	d.room(d.pos + cnt)
	copy(d.out[d.pos:], d.in[p:p+cnt])
	d.mark(d.pos, d.pos+cnt)
	d.pos += cnt
	d.ip = p + cnt
	if d.pos == d.max && d.pos%window == 0 {
		return errSparseSize // the window hands the bound on full
	}
	if cnt < n {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// dynamic reads a dynamic block's codes (RFC 1951 section 3.2.7) and
// returns how many bits klauspost's decoder reads before each literal or
// length of the block.
func (d *sparse) dynamic(final bool) (uint, error) {
	d.refill()
	if d.short(14) {
		return 0, io.ErrUnexpectedEOF
	}
	nlit := int(d.bits&31) + 257
	if nlit > 286 {
		return 0, d.corrupt()
	}
	ndist := int(d.bits>>5&31) + 1
	if ndist > 30 {
		return 0, d.corrupt()
	}
	nclen := int(d.bits>>10&15) + 4
	d.consume(14)
	var cl [19]uint8
	for i := range nclen {
		d.refill()
		if d.short(3) {
			return 0, io.ErrUnexpectedEOF
		}
		cl[clenOrder[i]] = uint8(d.bits & 7)
		d.consume(3)
	}
	if !d.clen.init(cl[:]) {
		return 0, d.corrupt()
	}
	n := nlit + ndist
	for i := 0; i < n; {
		d.refill()
		if d.short(d.clen.min) {
			return 0, io.ErrUnexpectedEOF
		}
		// symbol, inlined: a dynamic header has a few hundred of them
		x, nb := 0, uint(0)
		if e := d.clen.table[d.bits&d.clen.mask]; e != 0 {
			x, nb = int(e>>4), uint(e&15)
		} else if x, nb = d.clen.slow(d.bits); nb == 0 {
			d.emptyCode = d.emptyCode || d.clen.min == 0
			return 0, d.corrupt()
		}
		if d.short(nb) {
			return 0, io.ErrUnexpectedEOF
		}
		d.consume(nb)
		if x < 16 {
			d.lens[i] = uint8(x)
			i++
			continue
		}
		rep, b := 3, uint8(0)
		nb = 2
		switch x {
		case 16:
			if i == 0 {
				return 0, d.corrupt()
			}
			b = d.lens[i-1]
		case 17:
			nb = 3
		default:
			rep, nb = 11, 7
		}
		if d.short(nb) {
			return 0, io.ErrUnexpectedEOF
		}
		rep += int(d.bits & (1<<nb - 1))
		d.consume(nb)
		if i+rep > n {
			return 0, d.corrupt()
		}
		for range rep {
			d.lens[i] = b
			i++
		}
	}
	if !d.lit.init(d.lens[:nlit]) || !d.dist.init(d.lens[nlit:n]) {
		return 0, d.corrupt()
	}
	need := max(d.lit.min, uint(d.lens[256]))
	if !final {
		need += 10 // the smallest block that can follow
	}
	return need, nil
}
