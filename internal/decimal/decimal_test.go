package decimal

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// values are the edges of every digit count and of the integer types, and
// random numbers of every size.
func values() []int64 {
	v := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 65535, 286520, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		v = append(v, p-1, p, p+1, -p, -p+1, -p-1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		v = append(v, r.Int64()>>r.IntN(63), -(r.Int64() >> r.IntN(63)))
	}
	return v
}

func TestAppendIntAsStrconv(t *testing.T) {
	for _, v := range values() {
		if got, want := string(AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("AppendInt(%d) = %q, want %q", v, got, want)
		}
		if v >= 0 {
			u := uint64(v) * 2 // past MaxInt64 too
			if got, want := string(AppendUint(nil, u)), strconv.FormatUint(u, 10); got != want {
				t.Errorf("AppendUint(%d) = %q, want %q", u, got, want)
			}
		}
	}
	if got := string(AppendUint(nil, math.MaxUint64)); got != "18446744073709551615" {
		t.Errorf("AppendUint(MaxUint64) = %q", got)
	}
}

func TestAppendPadded(t *testing.T) {
	for _, v := range values() {
		for _, w := range []int{0, 1, 6, 7, 20, 25} {
			if got, want := string(AppendPadded([]byte("x"), v, w)), fmt.Sprintf("x%*d", w, v); got != want {
				t.Errorf("AppendPadded(%d, %d) = %q, want %q", v, w, got, want)
			}
		}
	}
}

func TestAppendFixed(t *testing.T) {
	for _, c := range []struct {
		v      uint64
		digits int
		want   string
	}{
		{42, 6, "000042"},
		{782204, 6, "782204"},
		{782204123, 9, "782204123"},
		{5, 1, "5"},
		{123, 2, "23"}, // the last digits
		{7, 0, ""},
		{0, 9, "000000000"},
		{math.MaxUint64, 19, "8446744073709551615"},
		{1, 25, "0000000000000000001"}, // at most 19
	} {
		if got := string(AppendFixed(nil, c.v, c.digits)); got != c.want {
			t.Errorf("AppendFixed(%d, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		v, d := r.Uint64N(1e9), 1+r.IntN(9)
		want := fmt.Sprintf("%09d", v)[9-d:]
		if got := string(AppendFixed(nil, v, d)); got != want {
			t.Errorf("AppendFixed(%d, %d) = %q, want %q", v, d, got, want)
		}
	}
}
