package tui

import (
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/replay"
)

func TestSeek(t *testing.T) {
	even := func(i int) bool { return i%2 == 0 }
	never := func(int) bool { return false }
	for _, c := range []struct {
		name              string
		from, dir, lo, hi int
		ok                func(int) bool
		want              int
	}{
		{"forward, from a match", 4, 1, 0, 10, even, 4},
		{"forward, to the next", 5, 1, 0, 10, even, 6},
		{"backward, to the previous", 5, -1, 0, 10, even, 4},
		{"forward past the end", 9, 1, 0, 10, even, -1},
		{"backward past the start", 0, -1, 1, 10, even, -1},
		{"the window's end", 5, 1, 0, 6, even, -1},
		{"the window's start", 5, -1, 5, 10, even, -1},
		{"from outside the window", 10, -1, 0, 10, even, -1},
		{"nothing matches", 0, 1, 0, 10, never, -1},
		{"an empty range", 0, 1, 0, 0, even, -1},
	} {
		if got := seek(c.from, c.dir, c.lo, c.hi, c.ok); got != c.want {
			t.Errorf("%s: seek(%d, %d, %d, %d) = %d, want %d", c.name, c.from, c.dir, c.lo, c.hi, got, c.want)
		}
	}
}

// A scan of the timeline, read a chunk at a time, finds what a look at
// every entry finds, both ways: the keyframes, and the incomplete difs and
// base resets of legacy/lossy (with small chunks, so a scan crosses many).
func TestScanFindsWhatEveryEntryShows(t *testing.T) {
	m := newTest(t, realcap.Path(t, "legacy/lossy/capture.pcap"), 120, 40, false)
	defer func(n int) { scanChunk = n }(scanChunk)
	scanChunk = 7
	s := &m.scrub
	all := m.e.Entries(nil, s.line(), 0, -1)
	if len(all) != s.n || s.n < 100 {
		t.Fatalf("%d entries, %d in the cursor", len(all), s.n)
	}
	for _, c := range []struct {
		name string
		ok   func(i int, e, prev *replay.Entry) bool
	}{
		{"keyframe", func(_ int, e, _ *replay.Entry) bool { return e.Keyframe() }},
		{"problem", func(i int, e, prev *replay.Entry) bool { return e.Status != replay.OK || baseReset(i, e, prev) }},
	} {
		// what each entry is, from the whole line at once
		match := make([]bool, len(all))
		found := 0
		for i := range all {
			prev := replay.Entry{}
			if i > 0 {
				prev = all[i-1]
			}
			match[i] = c.ok(i, &all[i], &prev)
			if match[i] {
				found++
			}
		}
		if found == 0 || found == len(all) {
			t.Fatalf("%s: %d of %d entries match: nothing to find", c.name, found, len(all))
		}
		for from := 0; from < len(all); from += 13 {
			for _, dir := range []int{1, -1} {
				want := -1
				for i := from; i >= 0 && i < len(all); i += dir {
					if match[i] {
						want = i
						break
					}
				}
				if got := s.scan(&m.env, from, dir, c.ok); got != want {
					t.Errorf("%s from %d, direction %d: %d, want %d", c.name, from, dir, got, want)
				}
			}
		}
	}
}
