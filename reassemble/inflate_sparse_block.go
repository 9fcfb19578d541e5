package reassemble

import (
	"encoding/binary"
	"io"

	"github.com/pmdump/pmdump/statedif"
)

// block decodes a Huffman block's literals and matches (RFC 1951 section
// 3.2.5) with the literal/length code lit and the distance code dist (nil
// for a fixed block's 5-bit distances), need bits read before each
// literal or length as klauspost's decoder does.
func (d *sparse) block(lit, dist *huffman, need uint) error {
	for {
		d.refill()
		sym, err := d.symbol(lit, need)
		if err != nil {
			return err
		}
		if sym < 256 {
			if d.pos >= d.max {
				return errSparseSize
			}
			if sym != 0 {
				d.room(d.pos + 1)
				d.out[d.pos] = byte(sym)
				d.mark(d.pos, d.pos+1)
			}
			d.pos++
			if d.pos == d.max && d.pos%window == 0 {
				return errSparseSize // the window hands the bound on full
			}
			continue
		}
		if sym == 256 {
			return nil
		}
		if sym >= 286 {
			return d.corrupt()
		}
		length := int(lengthBase[sym-257])
		if nb := uint(lengthExtra[sym-257]); nb > 0 {
			if d.short(nb) {
				return io.ErrUnexpectedEOF
			}
			length += int(d.bits & (1<<nb - 1))
			d.consume(nb)
		}
		var code int
		if dist == nil {
			if d.short(5) {
				return io.ErrUnexpectedEOF
			}
			code = int(reverse5[d.bits&31])
			d.consume(5)
		} else if code, err = d.symbol(dist, dist.min); err != nil {
			return err
		}
		if code >= 30 {
			return d.corrupt()
		}
		distance := int(distBase[code])
		if nb := uint(distExtra[code]); nb > 0 {
			if d.short(nb) {
				return io.ErrUnexpectedEOF
			}
			distance += int(d.bits & (1<<nb - 1))
			d.consume(nb)
		}
		if distance > d.pos {
			return d.corrupt()
		}
		if d.pos+length > d.max {
			return errSparseSize
		}
		d.match(distance, length)
		if d.pos == d.max && d.pos%window == 0 {
			return errSparseSize
		}
	}
}

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

// match copies length bytes from distance back, or only moves on when
// they are all zeros (out is zero from pos on, so nothing needs writing).
func (d *sparse) match(distance, length int) {
	from := d.pos - distance
	if src := from + min(distance, length); d.zero(from, src) || from >= len(d.out) || allZero(d.out[from:min(src, len(d.out))]) {
		d.pos += length
		return
	}
	end := d.pos + length
	d.room(end)
	out := d.out[:end]
	if distance >= length {
		copy(out[d.pos:], out[from:from+length])
	} else {
		// The match overlaps what it makes: repeat the last distance
		// bytes, twice as many at each copy.
		for i := d.pos; i < end; {
			i += copy(out[i:end], out[from:i])
		}
	}
	d.markNonZero(d.pos, end)
	d.pos = end
}

// markNonZero records out[from:to] as written, less the zeros it starts
// and ends with (a match copies runs of zeros too).
func (d *sparse) markNonZero(from, to int) {
	for from < to && d.out[from] == 0 {
		from++
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

// allZero says whether b is all zeros, a word at a time.
func allZero(b []byte) bool {
	var or uint64
	for len(b) >= 8 {
		or |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		or |= uint64(c)
	}
	return or == 0
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
