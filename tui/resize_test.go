package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/internal/realcap"
)

// After the window shrinks, the selected packet is still on the screen.
func TestResizeKeepsSelectedRow(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	drive(t, m, ":40<enter>")
	for _, size := range [][2]int{{80, 24}, {100, 14}, {160, 48}} {
		drive(t, m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		if s := screen(m); !regexp.MustCompile(`(?m)^ *40 \d\d:`).MatchString(s) {
			t.Errorf("%dx%d: packet 40, selected, is not on the screen:\n%s", size[0], size[1], s)
		}
	}
}

// The hex dump fits an 80-column terminal: every line ends with its text
// column.
func TestHexDumpFits80Columns(t *testing.T) {
	m := newTest(t, "sample:modern", 80, 24, false)
	drive(t, m, ":5<enter>x")
	s := screen(m)
	lines := regexp.MustCompile(`(?m)^ *00000010  [0-9a-f ]{49} \|[^|\n]{16}\| *$`).FindAllString(s, -1)
	if len(lines) != 1 {
		t.Errorf("the hex dump's second line is not whole at 80 columns:\n%s", s)
	}
}

// A level map wider than its pane pans with ctrl+arrows, and 0 centres it
// on the player again.
func TestMapPans(t *testing.T) {
	m := newTest(t, realcap.Path(t, "modern/basic/basic.pcap"), 80, 40, true)
	drive(t, m, "3:1:1000<enter>M")
	before := screen(m)
	drive(t, m, "<ctrl+right><ctrl+right><ctrl+down>")
	panned := screen(m)
	if panned == before {
		t.Errorf("ctrl+arrows did not move the map:\n%s", panned)
	}
	drive(t, m, "0")
	if again := screen(m); again != before {
		t.Errorf("0 did not centre the map again:\n%s", again)
	}
	if !strings.Contains(before, "frame 1000") {
		t.Errorf("not at frame 1000:\n%s", before)
	}
}
