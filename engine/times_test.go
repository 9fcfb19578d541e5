package engine

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSecondClock checks the clock against the subtraction it stands for,
// over times that stay in one second, cross seconds by a nanosecond, go
// back, and jump far (past the span whose bounds it keeps, and past what
// a Duration holds).
func TestSecondClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 500, time.UTC)
	want := func(t0, ts time.Time) int { return int(math.Floor(ts.Sub(t0).Seconds())) }
	for _, tc := range []struct {
		name  string
		steps []time.Duration // offsets from t0, in order
	}{
		{"within a second", []time.Duration{0, 1, 999_999_999, 5}},
		{"across a second", []time.Duration{999_999_999, time.Second, time.Second - 1, 2*time.Second - 1, 2 * time.Second}},
		{"backwards", []time.Duration{3 * time.Second, -1, -time.Second, -time.Second - 1, 0}},
		{"far", []time.Duration{secondClockSpan*time.Second - 1, secondClockSpan * time.Second, 1 << 62, 1<<62 + 1, -1 << 62, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c secondClock
			for _, d := range tc.steps {
				ts := t0.Add(d)
				if got, w := c.second(t0, ts), want(t0, ts); got != w {
					t.Errorf("%v after t0: second %d, want %d", d, got, w)
				}
			}
		})
	}
	t.Run("random", func(t *testing.T) {
		var c secondClock
		r := rand.New(rand.NewPCG(3, 4))
		ts := t0
		for i := range 100000 {
			switch r.IntN(10) {
			case 0:
				ts = t0.Add(time.Duration(r.Int64N(1<<40) - 1<<39)) // anywhere within ±9 minutes
			case 1:
				ts = t0.Add(time.Duration(r.Int64()) * time.Duration(1-2*r.IntN(2))) // anywhere at all
			default:
				ts = ts.Add(time.Duration(r.IntN(3_000_000))) // on, by up to 3 ms
			}
			base := t0
			if i%1000 == 999 {
				base = t0.Add(time.Second / 3) // another start
			}
			if got, w := c.second(base, ts), want(base, ts); got != w {
				t.Fatalf("step %d: %v: second %d, want %d", i, ts.Sub(base), got, w)
			}
		}
	})
}

// TestStamp checks that a stamp is the instant it was made of, to the
// nanosecond, in years a Duration since 1970 cannot reach.
func TestStamp(t *testing.T) {
	ref := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ts := range []time.Time{
		ref,
		time.Date(2026, 5, 4, 3, 2, 1, 999_999_999, time.FixedZone("x", 3600)),
		time.Unix(0, 0),
		time.Unix(-1, 1),
		time.Date(1500, 1, 1, 0, 0, 0, 7, time.UTC),
		time.Date(2500, 1, 1, 0, 0, 0, 7, time.UTC),
		time.Unix(1<<40, 123),
	} {
		got := stampOf(ts).time()
		if !got.Equal(ts) || ref.Sub(got) != ref.Sub(ts) || got.Sub(ts) != 0 {
			t.Errorf("%v: the stamp gives %v", ts, got)
		}
	}
}

// TestSub checks sub and since against time.Sub: near, far apart (where
// they leave it to Sub) and across the nanoseconds of a second.
func TestSub(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time {
		switch r.IntN(4) {
		case 0:
			return base.Add(time.Duration(r.Int64N(1 << 36))) // within a minute
		case 1:
			return time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)) // within 17,000 years
		case 2:
			return time.Unix(r.Int64()>>1, r.Int64N(1e9)) // anywhere
		}
		return base.Add(time.Duration(r.Int64N(1<<62)) * time.Duration(1-2*r.IntN(2)))
	}
	for i := range 200000 {
		a, b := at(), at()
		if got, want := sub(a, b), a.Sub(b); got != want {
			t.Fatalf("step %d: sub(%v, %v) = %v, Sub says %v", i, a, b, got, want)
		}
		if got, want := since(a, stampOf(b)), a.Sub(b); got != want {
			t.Fatalf("step %d: since(%v, %v) = %v, Sub says %v", i, a, b, got, want)
		}
	}
}
