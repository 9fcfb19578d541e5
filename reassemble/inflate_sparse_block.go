package reassemble

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/pmdump/pmdump/statedif"
)

// block decodes a Huffman block's literals and matches (RFC 1951 section
// 3.2.5) with the literal/length code lit and the distance code dist (nil
// for a fixed block's 5-bit distances), need bits read before each
// literal or length as klauspost's decoder does. The decoder's state is
// kept in locals (registers) for the loop and stored back at its end.
func (d *sparse) block(lit, dist *huffman, need uint) error {
	in, ip, pad := d.in, d.ip, d.pad
	bits, nb, pos := d.bits, d.nb, d.pos
	var err error
	for {
		// refill, with the bit buffer in locals
		if ip+8 <= len(in) {
			bits |= binary.LittleEndian.Uint64(in[ip:]) << nb
			ip += int(63-nb) >> 3
			nb |= 56
		} else {
			for nb <= 56 {
				if ip < len(in) {
					bits |= uint64(in[ip]) << nb
					ip++
				} else {
					pad++
				}
				nb += 8
			}
		}
		// Each check below is short: fewer than n bits of the stream left.
		if pad > 0 && int(nb)-8*pad < int(need) {
			err = io.ErrUnexpectedEOF
			break
		}
		var sym int
		var n uint
		if e := lit.table[bits&lit.mask]; e != 0 {
			sym, n = int(e>>4), uint(e&15)
		} else if sym, n = lit.slow(bits); n == 0 {
			d.emptyCode = d.emptyCode || lit.min == 0
			err = errCorrupt
			break
		}
		if pad > 0 && int(nb)-8*pad < int(n) {
			err = io.ErrUnexpectedEOF
			break
		}
		bits >>= n
		nb -= n
		if sym < 256 {
			if pos >= d.max {
				err = errSparseSize
				break
			}
			if sym != 0 {
				if pos >= len(d.out) {
					d.room(pos + 1)
				}
				d.out[pos] = byte(sym)
				d.mark(pos, pos+1)
			}
			pos++
			if pos == d.max && pos%window == 0 {
				err = errSparseSize // the window hands the bound on full
				break
			}
			continue
		}
		if sym == 256 {
			break
		}
		if sym >= 286 {
			err = errCorrupt
			break
		}
		length := int(lengthBase[sym-257])
		if n = uint(lengthExtra[sym-257]); n > 0 {
			if pad > 0 && int(nb)-8*pad < int(n) {
				err = io.ErrUnexpectedEOF
				break
			}
			length += int(bits & (1<<n - 1))
			bits >>= n
			nb -= n
		}
		var code int
		if dist == nil {
			if pad > 0 && int(nb)-8*pad < 5 {
				err = io.ErrUnexpectedEOF
				break
			}
			code = int(reverse5[bits&31])
			bits >>= 5
			nb -= 5
		} else {
			if pad > 0 && int(nb)-8*pad < int(dist.min) {
				err = io.ErrUnexpectedEOF
				break
			}
			if e := dist.table[bits&dist.mask]; e != 0 {
				code, n = int(e>>4), uint(e&15)
			} else if code, n = dist.slow(bits); n == 0 {
				d.emptyCode = d.emptyCode || dist.min == 0
				err = errCorrupt
				break
			}
			if pad > 0 && int(nb)-8*pad < int(n) {
				err = io.ErrUnexpectedEOF
				break
			}
			bits >>= n
			nb -= n
		}
		if code >= 30 {
			err = errCorrupt
			break
		}
		distance := int(distBase[code])
		if n = uint(distExtra[code]); n > 0 {
			if pad > 0 && int(nb)-8*pad < int(n) {
				err = io.ErrUnexpectedEOF
				break
			}
			distance += int(bits & (1<<n - 1))
			bits >>= n
			nb -= n
		}
		if distance > pos {
			err = errCorrupt
			break
		}
		if pos+length > d.max {
			err = errSparseSize
			break
		}
		d.match(pos, distance, length)
		pos += length
		if pos == d.max && pos%window == 0 {
			err = errSparseSize
			break
		}
	}
	d.ip, d.pad, d.bits, d.nb, d.pos = ip, pad, bits, nb, pos
	if err == errCorrupt {
		return d.corrupt()
	}
	return err
}

// errCorrupt stands for flate's error until its offset is known.
var errCorrupt = errors.New("corrupt")

// reverse5 reverses 5-bit numbers: a fixed block's distance codes are
// stored most significant bit first.
var reverse5 = func() (r [32]uint8) {
	for i := range r {
		for b := range 5 {
			r[i] |= uint8(i>>b&1) << (4 - b)
		}
	}
	return
}()

// match copies length bytes from distance back to pos, or nothing when
// they are all zeros (out is zero from pos on).
func (d *sparse) match(pos, distance, length int) {
	from := pos - distance
	// Whether the source is all zeros: by its bytes when it is short, by
	// the spans (then the bytes) when not.
	src := from + min(distance, length)
	if from >= len(d.out) || (src-from > 64 && d.zero(from, src)) || allZero(d.out[from:min(src, len(d.out))]) {
		return
	}
	end := pos + length
	d.room(end)
	out := d.out[:end]
	if distance >= length {
		copy(out[pos:], out[from:from+length])
	} else {
		// The match overlaps what it makes: repeat the last distance
		// bytes, twice as many at each copy.
		for i := pos; i < end; {
			i += copy(out[i:end], out[from:i])
		}
	}
	d.markNonZero(pos, end)
}

// markNonZero records out[from:to] as written, less the zeros it starts
// and ends with (a match copies runs of zeros too), trimmed a word at a
// time then a byte.
func (d *sparse) markNonZero(from, to int) {
	le := binary.LittleEndian
	for from+8 <= to && le.Uint64(d.out[from:]) == 0 {
		from += 8
	}
	for from < to && d.out[from] == 0 {
		from++
	}
	for to-8 >= from && le.Uint64(d.out[to-8:]) == 0 {
		to -= 8
	}
	for to > from && d.out[to-1] == 0 {
		to--
	}
	if from < to {
		d.mark(from, to)
	}
}

// zero says whether out[from:to] (before pos) is all zeros, by the spans.
func (d *sparse) zero(from, to int) bool {
	s := d.spans
	k := len(s)
	if k == 0 || s[k-1].End <= from {
		return true
	}
	// The first span ending past from.
	lo, hi := 0, k-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].End > from {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return s[lo].Off >= to
}

// allZero says whether b is all zeros, a word at a time, stopping at the
// first word that is not.
func allZero(b []byte) bool {
	le := binary.LittleEndian
	for len(b) >= 8 {
		if le.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// mark records out[from:to] as written.
func (d *sparse) mark(from, to int) {
	if k := len(d.spans); k > 0 && from <= d.spans[k-1].End+spanGap {
		d.spans[k-1].End = max(d.spans[k-1].End, to)
		return
	}
	d.spans = append(d.spans, statedif.Span{Off: from, End: to})
}

// room makes out at least n bytes long (n at most max), growing it when
// the size is not known.
func (d *sparse) room(n int) {
	if n <= len(d.out) {
		return
	}
	grown := make([]byte, min(max(2*len(d.out), n), d.max))
	copy(grown, d.out) // pos may be past its end: runs of zeros move it on
	d.out = grown
}

// adler is the Adler-32 of out[:pos], zeros outside the spans: a run of
// n zeros leaves s1 as it is and adds n·s1 to s2.
func (d *sparse) adler() uint32 {
	s1, s2 := uint32(1), uint32(0)
	at := 0
	for _, s := range d.spans {
		s2 = uint32((uint64(s2) + uint64(s.Off-at)*uint64(s1)) % adlerMod)
		s1, s2 = adlerUpdate(s1, s2, d.out[s.Off:s.End])
		at = s.End
	}
	s2 = uint32((uint64(s2) + uint64(d.pos-at)*uint64(s1)) % adlerMod)
	return s2<<16 | s1
}
