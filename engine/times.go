package engine

import (
	"math"
	"time"
)

// stamp is a capture time as the frame tables keep it: 16 bytes without a
// pointer (a time.Time has its location's), the same instant to the
// nanosecond whatever the year.
type stamp struct {
	sec  int64
	nsec int32
}

func stampOf(t time.Time) stamp { return stamp{t.Unix(), int32(t.Nanosecond())} }

// sub is t.Sub(u), sooner: the two are less than 136 years apart (any two
// times of a capture) and the difference of their seconds cannot
// overflow, so it is taken as it is, without Sub's check (which costs an
// Add and a comparison).
func sub(t, u time.Time) time.Duration {
	ds := t.Unix() - u.Unix()
	if ds <= -1<<32 || ds >= 1<<32 {
		return t.Sub(u)
	}
	return time.Duration(ds)*time.Second + time.Duration(t.Nanosecond()-u.Nanosecond())
}

// since is t minus the instant of stamp s, as t.Sub(s.time()) is.
func since(t time.Time, s stamp) time.Duration {
	ds := t.Unix() - s.sec
	if ds <= -1<<32 || ds >= 1<<32 {
		return t.Sub(s.time())
	}
	return time.Duration(ds)*time.Second + time.Duration(int32(t.Nanosecond())-s.nsec)
}

// time is the stamp's instant, in UTC.
func (s stamp) time() time.Time { return time.Unix(s.sec, int64(s.nsec)).UTC() }

// secondClock says which second since t0 a time is in, as
// int(math.Floor(ts.Sub(t0).Seconds())) does, and keeps where the last
// second it said begins and ends: most times are in the second of the time
// before, and two comparisons cost less than the subtraction.
type secondClock struct {
	t0, from, to time.Time
	t            int
	ok           bool
}

// secondClockSpan bounds the seconds whose bounds a secondClock keeps: in
// them a float64 tells every nanosecond of a second from the next one, so
// the bounds give what the subtraction does.
const secondClockSpan = 1 << 20

func (c *secondClock) second(t0, ts time.Time) int {
	if c.ok && c.t0 == t0 && !ts.Before(c.from) && ts.Before(c.to) {
		return c.t
	}
	t := int(math.Floor(ts.Sub(t0).Seconds()))
	c.t, c.t0, c.ok = t, t0, t > -secondClockSpan && t < secondClockSpan
	if c.ok {
		c.from = t0.Add(time.Duration(t) * time.Second)
		c.to = c.from.Add(time.Second)
	}
	return t
}
