package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
)

// When the index's ring drops the oldest packets, the list starts at the
// oldest kept, the selection stays on its packet, the status line counts
// what was dropped and a message says so, once.
func TestRingDropsOldest(t *testing.T) {
	m := newTestWith(t, engine.Config{Work: engine.Index | engine.Timeline | engine.Health, IndexLimit: engine.IndexLimit{Packets: 300}}, "sample:modern", Options{Title: "ring"}, 120, 30)
	e := m.e
	x := e.Index()
	if x.Dropped() != x.Len()-300 || x.Dropped() == 0 {
		t.Fatalf("index: %d packets, %d dropped", x.Len(), x.Dropped())
	}
	m.packets.onGrow(&m.env)
	drive(t, m, "g")
	s := screen(m)
	rows := ringRows(s)
	if len(rows) == 0 {
		t.Fatalf("no rows:\n%q", s)
	}
	oldest := x.Entry(x.First()).N
	if f := strings.Fields(rows[0]); len(f) == 0 || f[0] != fmt.Sprint(oldest) {
		t.Errorf("first row %q, want packet %d (the oldest kept)", rows[0], oldest)
	}
	want := fmt.Sprintf("%d packets (ring: newest 300 kept, %d dropped)", x.Len(), x.Dropped())
	if !strings.Contains(s, want) || !strings.Contains(s, "the packet ring is full (--keep 300 packets)") {
		t.Errorf("status line lacks %q or the ring message:\n%s", want, s)
	}
	drive(t, m, "G")
	if last := ringRows(screen(m)); !strings.Contains(last[len(last)-1], fmt.Sprint(x.Entry(x.Len()-1).N)) {
		t.Errorf("last row %q, want packet %d", last[len(last)-1], x.Entry(x.Len()-1).N)
	}
}

// ringRows are the packet rows of a screen (numbers of any width).
func ringRows(s string) []string {
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if regexp.MustCompile(`^.?\s*\d+ \d\d:\d\d:\d\d\.\d{6} `).MatchString(l) {
			rows = append(rows, l)
		}
	}
	return rows
}
