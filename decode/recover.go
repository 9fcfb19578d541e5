package decode

// RecoverNegative recovers the negative value the legacy game meant from the
// four bytes it wrote for it. The game wrote byte k as (unsigned char)(v /
// 256^k % 256) with truncating division, so every non-zero byte stands for
// byte - 256. -1 is 000000ff, -256 is 0000ff00, -300 is 0000ffd4.
func RecoverNegative(raw uint32) int64 {
	var v int64
	for k := 3; k >= 0; k-- {
		b := int64(raw >> (8 * k) & 0xff)
		v *= 256
		if b != 0 {
			v += b - 256
		}
	}
	return v
}

// EncodeNegative is the game's legacy encoding of a negative value, the
// inverse of RecoverNegative for -2^31 < v <= 0.
func EncodeNegative(v int64) uint32 {
	var raw uint32
	for k := 3; k >= 0; k-- {
		p := int64(1) << (8 * k)
		d := v / p // truncates towards zero, as C does
		v -= d * p
		raw |= uint32(uint8(d)) << (8 * k)
	}
	return raw
}
