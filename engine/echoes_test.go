package engine

import (
	"math"
	"testing"
	"time"
)

// TestEchoes: each leg of the ping exchange is the time from the packet
// that carried a value to the first that echoes it; an echo of a value
// never sent, or echoed already, measures nothing.
func TestEchoes(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 23, 41, 7, 0, time.UTC)
	e := echoes{}
	e.sent(100.25, t0)
	e.sent(101.25, t0.Add(time.Second))
	e.sent(math.NaN(), t0) // a packet without the field: never echoed
	steps := []struct {
		v      float64
		at     time.Duration
		wantMs float64
		wantOK bool
	}{
		{101.25, 1500 * time.Millisecond, 500, true},
		{101.25, 1600 * time.Millisecond, 0, false}, // echoed already
		{100.25, 2 * time.Second, 2000, true},
		{99, 2 * time.Second, 0, false},
		{math.NaN(), 2 * time.Second, 0, false},
	}
	for _, s := range steps {
		ms, ok := e.echoed(s.v, t0.Add(s.at))
		if ms != s.wantMs || ok != s.wantOK {
			t.Errorf("echoed(%v) at +%v = %v, %v; want %v, %v", s.v, s.at, ms, ok, s.wantMs, s.wantOK)
		}
	}
	// At most 64 wait: the 66th value sent clears the 65 before it.
	e = echoes{}
	for i := range 66 {
		e.sent(float64(i), t0)
	}
	if len(e) != 1 {
		t.Errorf("%d values waiting after 66 sent, want 1", len(e))
	}
}
