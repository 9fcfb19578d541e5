package report

import (
	"reflect"
	"testing"
)

// TestDetailWindows: the full-detail windows of a thinned replay are the
// conversation's findings and the capture's, with their margins, long
// findings cut, the most severe first within the budget, merged.
func TestDetailWindows(t *testing.T) {
	m := FindingMargin.Seconds()
	span := FindingSpan.Seconds()
	cases := []struct {
		name string
		fs   []Finding
		want [][2]float64
	}{
		{"none", nil, nil},
		{"other conversation", []Finding{{Conv: 2, Start: 100, End: 101}}, nil},
		{"own and capture's, merged", []Finding{{Conv: 1, Start: 100, End: 101}, {Conv: 0, Start: 104, End: 104}, {Conv: 1, Start: 300, End: 300}},
			[][2]float64{{100 - m, 104 + m}, {300 - m, 300 + m}}},
		{"long finding cut", []Finding{{Conv: 1, Start: 100, End: 2000}}, [][2]float64{{100 - m, 100 + span + m}}},
		{"budget: errors first", func() []Finding {
			var fs []Finding
			for i := range 40 { // 40 warnings of 10 s each, then one error at the end
				fs = append(fs, Finding{Conv: 1, Severity: "warning", Start: float64(1000 + 100*i), End: float64(1000 + 100*i)})
			}
			return append(fs, Finding{Conv: 1, Severity: "error", Start: 9999, End: 9999})
		}(), nil},
	}
	for _, c := range cases {
		got := detailWindows(c.fs, 1)
		if c.name == "budget: errors first" {
			total := 0.0
			for _, w := range got {
				total += w[1] - w[0]
			}
			if total > MaxFindingDetail.Seconds() || len(got) == 0 || got[len(got)-1][0] != 9999-m {
				t.Errorf("%s: %v (%.0f s)", c.name, got, total)
			}
			continue
		}
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
