package serve

import "encoding/binary"

// sub sets dst = a − b bytewise (mod 256), eight bytes at a time: each
// byte's top bit is set aside so no borrow crosses into the next byte, and
// put back with an exclusive or. dst may alias a or b; all three have the
// same length.
func sub(dst, a, b []byte) {
	const h = 0x8080808080808080
	le := binary.LittleEndian
	n := len(dst) &^ 7
	a, b = a[:len(dst)], b[:len(dst)]
	for i := 0; i < n; i += 8 {
		x, y := le.Uint64(a[i:]), le.Uint64(b[i:])
		le.PutUint64(dst[i:], ((x|h)-(y&^h))^((x^^y)&h))
	}
	for i := n; i < len(dst); i++ {
		dst[i] = a[i] - b[i]
	}
}
