package statedif

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
)

// Hash is a 128-bit fingerprint of a state, for telling states apart
// within one process: equal states have equal Hashes, and two different
// states of up to 4 MiB have equal Hashes with probability below 2⁻⁸⁰.
// It is keyed at random when the process starts, so it means nothing to
// another process (a state's sha256 is for that).
//
// It is the value at two random points k₁, k₂ of the polynomial whose
// coefficients are the state's 32-bit little-endian limbs x_j (the last
// one padded with zeros), over the prime field of p = 2⁶¹−1, plus the
// state's length times a random c:
//
//	H_k(s) = Σ_j x_j·kʲ + len(s)·c  (mod p)
//
// For two different states of n bytes the difference of their H_k is a
// nonzero polynomial in k of degree below n/4, with fewer than n/4 roots:
// the chance that a random k is one is below n/4/p ≤ 2²⁰/2⁶¹ = 2⁻⁴¹ for
// n ≤ 4 MiB; two independent keys make it 2⁻⁸². States of different
// lengths differ by (n−n′)·c plus a polynomial in k, zero for one c in p.
// Summed over a billion (2³⁰) comparisons, a collision stays below 2⁻⁵².
// The keys are drawn after the capture exists, so no capture can be made
// to collide on purpose.
//
// The point of this hash over a cryptographic one is that it follows a
// dif: applying a dif changes the Hash by the changed limbs only, and
// the difs of a game change about one word in a hundred (see Apply).
type Hash [2]uint64

// The field: p = 2⁶¹ − 1.
const prime = 1<<61 - 1

// mulmod returns a·b mod p, for a, b < p.
func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	// a·b = hi·2⁶⁴ + lo = (hi·8 + lo>>61)·2⁶¹ + lo&p, and 2⁶¹ ≡ 1.
	r := (hi<<3 | lo>>61) + lo&prime
	if r >= prime {
		r -= prime
	}
	return r
}

// addmod returns a+b mod p, for a, b < p.
func addmod(a, b uint64) uint64 {
	r := a + b
	if r >= prime {
		r -= prime
	}
	return r
}

// powBits splits a limb index into the table lookups of kʲ.
const powBits = 10

// hashKey is one evaluation point: k, its powers kʲ for j below 2²⁰ in two
// tables (kʲ = hi[j>>10]·lo[j&1023]), k^(2²⁰) for beyond, and the length's
// coefficient c.
type hashKey struct {
	lo, hi [1 << powBits]uint64
	top    uint64 // k^(2²⁰)
	c      uint64
}

// keys are the process's two keys.
var keys = func() *[2]hashKey {
	var ks [2]hashKey
	var b [32]byte
	rand.Read(b[:])
	for i := range ks {
		k := binary.LittleEndian.Uint64(b[16*i:])%(prime-2) + 2
		ks[i].c = binary.LittleEndian.Uint64(b[16*i+8:])%(prime-1) + 1
		ks[i].init(k)
	}
	return &ks
}()

func (h *hashKey) init(k uint64) {
	h.lo[0] = 1
	for j := 1; j < len(h.lo); j++ {
		h.lo[j] = mulmod(h.lo[j-1], k)
	}
	step := mulmod(h.lo[len(h.lo)-1], k) // k^1024
	h.hi[0] = 1
	for j := 1; j < len(h.hi); j++ {
		h.hi[j] = mulmod(h.hi[j-1], step)
	}
	h.top = mulmod(h.hi[len(h.hi)-1], step) // k^(2²⁰)
}

// pow returns kʲ.
func (h *hashKey) pow(j int) uint64 {
	r := mulmod(h.hi[(j>>powBits)&(1<<powBits-1)], h.lo[j&(1<<powBits-1)])
	for j >>= 2 * powBits; j > 0; j-- { // states past 4 MiB: never in a game
		r = mulmod(r, h.top)
	}
	return r
}

// hashAcc adds the changes of words to a Hash, block by block of 1024
// limbs (4 KiB), which share hi[j>>10]: within a block the sums of
// lo[j&1023]·x_j over the new limbs and over the old ones (each product
// below 2⁹³, 1024 of them below 2¹⁰³) are kept in 128 bits unreduced, and
// reduced, multiplied by the block's power and added when the block ends.
type hashAcc struct {
	h     *Hash
	block int          // the block being summed, -1 for none
	acc   [2][4]uint64 // per key: new sum (hi, lo), old sum (hi, lo)
}

func newHashAcc(h *Hash) hashAcc { return hashAcc{h: h, block: -1} }

// word adds the change of the 64-bit word at byte offset i (limbs j =
// i/4 and j+1, i a multiple of 8) from old to new.
func (a *hashAcc) word(i int, old, new uint64) {
	if b := i >> (powBits + 2); b != a.block {
		a.flush()
		a.block = b
	}
	j := (i >> 2) & (1<<powBits - 1)
	for key := range a.acc {
		k := &keys[key]
		s := &a.acc[key]
		l0, l1 := k.lo[j], k.lo[j+1]
		s[0], s[1] = mulAdd(s[0], s[1], l0, new&0xffffffff)
		s[0], s[1] = mulAdd(s[0], s[1], l1, new>>32)
		if old != 0 {
			s[2], s[3] = mulAdd(s[2], s[3], l0, old&0xffffffff)
			s[2], s[3] = mulAdd(s[2], s[3], l1, old>>32)
		}
	}
}

// mulAdd returns (hi, lo) + a·b.
func mulAdd(hi, lo, a, b uint64) (uint64, uint64) {
	ph, pl := bits.Mul64(a, b)
	lo, c := bits.Add64(lo, pl, 0)
	return hi + ph + c, lo
}

// flush adds the block's sums to the Hash.
func (a *hashAcc) flush() {
	if a.block < 0 {
		return
	}
	for key := range a.acc {
		s := &a.acc[key]
		d := addmod(reduce(s[0], s[1]), prime-reduce(s[2], s[3]))
		a.h[key] = addmod(a.h[key], mulmod(keys[key].pow(a.block<<powBits), d))
		*s = [4]uint64{}
	}
	a.block = -1
}

// ZeroHash is the Hash of n zero bytes.
func ZeroHash(n int) Hash {
	return Hash{mulmod(uint64(n)%prime, keys[0].c), mulmod(uint64(n)%prime, keys[1].c)}
}

// HashOf returns the Hash of a state.
func HashOf(state []byte) Hash {
	h := ZeroHash(len(state))
	acc := newHashAcc(&h)
	n := len(state)
	i := 0
	for ; i+8 <= n; i += 8 {
		if w := binary.LittleEndian.Uint64(state[i:]); w != 0 {
			acc.word(i, 0, w)
		}
	}
	if i < n {
		var tail [8]byte
		copy(tail[:], state[i:])
		acc.word(i, 0, binary.LittleEndian.Uint64(tail[:]))
	}
	acc.flush()
	return h
}

// reduce returns hi·2⁶⁴ + lo mod p, for hi below 2⁵⁸.
func reduce(hi, lo uint64) uint64 {
	// 2⁶⁴ ≡ 2³ and 2⁶¹ ≡ 1 (mod p).
	t := lo&prime + lo>>61 + hi<<3
	r := t&prime + t>>61
	if r >= prime {
		r -= prime
	}
	return r
}
