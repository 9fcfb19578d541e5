package filter

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	names := Names()
	if !sort.StringsAreSorted(names) {
		t.Error("names not sorted")
	}
	have := map[string]bool{}
	for _, n := range names {
		if have[n] {
			t.Errorf("%q listed twice", n)
		}
		have[n] = true
		// Every name offered is one the compiler knows.
		if _, err := Compile("(" + n + ") != nil"); err != nil {
			t.Errorf("offered name %q does not compile: %v", n, err)
		}
	}
	for _, n := range []string{"stdf", "cdat", "conv", "type", "src", "dst", "frame"} {
		if !have[n] {
			t.Errorf("%q not offered", n)
		}
	}
}

// A filter that matched nothing says which of its names only some
// packets have.
func TestHint(t *testing.T) {
	for _, c := range []struct{ filter, want string }{
		{"n in 7340..7400", "n is a field of sdat only (the frame number in the capture is num)"},
		{"num in 7340..7400", ""},
		{"stdf and frame > 10 and player == 1", ""}, // every packet may have these
		{"c_sync < -5 or src == 0", "c_sync is a field of serr only; src is a field of stdf only"},
		{"slsn == 2", "slsn is a field of " + strings.Join(fieldPackets["slsn"], ", ")},
	} {
		f, err := Compile(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Hint(); got != c.want {
			t.Errorf("%q: hint %q, want %q", c.filter, got, c.want)
		}
	}
	if ps := fieldPackets["slsn"]; len(ps) < 2 || !slices.Contains(ps, "stdf") || !slices.Contains(ps, "sjon") {
		t.Errorf("slsn is in %v; the modern stdf and sjon have it", ps)
	}
}
