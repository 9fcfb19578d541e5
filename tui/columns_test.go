package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The list's columns line up whatever the cells' widths, and a narrow list
// trades the addresses for the conversation's number.
func TestListColumns(t *testing.T) {
	rows := []rowCells{
		{n: "7", time: "00:00:01.000000", src: "10.0.0.2:24785", dst: "10.0.0.1:58256", conv: "1", dir: "c→s", player: "p1", name: "stak", info: "player=1"},
		{n: "12345", time: "00:00:02.000000", src: "[fe80::1]:24785", dst: "10.0.0.1:5", conv: "12", dir: "s→c", player: "p?", name: "stdf", info: "src=0 dst=10"},
	}
	for _, tt := range []struct {
		width int
		addrs bool
	}{{160, true}, {80, false}} {
		var c listColumns
		for i := range rows {
			c.fit(&rows[i])
		}
		c.choose(tt.width)
		if c.addrs != tt.addrs {
			t.Errorf("width %d: addresses shown %v, want %v", tt.width, c.addrs, tt.addrs)
		}
		lines := []string{c.header(), c.line(&rows[0]), c.line(&rows[1])}
		// Each column starts at the same place on every line: the
		// direction arrows line up, and so do the names.
		col := func(s, sub string) int { return ansi.StringWidth(s[:strings.Index(s, sub)]) }
		if a, b := col(lines[1], "c→s"), col(lines[2], "s→c"); a != b {
			t.Errorf("width %d: directions at %d and %d:\n%s", tt.width, a, b, strings.Join(lines, "\n"))
		}
		if a, b, h := col(lines[1], "stak"), col(lines[2], "stdf"), col(lines[0], "Name"); a != b || a != h {
			t.Errorf("width %d: names at %d, %d, title at %d:\n%s", tt.width, a, b, h, strings.Join(lines, "\n"))
		}
		if got := strings.Contains(lines[2], "[fe80::1]:24785"); got != tt.addrs {
			t.Errorf("width %d: address shown %v:\n%s", tt.width, got, lines[2])
		}
	}
}
