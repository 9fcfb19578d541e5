package filter

import (
	"io"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// everyName is f defining every name a filter can use on each match, not
// only those f uses: what it matches must not change.
func everyName(f *Filter) *Filter {
	g := *f
	g.env = map[string]any{}
	for i := range g.fixed {
		g.fixed[i] = true
	}
	g.packets = nil
	for _, n := range packetNames {
		g.packets = append(g.packets, usedPacket{name: n, cond: boolName(n)})
	}
	g.fields = map[string]uint8{}
	for _, n := range envNames {
		g.fields[n] = fieldPlain | fieldRaw | fieldLen
	}
	return &g
}

// countMatches runs a real capture (../shared/captures) through a tracker
// and counts the packets each filter matches, checking on each packet that
// defining every name matches the same. It skips the test when
// ../shared is absent and fails when a capture it names is missing.
func countMatches(t *testing.T, rel string, exprs []string) []int {
	t.Helper()
	path := realcap.Path(t, rel)
	filters := make([]*Filter, len(exprs))
	for i, e := range exprs {
		f, err := Compile(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		filters[i] = f
	}
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := session.NewTracker(decode.VersionUnknown)
	counts := make([]int, len(exprs))
	for {
		d, err := r.Next()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := tr.Process(d)
		for i, f := range filters {
			m := f.Match(rec)
			if m {
				counts[i]++
			}
			if all := everyName(f).Match(rec); all != m {
				t.Fatalf("%s on packet %d: %v, and %v with every name defined", exprs[i], rec.N, m, all)
			}
		}
	}
}

// TestRealLegacyBasic checks filters against the packet counts of the
// capture's manifest (legacy/basic/MANIFEST.md) and the game-move lists
// the client and the server wrote (an entry 2862 1 1 64: player 1 quit;
// 508 1 1 11: player 1 active with color 11; no player was dropped).
func TestRealLegacyBasic(t *testing.T) {
	const total, c2s = 7332, 1 + 1 + 2268 + 1791 + 457
	cases := []struct {
		expr string
		want int // -1: at least one
	}{
		{"1234 or 5678", 2},
		{"_1234 or _5678", 2},
		{`type == "1234" or type == "5678"`, 2},
		{"1234", 1},
		{"_5678", 1},
		{"not 1234 and c2s", c2s - 1},
		{"stdf", 475},
		{`type == "stdf"`, 475},
		{"sdak or stak", 1791 + 457},
		{`type in ["cdat", "serr"]`, 2268 + 546},
		{"any(entries, .type == 1 and .data1 == 1 and .data2 == 64)", -1},
		{"any(entries, .type == 1 and .data1 == 1 and .data2 == 11)", -1},
		{"any(entries, .type == 1 and .data2 in [70, 71])", 0},
		{"any(entries, .type == 5) or any(entries, .type == 1)", -1},
		{"sdat and n > 0", -1},
		{"not frame == 504", -1},
		{"frame == 504", -1},
		{"not (frame == 504)", -1},
		{"c2s", c2s},
		{"s2c", total - c2s},
	}
	exprs := make([]string, len(cases))
	for i, c := range cases {
		exprs[i] = c.expr
	}
	got := countMatches(t, "legacy/basic/capture.pcap", exprs)
	for i, c := range cases {
		if c.want >= 0 && got[i] != c.want || c.want < 0 && got[i] < 1 {
			t.Errorf("%s: %d packets, want %d", c.expr, got[i], c.want)
		}
	}
	idx := func(e string) int {
		for i, x := range exprs {
			if x == e {
				return i
			}
		}
		t.Fatalf("no case %q", e)
		return -1
	}
	// The moves: every sdat with entries has a move (type 5) or a state
	// (type 1) entry; the quit entry is in fewer sdats than that.
	if n, all := got[idx("any(entries, .type == 1 and .data1 == 1 and .data2 == 64)")], got[idx("sdat and n > 0")]; n > all {
		t.Errorf("quit entry in %d of %d sdats with entries", n, all)
	}
	if got[idx("any(entries, .type == 5) or any(entries, .type == 1)")] != got[idx("sdat and n > 0")] {
		t.Errorf("sdats with entries: %d, with a move or state entry: %d", got[idx("sdat and n > 0")], got[idx("any(entries, .type == 5) or any(entries, .type == 1)")])
	}
	// not x == y reads as not (x == y): the two partition the capture.
	if a, b, c := got[idx("not frame == 504")], got[idx("not (frame == 504)")], got[idx("frame == 504")]; a != b || a+c != total {
		t.Errorf("not frame == 504: %d, not (frame == 504): %d, frame == 504: %d, of %d", a, b, c, total)
	}
}
