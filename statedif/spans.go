package statedif

import "encoding/binary"

// Span is a range of a dif's bytes, [Off, End): a sparse dif is zero
// outside its spans (a span may hold zeros too).
type Span struct {
	Off, End int
}

// ApplySpans is Apply for a dif that is zero outside spans (sorted by
// offset, not overlapping, within dif): it reads only the words the
// spans touch, so a dif costs what its spans cost, not its length (but
// for copying base's unchanged bytes when dst is not base). The state
// and its Hash are those of Apply(dst, base, dif, h).
func ApplySpans(dst, base, dif []byte, spans []Span, h Hash) Hash {
	if base == nil {
		h = ZeroHash(len(dst))
	}
	n := len(dst)
	if base != nil {
		base = base[:n]
	}
	dif = dif[:n]
	inPlace := n > 0 && base != nil && &dst[0] == &base[0]
	acc := newHashAcc(&h)
	done := 0 // dst[:done] is set
	for _, s := range spans {
		from, to := max(s.Off&^7, done), min((s.End+7)&^7, n)
		if from >= to {
			continue
		}
		keep(dst, base, done, from, inPlace)
		subWords(dst, base, dif, from, to, inPlace, &acc)
		done = to
	}
	keep(dst, base, done, n, inPlace)
	acc.flush()
	return h
}

// subWords sets dst = base − dif over [from, to), from a multiple of 8
// and to one too or len(dst), adding the change of each changed word to
// h. inPlace says dst is base.
func subWords(dst, base, dif []byte, from, to int, inPlace bool, h *hashAcc) {
	le := binary.LittleEndian
	i := from
	for ; i+8 <= to; i += 8 {
		y := le.Uint64(dif[i:])
		var x uint64
		if base != nil {
			x = le.Uint64(base[i:])
		}
		if y == 0 {
			if !inPlace {
				le.PutUint64(dst[i:], x)
			}
			continue
		}
		z := swar(x, y)
		le.PutUint64(dst[i:], z)
		h.word(i, x, z)
	}
	if i < to { // the last word of the state, padded
		var xs, ys, zs [8]byte
		m := copy(ys[:], dif[i:to])
		if base != nil {
			copy(xs[:], base[i:to])
		}
		x, y := le.Uint64(xs[:]), le.Uint64(ys[:])
		z := swar(x, y)
		le.PutUint64(zs[:], z)
		copy(dst[i:i+m], zs[:])
		if y != 0 {
			h.word(i, x, z)
		}
	}
}

// ClearSpans zeroes b's spans (clipped to b), leaving a sparse dif's
// buffer all zeros for the next one.
func ClearSpans(b []byte, spans []Span) {
	for _, s := range spans {
		if s.Off < len(b) {
			clear(b[s.Off:min(s.End, len(b))])
		}
	}
}
