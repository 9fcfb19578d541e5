package filter

import (
	"sort"
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
