package reassemble

import "encoding/binary"

// adlerMod is Adler-32's modulus, the largest prime below 2¹⁶.
const adlerMod = 65521

// adlerSum is the Adler-32 checksum of b (RFC 1950), as hash/adler32's, at
// the speed of b's runs of zeros: an inflated dif is zeros but for about
// one word in a hundred, and a zero byte leaves s1 as it is and adds s1
// to s2, so a block of 32 zeros adds 32·s1 to s2 at once.
func adlerSum(b []byte) uint32 {
	s1, s2 := adlerUpdate(1, 0, b)
	return s2<<16 | s1
}

// adlerUpdate adds b to the sums s1 and s2 (each below adlerMod) of
// Adler-32, at the speed of b's runs of zeros.
func adlerUpdate(a1, a2 uint32, b []byte) (uint32, uint32) {
	s1, s2 := uint64(a1), uint64(a2)
	for len(b) > 0 {
		// Both sums stay far below 2⁶⁴ over a chunk: s1 < 2¹⁶ + 255·2¹⁶,
		// s2 < 2¹⁶·(2¹⁶ + 2²⁴).
		chunk := b[:min(len(b), 1<<16)]
		b = b[len(chunk):]
		for len(chunk) >= 32 {
			w := chunk[:32:32]
			if binary.LittleEndian.Uint64(w)|binary.LittleEndian.Uint64(w[8:])|binary.LittleEndian.Uint64(w[16:])|binary.LittleEndian.Uint64(w[24:]) == 0 {
				s2 += 32 * s1
				chunk = chunk[32:]
				continue
			}
			for _, c := range w {
				s1 += uint64(c)
				s2 += s1
			}
			chunk = chunk[32:]
		}
		for _, c := range chunk {
			s1 += uint64(c)
			s2 += s1
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	return uint32(s1), uint32(s2)
}
