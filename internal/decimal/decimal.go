// Package decimal appends integers in decimal, as strconv does, for the
// text formatting that runs once per packet (pmdump read prints millions
// of lines): two digits at a time, no intermediate buffer to copy from,
// and a right-aligned form that needs no second pass to count digits.
package decimal

import "strconv"

// pairs holds "00" to "99": the digits of v are pairs[2*v], pairs[2*v+1].
const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// fill writes the decimal digits of v backwards, ending at d[i], and
// returns where they start.
func fill(d *[20]byte, i int, v uint64) int {
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		i -= 2
		d[i], d[i+1] = pairs[r], pairs[r+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		d[i], d[i+1] = pairs[2*v], pairs[2*v+1]
		return i
	}
	i--
	d[i] = byte('0' + v)
	return i
}

// AppendUint appends v in decimal, as strconv.AppendUint(b, v, 10).
func AppendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	var d [20]byte
	return append(b, d[fill(&d, len(d), v):]...)
}

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10).
func AppendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return AppendUint(b, uint64(v))
	}
	b = append(b, '-')
	return AppendUint(b, -uint64(v)) // the magnitude, also of the most negative int64
}

// AppendPadded appends v right-aligned in width columns: spaces, then v in
// decimal (all of it when it is wider).
func AppendPadded(b []byte, v int64, width int) []byte {
	if v < 0 || width > 20 {
		s := strconv.AppendInt(nil, v, 10)
		for n := len(s); n < width; n++ {
			b = append(b, ' ')
		}
		return append(b, s...)
	}
	var d [20]byte
	i := fill(&d, len(d), uint64(v))
	for len(d)-i < width {
		i--
		d[i] = ' '
	}
	return append(b, d[i:]...)
}

// AppendFixed appends exactly digits digits (0 to 19) of v, the last
// digits of it with leading zeros: AppendFixed(b, 42, 6) appends "000042".
// It is the fraction of a time stamp.
func AppendFixed(b []byte, v uint64, digits int) []byte {
	if digits <= 0 {
		return b
	}
	digits = min(digits, 19)
	var d [20]byte
	i := len(d)
	for n := digits; n >= 2; n -= 2 {
		q := v / 100
		r := (v - q*100) * 2
		i -= 2
		d[i], d[i+1] = pairs[r], pairs[r+1]
		v = q
	}
	if digits%2 == 1 {
		i--
		d[i] = byte('0' + v%10)
	}
	return append(b, d[i:]...)
}
