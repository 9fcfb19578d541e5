package tui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/replay"
)

// state is what a model keeps between messages: every view's, the cursor
// and panes they share, what they share of the program (env) and the
// root's own.
type state struct {
	env      env
	packets  packetsModel
	scrub    stateCursor
	panes    panes
	timeline timelineView
	stateV   stateView
	diff     diffView
	health   healthModel
	finds    findingsModel
	help     helpModel
	helpOn   bool
	prompt   int
	note     string
	wanted   wanted
	w, h     int
}

func snapshot(m *Model) state {
	return state{m.env, m.packets, m.scrub, m.panes, m.timeline, m.state, m.diff, m.health, m.finds, m.help,
		m.helpOn, m.prompt, m.promptNote, m.wanted, m.w, m.h}
}

// Drawing changes no state: after every view (and the help) of real
// captures, at two sizes, in color and not, View leaves the model as it
// was and draws the same screen twice.
func TestViewChangesNothing(t *testing.T) {
	steps := []any{
		"1", ":40<enter>", "x", "/stdf<enter>", "G", "2", "]", "3", "M", "<ctrl+right>", "4", "a", "l", "<down>", "A",
		"5", "l", "6", "j", "?", "<pgdown>", "?",
		tea.WindowSizeMsg{Width: 80, Height: 24}, "1", "3", "4", "?", "<pgdown>", "?", "5", "6",
	}
	for _, c := range []struct {
		capture string
		color   bool
	}{{"modern/basic/basic.pcap", false}, {"legacy/lossy/capture.pcap", true}} {
		m := newTest(t, realcap.Path(t, c.capture), 160, 48, c.color)
		for i, step := range steps {
			drive(t, m, step)
			before := snapshot(m)
			first := m.Render()
			m.View()
			if after := snapshot(m); !reflect.DeepEqual(before, after) {
				t.Errorf("%s after step %d (%v): drawing changed the model's state:\n%s", c.capture, i, step, changed(before, after))
			}
			if again := m.Render(); again != first {
				t.Errorf("%s after step %d (%v): a second drawing differs", c.capture, i, step)
			}
		}
	}
}

// changed names the fields of two states that differ.
func changed(a, b state) string {
	var out string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		fa, fb := va.Field(i), vb.Field(i)
		if fa.Kind() == reflect.Struct {
			for j := 0; j < fa.NumField(); j++ {
				if fmt.Sprintf("%+v", fa.Field(j)) != fmt.Sprintf("%+v", fb.Field(j)) {
					out += fmt.Sprintf("%s.%s\n", va.Type().Field(i).Name, fa.Type().Field(j).Name)
				}
			}
		}
	}
	return out
}

// The state view of an incomplete dif explains it whole, wrapped to the
// text pane, however narrow.
func TestStateViewWrapsExplanation(t *testing.T) {
	m := newTest(t, realcap.Path(t, "legacy/lossy/capture.pcap"), 160, 48, false) // the map beside the text
	drive(t, m, "3")
	l := m.scrub.line()
	es := m.e.Entries(nil, l, 0, -1)
	at := slices.IndexFunc(es, func(e replay.Entry) bool { return e.Status != replay.OK })
	if at < 0 {
		t.Fatal("no incomplete dif in legacy/lossy")
	}
	m.scrub.setI(&m.env, at)
	drive(t, m, m.scrub.request(&m.env))
	whole := func(what string) {
		t.Helper()
		s := screen(m)
		if !strings.Contains(s, fmt.Sprintf("(%d of %d pieces)", es[at].Pieces, es[at].Count)) || !strings.Contains(s, "move to another") {
			t.Errorf("%s, state %d (%s):\n%s", what, at, es[at].Status, s)
		}
	}
	whole("state view at 160 columns")
	drive(t, m, "4")
	whole("diff view at 160 columns")
	// Narrow, the map alone (M): there is no map, the explanation shows.
	drive(t, m, tea.WindowSizeMsg{Width: 80, Height: 30}, "3M")
	whole("state view, map only, at 80 columns")
}
