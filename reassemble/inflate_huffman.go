package reassemble

import "math/bits"

// huffBits is how many bits of a Huffman code the sparse decoder looks up
// in one table (huffman.table): codes of up to 10 bits (nearly every code
// a dif uses) are one lookup, longer ones are decoded bit by bit
// (huffman.slow).
const huffBits = 10

// huffman is a canonical Huffman code of RFC 1951 section 3.2.2, ready to
// decode.
type huffman struct {
	// table[b] for the next huffBits bits b of the stream (least
	// significant first) is sym<<4 | length for a code of up to huffBits
	// bits, or 0 for a longer code or none.
	table  [1 << huffBits]uint16
	mask   uint64      // the bits of the table's index: 2^min(longest, huffBits) − 1
	count  [16]uint16  // how many codes of each length
	symbol [512]uint16 // the symbols in canonical order (288 at most)
	// min is the length of the shortest code, 0 for an empty code. An
	// empty code is valid (a block of literals only has no distance
	// codes) but decodes nothing.
	min uint
	// The code lengths the tables were built from: a dif's code often
	// comes again in the next one (and a code-length code more often),
	// whose tables are then kept.
	lengths [288]uint8
	nlen    int
	ok      bool
}

// init builds the code of the given code lengths. It accepts what
// klauspost's and the standard library's decoders accept: a complete code,
// an empty one, or a single code of one bit (zlib makes those).
func (h *huffman) init(lengths []uint8) bool {
	if h.ok && h.nlen == len(lengths) && string(h.lengths[:h.nlen]) == string(lengths) {
		return true
	}
	h.ok = false
	h.nlen = copy(h.lengths[:], lengths)
	h.count = [16]uint16{}
	minLen, maxLen := 0, 0
	for _, n := range lengths {
		if n == 0 {
			continue
		}
		if minLen == 0 || int(n) < minLen {
			minLen = int(n)
		}
		maxLen = max(maxLen, int(n))
		h.count[n&15]++
	}
	h.min = uint(minLen)
	tb := min(maxLen, huffBits)
	h.mask = 1<<tb - 1
	clear(h.table[:1<<tb])
	if maxLen == 0 {
		h.ok = true
		return true
	}
	code := 0
	var next, offs [16]int
	for i := minLen; i <= maxLen; i++ {
		code <<= 1
		next[i] = code
		code += int(h.count[i])
	}
	if code != 1<<maxLen && !(code == 1 && maxLen == 1) {
		return false
	}
	for i := 1; i < 15; i++ {
		offs[i+1] = offs[i] + int(h.count[i])
	}
	h.ok = true
	tbl := h.table[:1<<tb]
	for sym, n := range lengths {
		if n == 0 {
			continue
		}
		n &= 15
		h.symbol[offs[n]&511] = uint16(sym)
		offs[n]++
		c := next[n]
		next[n]++
		if int(n) > tb {
			continue
		}
		// The stream holds a code's bits most significant first.
		e := uint16(sym)<<4 | uint16(n)
		for j := int(bits.Reverse16(uint16(c)) >> (16 - n)); j < len(tbl); j += 1 << n {
			tbl[j] = e
		}
	}
	return true
}

// slow decodes a code bit by bit, with the counts of codes of each length
// (as zlib's puff.c does).
func (h *huffman) slow(b uint64) (sym int, n uint) {
	code, first, index := 0, 0, 0
	for l := uint(1); l < 16; l++ {
		code |= int(b & 1)
		b >>= 1
		count := int(h.count[l])
		if code-count < first {
			return int(h.symbol[index+code-first]), l
		}
		index += count
		first += count
		first <<= 1
		code <<= 1
	}
	return 0, 0
}

// fixedLit is the literal/length code of fixed Huffman blocks (RFC 1951
// section 3.2.6); their distances are plain 5-bit numbers.
var fixedLit = func() *huffman {
	var lengths [288]uint8
	for i := range lengths {
		switch {
		case i < 144:
			lengths[i] = 8
		case i < 256:
			lengths[i] = 9
		case i < 280:
			lengths[i] = 7
		default:
			lengths[i] = 8
		}
	}
	var h huffman
	h.init(lengths[:])
	return &h
}()

// The base lengths and distances of length codes 257… and distance codes
// 0…, with their extra bits (RFC 1951 section 3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// The order of the code length code's lengths in a dynamic header.
	clenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)
