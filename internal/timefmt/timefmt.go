// Package timefmt formats capture time stamps, the same way for every front
// end: time of day, date and time, seconds since the first packet, since
// the previous one, since the epoch, and RFC 3339 for machine-readable
// output.
//
// Every format is computed with integer arithmetic on the time stamp's
// seconds and nanoseconds (no floating point) and cut, never rounded, to
// the number of fraction digits asked for: 6 for a capture with microsecond
// time stamps, 9 for one with nanosecond time stamps, as
// tshark shows them. A signed number of seconds (a relative or delta time
// that is negative because packets are out of time order, an epoch time
// before 1970) is written as a sign and the magnitude cut towards zero:
// -1.5000009 s with 6 digits is "-1.500000".
package timefmt

import (
	"fmt"
	"time"

	"github.com/pmdump/pmdump/internal/decimal"
)

// Format is a way of showing a capture time stamp, as tcpdump's and
// tshark's -t option names them.
type Format uint8

const (
	// Absolute is the time of day in UTC: 23:41:07.782204 ("a").
	Absolute Format = iota
	// AbsoluteDate is the date and time of day in UTC:
	// 2026-11-21 23:41:07.782204 ("ad").
	AbsoluteDate
	// Relative is the seconds since the first packet: 12.345678 ("r").
	Relative
	// Delta is the seconds since the previous packet shown: 0.025000 ("d").
	Delta
	// Epoch is the seconds since 1970-01-01 00:00:00 UTC:
	// 1795304467.663841 ("e").
	Epoch
)

var formatNames = [...]string{"a", "ad", "r", "d", "e"}

// String is the format's name as -t takes it.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// ParseFormat parses a -t option value: a, ad, r, d or e.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown time format %q (want a, ad, r, d or e)", s)
}

// FormatHelp describes the formats for a flag's help.
const FormatHelp = "a (time of day, UTC), ad (date and time), r (seconds since the first packet), d (since the previous packet shown), e (epoch)"

// clampDigits keeps a digit count within 0..9.
func clampDigits(digits int) int {
	return min(max(digits, 0), 9)
}

// Formatter formats the time stamps of one stream of packets in one
// Format. Relative and Delta remember the first and the previous time
// stamp, so a Formatter belongs to one stream; it is not safe for
// concurrent use.
type Formatter struct {
	format Format
	digits int
	first  time.Time
	prev   time.Time
	hasFst bool
	hasPrv bool
	// The "15:04:05." text of the second last shown, so that formatting
	// millions of time stamps costs little.
	sec     int64
	secText []byte
}

// New returns a Formatter for the format with digits fraction digits
// (clamped to 0..9).
func New(f Format, digits int) *Formatter {
	return &Formatter{format: f, digits: clampDigits(digits)}
}

// SetFirst sets the time Relative counts from (the capture's first packet,
// whether shown or not). Without it, the first time stamp formatted is
// the origin.
func (f *Formatter) SetFirst(t time.Time) {
	f.first, f.hasFst = t, true
}

// Digits is the number of fraction digits the Formatter writes.
func (f *Formatter) Digits() int { return f.digits }

// Append appends the time stamp ts in the Formatter's format. For Delta it
// is the time since the previous call's ts (0 for the first call).
func (f *Formatter) Append(b []byte, ts time.Time) []byte {
	switch f.format {
	case AbsoluteDate:
		return AppendDateTime(b, ts, f.digits)
	case Relative:
		if !f.hasFst {
			f.SetFirst(ts)
		}
		return AppendSince(b, ts, f.first, f.digits)
	case Delta:
		prev := ts
		if f.hasPrv {
			prev = f.prev
		}
		f.prev, f.hasPrv = ts, true
		return AppendSince(b, ts, prev, f.digits)
	case Epoch:
		return AppendEpoch(b, ts, f.digits)
	}
	u := ts.UTC()
	sec := u.Unix()
	if f.secText == nil || sec != f.sec {
		f.sec = sec
		f.secText = appendClock(f.secText[:0], u)
	}
	b = append(b, f.secText...)
	return appendFraction(b, int64(u.Nanosecond()), f.digits)
}

// AppendTime appends the time of day of ts in UTC, 15:04:05.ffffff with
// digits fraction digits.
func AppendTime(b []byte, ts time.Time, digits int) []byte {
	u := ts.UTC()
	return appendFraction(appendClock(b, u), int64(u.Nanosecond()), clampDigits(digits))
}

// AppendDateTime appends the date and time of day of ts in UTC,
// 2006-01-02 15:04:05.ffffff with digits fraction digits.
func AppendDateTime(b []byte, ts time.Time, digits int) []byte {
	u := ts.UTC()
	b = appendDate(b, u)
	b = append(b, ' ')
	return appendFraction(appendClock(b, u), int64(u.Nanosecond()), clampDigits(digits))
}

// AppendRFC3339 appends ts in UTC as RFC 3339 with a fraction of exactly
// digits digits (none for 0), trailing zeros kept, so that every time stamp
// has the same width: 2026-11-21T23:41:07.782204000Z for 9 digits.
func AppendRFC3339(b []byte, ts time.Time, digits int) []byte {
	u := ts.UTC()
	b = appendDate(b, u)
	b = append(b, 'T')
	b = appendFraction(appendClock(b, u), int64(u.Nanosecond()), clampDigits(digits))
	return append(b, 'Z')
}

// AppendEpoch appends the seconds from the epoch to ts: 1795304467.663841.
func AppendEpoch(b []byte, ts time.Time, digits int) []byte {
	return appendSeconds(b, ts.Unix(), int64(ts.Nanosecond()), clampDigits(digits))
}

// AppendSince appends the seconds from since to ts, negative when ts is
// before since: 12.345678, -0.000100.
func AppendSince(b []byte, ts, since time.Time, digits int) []byte {
	return appendSeconds(b, ts.Unix()-since.Unix(), int64(ts.Nanosecond()-since.Nanosecond()), clampDigits(digits))
}

// appendSeconds appends sec seconds and nsec nanoseconds (|nsec| < 2e9, of
// either sign) as a signed decimal number of seconds, cut towards zero.
func appendSeconds(b []byte, sec, nsec int64, digits int) []byte {
	sec += nsec / 1e9
	nsec %= 1e9
	// Give both parts the sign of the whole.
	if sec > 0 && nsec < 0 {
		sec--
		nsec += 1e9
	} else if sec < 0 && nsec > 0 {
		sec++
		nsec -= 1e9
	}
	if sec < 0 || nsec < 0 {
		b = append(b, '-')
		// uint64(-sec) is the magnitude also for the most negative
		// int64, whose negation wraps to itself.
		return appendFraction(decimal.AppendUint(b, uint64(-sec)), -nsec, digits)
	}
	return appendFraction(decimal.AppendUint(b, uint64(sec)), nsec, digits)
}

// appendFraction appends "." and the first digits digits of ns
// (0 <= ns < 1e9), or nothing for 0 digits.
func appendFraction(b []byte, ns int64, digits int) []byte {
	if digits == 0 {
		return b
	}
	b = append(b, '.')
	switch digits { // constant divisors for the two usual precisions
	case 6:
		return decimal.AppendFixed(b, uint64(ns)/1000, 6)
	case 9:
		return decimal.AppendFixed(b, uint64(ns), 9)
	}
	return decimal.AppendFixed(b, uint64(ns)/pow10[9-digits], digits)
}

var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

func append2(b []byte, v int) []byte {
	return append(b, byte('0'+v/10), byte('0'+v%10))
}

// appendClock appends 15:04:05 of a UTC time.
func appendClock(b []byte, u time.Time) []byte {
	h, m, s := u.Clock()
	b = append2(b, h)
	b = append(b, ':')
	b = append2(b, m)
	b = append(b, ':')
	return append2(b, s)
}

// appendDate appends 2006-01-02 of a UTC time (years before 0 or after 9999
// as Go's time package writes them).
func appendDate(b []byte, u time.Time) []byte {
	y, mo, d := u.Date()
	if y < 0 || y > 9999 {
		return u.AppendFormat(b, "2006-01-02")
	}
	b = append2(b, y/100)
	b = append2(b, y%100)
	b = append(b, '-')
	b = append2(b, int(mo))
	b = append(b, '-')
	return append2(b, d)
}
