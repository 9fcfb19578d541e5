package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/filter"
	goldenfile "github.com/pmdump/pmdump/internal/golden"
	"github.com/pmdump/pmdump/reassemble"
)

// newTest returns a model over a bundled sample whose engine has read it
// all, at a fixed window size and without color.
func newTest(t testing.TB, sample string, w, h int, color bool) *Model {
	t.Helper()
	return newTestWith(t, engine.Config{Work: engine.Index | engine.Timeline | engine.Health}, sample, Options{Title: sample, Color: color}, w, h)
}

// newTestWith returns a model with opts over a capture that an engine of
// cfg has read all of, at a fixed window size.
func newTestWith(t testing.TB, cfg engine.Config, capture string, opts Options, w, h int) *Model {
	t.Helper()
	e := engine.New(cfg)
	if err := e.Run(context.Background(), capture); err != nil {
		t.Fatal(err)
	}
	opts.Engine = e
	m := New(opts)
	t.Cleanup(func() { m.Close() })
	drive(t, m, m.Init(), tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// drive feeds messages to the model and runs the commands it returns, as
// the program would, until none is left.
func drive(t testing.TB, m *Model, items ...any) {
	t.Helper()
	// A panic the UI recovered from is a failure, though the UI goes on.
	onRecovered = func(where string, r any) { t.Errorf("the UI recovered from a panic: %s: %v", where, r) }
	defer func() { onRecovered = nil }()
	var queue []tea.Msg
	runCmd := func(c tea.Cmd) {
		if c == nil {
			return
		}
		queue = append(queue, c())
	}
	for _, it := range items {
		switch it := it.(type) {
		case tea.Cmd:
			runCmd(it)
		case string:
			queue = append(queue, keys(it)...)
		case tea.Msg:
			queue = append(queue, it)
		}
		for len(queue) > 0 {
			msg := queue[0]
			queue = queue[1:]
			switch msg := msg.(type) {
			case nil:
				continue
			case tea.BatchMsg:
				for _, c := range msg {
					runCmd(c)
				}
				continue
			case tea.QuitMsg:
				continue
			}
			_, c := m.Update(msg)
			runCmd(c)
		}
	}
}

// keys turns "abc<enter>" into key presses.
func keys(s string) []tea.Msg {
	named := map[string]tea.KeyPressMsg{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight},
		"end": {Code: tea.KeyEnd}, "home": {Code: tea.KeyHome}, "pgdown": {Code: tea.KeyPgDown},
		"ctrl+u":     {Code: 'u', Mod: tea.ModCtrl},
		"ctrl+right": {Code: tea.KeyRight, Mod: tea.ModCtrl}, "ctrl+down": {Code: tea.KeyDown, Mod: tea.ModCtrl},
	}
	var out []tea.Msg
	for s != "" {
		if strings.HasPrefix(s, "<") {
			if i := strings.Index(s, ">"); i > 0 {
				if k, ok := named[s[1:i]]; ok {
					out = append(out, k)
					s = s[i+1:]
					continue
				}
			}
		}
		r := []rune(s)[0]
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
		s = s[len(string(r)):]
	}
	return out
}

// screen is the rendered screen without styles.
func screen(m *Model) string { return ansi.Strip(m.Render()) }

// golden compares a screen with testdata/NAME.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if goldenfile.Want(t, path, got, "go test ./tui -update") != got {
		t.Errorf("screen %s differs from %s:\n%s", name, path, got)
	}
}

// listRows are the packet rows of the list on a screen.
func listRows(s string) []string {
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if regexp.MustCompile(`^.\s+\d+ \d\d:\d\d:\d\d\.\d{6} `).MatchString(l) {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestFilterNarrowsList(t *testing.T) {
	m := newTest(t, "sample:modern", 120, 40, false)
	before := screen(m)
	golden(t, "packets", before)
	all := listRows(before)
	if len(all) == 0 {
		t.Fatal("no packet rows on the first screen")
	}
	drive(t, m, "/stdf and src == 0")
	if s := screen(m); !strings.Contains(s, "/ stdf and src == 0") || !strings.Contains(s, "✓") {
		t.Errorf("the filter bar does not show a valid expression:\n%s", s)
	}
	drive(t, m, "<enter>")
	after := screen(m)
	golden(t, "packets-filtered", after)
	rows := listRows(after)
	if len(rows) == 0 {
		t.Fatal("the filter shows no rows")
	}
	for _, r := range rows {
		if !strings.Contains(r, " stdf src=0 ") {
			t.Errorf("row does not match stdf and src == 0: %s", r)
		}
	}
	if len(m.packets.rows) >= m.e.Index().Len() {
		t.Errorf("the filter kept %d of %d packets", len(m.packets.rows), m.e.Index().Len())
	}
	if !strings.Contains(after, "matches") {
		t.Error("no match count shown")
	}
	// An invalid expression says why, and applying it keeps the list.
	drive(t, m, "/<ctrl+u>stfd")
	if s := screen(m); !strings.Contains(s, "✗") || !strings.Contains(s, "unknown name") {
		t.Errorf("invalid filter not explained:\n%s", s)
	}
	drive(t, m, "<esc>")
	// Completion and history.
	drive(t, m, "/<up>")
	if got := m.input.Value(); got != "stdf and src == 0" {
		t.Errorf("history up: %q", got)
	}
	m.input.SetValue("stdf and siz")
	drive(t, m, "<tab>")
	if got := m.input.Value(); !strings.HasPrefix(got, "stdf and size") {
		t.Errorf("completion: %q", got)
	}
	// An ambiguous prefix completes to what its names share and lists them.
	var cl []string
	for _, n := range filter.Names() {
		if strings.HasPrefix(n, "cl") {
			cl = append(cl, n)
		}
	}
	common := ""
	if len(cl) > 0 {
		common = cl[0]
		for _, n := range cl[1:] {
			for !strings.HasPrefix(n, common) {
				common = common[:len(common)-1]
			}
		}
	}
	m.input.SetValue("stdf and cl")
	drive(t, m, "<tab>")
	if got, s := m.input.Value(), screen(m); len(cl) < 2 || got != "stdf and "+common || !strings.Contains(s, fmt.Sprintf("tab: %d names: %s", len(cl), strings.Join(cl, " "))) {
		t.Errorf("ambiguous completion: %q\n%s", got, s)
	}
	drive(t, m, "<esc>")
}

func TestPacketJumpsAndMarks(t *testing.T) {
	m := newTest(t, "sample:modern", 120, 40, false)
	drive(t, m, ":100<enter>")
	x := m.e.Index()
	if n := x.Entry(m.packets.pos(m.packets.cur)).N; n != 100 {
		t.Fatalf("go to 100: at packet %d", n)
	}
	drive(t, m, "ma<end>")
	if m.packets.cur != x.Len()-1 {
		t.Errorf("end: row %d of %d", m.packets.cur, x.Len())
	}
	drive(t, m, "'a")
	if n := x.Entry(m.packets.pos(m.packets.cur)).N; n != 100 {
		t.Errorf("jump to mark a: at packet %d, want 100", n)
	}
	ref := x.Entry(m.packets.pos(m.packets.cur))
	drive(t, m, "n")
	if e := x.Entry(m.packets.pos(m.packets.cur)); e.Name != ref.Name || e.N <= ref.N {
		t.Errorf("n: packet %d %s after %d %s", e.N, e.Name[:], ref.N, ref.Name[:])
	}
	drive(t, m, "c")
	if e := x.Entry(m.packets.pos(m.packets.cur)); e.Conv != ref.Conv {
		t.Errorf("c: conversation %d, want %d", e.Conv, ref.Conv)
	}
	drive(t, m, "f")
	for _, p := range m.packets.rows {
		if x.Entry(int(p)).Conv != ref.Conv {
			t.Fatalf("follow: packet of conversation %d shown", x.Entry(int(p)).Conv)
		}
	}
	if len(m.packets.rows) == 0 {
		t.Error("follow shows nothing")
	}
	drive(t, m, "f")
	if m.packets.filter != nil {
		t.Error("f again does not show every packet")
	}
	drive(t, m, ":99999<enter>")
	if !m.env.isErr || !strings.Contains(screen(m), "no game packet") {
		t.Errorf("a number past the end is not reported: %q", m.env.msg)
	}
}

// mapPlayer finds player digit p in the map pane of a screen: row and
// column, -1 when absent.
func mapPlayer(m *Model, s string, p byte) (int, int) {
	l := m.env.lay
	for y, line := range strings.Split(s, "\n") {
		r := []rune(line)
		for x := l.level.x; x < len(r); x++ {
			if r[x] == rune(p) {
				return y, x
			}
		}
	}
	return -1, -1
}

func TestScrubMovesPlayer(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	// the screen at a frame, and player 1's place on its map
	at := func(frame int) (int, int) {
		t.Helper()
		s := screen(m)
		golden(t, fmt.Sprintf("state-frame%d", frame), s)
		if !strings.Contains(s, fmt.Sprintf("slsn 1 frame %d ", frame)) {
			t.Fatalf("not at frame %d:\n%s", frame, s)
		}
		y, x := mapPlayer(m, s, '1')
		if y < 0 {
			t.Fatalf("player 1 not on the map at frame %d:\n%s", frame, s)
		}
		return y, x
	}
	drive(t, m, "3:1:50<enter>")
	ya, xa := at(50)
	// Scrub forward state by state to frame 100.
	for i := 0; i < 200 && m.scrub.ent.N < 100; i++ {
		drive(t, m, "l")
	}
	yb, xb := at(100)
	if ya == yb && xa == xb {
		t.Errorf("player 1 did not move on the map: (%d,%d) at frames 50 and 100", xa, ya)
	}
	// The keyframe and first/last keys.
	drive(t, m, "g")
	if m.scrub.i != 0 || !m.scrub.ent.Keyframe() {
		t.Errorf("g: state %d, keyframe %v", m.scrub.i, m.scrub.ent.Keyframe())
	}
	drive(t, m, "]")
	if !m.scrub.ent.Keyframe() || m.scrub.i == 0 {
		t.Errorf("]: state %d is not the next keyframe", m.scrub.i)
	}
	drive(t, m, "G")
	if m.scrub.i != m.scrub.n-1 {
		t.Errorf("G: state %d of %d", m.scrub.i, m.scrub.n)
	}
}

func TestDiffListsKnownChange(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	// Player 2 runs from x 605 to 705.75 between frames 50 and 100 of
	// level sequence 1 (pmdump diff sample:modern --player 1 --slsn 1 50 100).
	drive(t, m, "3:1:50<enter>a:1:100<enter>")
	s := screen(m)
	golden(t, "diff", s)
	for _, want := range []string{"psyn[2].x 605 → 705.75", "psyn: 15 changed values"} {
		if !strings.Contains(s, want) {
			t.Errorf("the diff does not list %q:\n%s", want, s)
		}
	}
	// Every client at this frame.
	drive(t, m, "A")
	s = screen(m)
	if !strings.Contains(s, "every client of game 1 (conversations 1, 2) at level") || !strings.Contains(s, "10.0.0.3:24785") {
		t.Errorf("the diff across clients is not shown:\n%s", s)
	}
}

func TestHelpListsEveryBinding(t *testing.T) {
	m := newTest(t, "sample:legacy", 160, 48, false)
	drive(t, m, "?")
	s := screen(m)
	golden(t, "help", s)
	for _, g := range m.helpGroups() {
		for _, b := range g.keys {
			h := b.Help()
			if !strings.Contains(s, h.Key) || !strings.Contains(s, h.Desc) {
				t.Errorf("help lacks %q %q", h.Key, h.Desc)
			}
			// Each view's keys say what they do there: health moves a
			// cursor over seconds, not states.
			if g.title == "Health" && strings.Contains(h.Desc, "state") {
				t.Errorf("help for health says %q %q", h.Key, h.Desc)
			}
			if g.title == "Timeline, state, diff" && strings.HasPrefix(h.Desc, "diff:") {
				t.Errorf("help for the timeline lists a diff key: %q %q", h.Key, h.Desc)
			}
		}
	}
	drive(t, m, "?")
	if strings.Contains(screen(m), "pmdump tui: keys") {
		t.Error("? does not close the help")
	}
}

func TestEveryViewFits(t *testing.T) {
	for _, sample := range []string{"sample:modern", "sample:legacy"} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			m := newTest(t, sample, size[0], size[1], false)
			for _, v := range []string{"1", "2", "3", "4", "5", "?"} {
				drive(t, m, v)
				s := screen(m)
				lines := strings.Split(s, "\n")
				if len(lines) != size[1] {
					t.Errorf("%s %v view %s: %d lines", sample, size, v, len(lines))
				}
				for i, l := range lines {
					if w := ansi.StringWidth(l); w != size[0] {
						t.Errorf("%s %v view %s line %d: %d cells: %q", sample, size, v, i, w, l)
						break
					}
				}
				if v == "?" {
					drive(t, m, "?")
				}
			}
		}
	}
}

func TestHealthAndTimeline(t *testing.T) {
	m := newTest(t, "sample:modern", 120, 40, false)
	drive(t, m, "2")
	s := screen(m)
	golden(t, "timeline", s)
	for _, want := range []string{"dif bytes/s", "ack latency ms", "▼", "clients (c/C)"} {
		if !strings.Contains(s, want) {
			t.Errorf("timeline lacks %q:\n%s", want, s)
		}
	}
	drive(t, m, "5llll")
	s = screen(m)
	golden(t, "health", s)
	for _, want := range []string{"inputs", "dif bytes", "the second from t=3 s to t=4 s"} {
		if !strings.Contains(s, want) {
			t.Errorf("health lacks %q:\n%s", want, s)
		}
	}
	drive(t, m, "<enter>")
	if m.env.view != viewTimeline {
		t.Fatal("enter in health does not show the timeline")
	}
	if got := int(m.scrub.ent.Time().Sub(m.env.first).Seconds()); got != 3 {
		t.Errorf("timeline at t=%d s, want 3 (the 4th second)", got)
	}
	// The first G in a fresh health view goes to the last second, g to
	// the first.
	for _, c := range []struct{ key, want string }{{"G", "the second from t=4 s to t=5 s"}, {"g", "the second from t=0 s to t=1 s"}} {
		h := newTest(t, "sample:modern", 120, 40, false)
		drive(t, h, "5"+c.key)
		if s := screen(h); !strings.Contains(s, c.want) {
			t.Errorf("5%s: no %q:\n%s", c.key, c.want, s)
		}
	}
}

func TestColorAndNoColor(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	drive(t, m, "3")
	if r := m.Render(); strings.Contains(r, "38;") || strings.Contains(r, "48;") || strings.Contains(r, "▀") {
		t.Error("colors without color")
	}
	c := newTest(t, "sample:modern", 160, 48, true)
	drive(t, c, "3")
	r := c.Render()
	if !strings.Contains(r, "\x1b[") || !strings.Contains(r, "▀") {
		t.Error("no colored half-block map with color")
	}
}

func TestMouse(t *testing.T) {
	m := newTest(t, "sample:modern", 120, 40, false)
	drive(t, m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.packets.cur != 3 {
		t.Errorf("wheel down: row %d, want 3", m.packets.cur)
	}
	drive(t, m, tea.MouseClickMsg{X: 10, Y: 2 + 5})
	if m.packets.cur != m.packets.top+5 {
		t.Errorf("click: row %d, want %d", m.packets.cur, m.packets.top+5)
	}
	// Click the third tab.
	x := strings.Index(screen(m), "3 State")
	drive(t, m, tea.MouseClickMsg{X: x, Y: 0})
	if m.env.view != viewState {
		t.Errorf("click on the tab: view %d", m.env.view)
	}
}

func TestProgressBar(t *testing.T) {
	for _, c := range []struct {
		p    engine.ProgressEvent
		want string
	}{
		{engine.ProgressEvent{}, "reading…"},
		{engine.ProgressEvent{Input: "/tmp/a.pcap", Read: 50, Total: 100, Frames: 9}, "reading a.pcap [█████░░░░░]  50%, 9 frames"},
		{engine.ProgressEvent{Input: "-", Frames: 7}, "reading -: 7 frames"},
	} {
		if got := progressBar(c.p, 10); got != c.want {
			t.Errorf("progressBar(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// The rebuild's part of the progress line: 100 % only when complete, the
// clients not done yet while there is room (the one taken first first), "so
// far" while reading.
func TestRebuildLine(t *testing.T) {
	l := func(conv, difs, rebuilt int) engine.LineProgress {
		return engine.LineProgress{Line: reassemble.Chain{Conv: conv}, Difs: difs, Rebuilt: rebuilt}
	}
	for _, c := range []struct {
		p     engine.Progress
		read  bool
		first reassemble.Chain
		w     int
		want  string
	}{
		{engine.Progress{Difs: 1000, Rebuilt: 999, Lines: []engine.LineProgress{l(1, 500, 500), l(2, 500, 499)}}, true, reassemble.Chain{}, 80,
			"states: 999 of 1000 rebuilt (99 %) · c2 99 %"},
		{engine.Progress{Difs: 1000, Rebuilt: 1000}, true, reassemble.Chain{}, 80, "states: 1000 of 1000 rebuilt (99 %)"},
		{engine.Progress{Difs: 1000, Rebuilt: 1000, Done: true}, true, reassemble.Chain{}, 80, "states: 1000 rebuilt"},
		{engine.Progress{Difs: 300, Rebuilt: 41, Lines: []engine.LineProgress{l(1, 100, 41), l(2, 200, 0)}}, false, reassemble.Chain{}, 80,
			"states: 41 of 300 rebuilt so far · c1 41 % · c2 0 %"},
		{engine.Progress{Difs: 300, Rebuilt: 41, Lines: []engine.LineProgress{l(1, 100, 41), l(2, 200, 0)}}, false, reassemble.Chain{}, 40,
			"states: 41 of 300 rebuilt so far"},
		// The client taken first comes first.
		{engine.Progress{Difs: 600, Rebuilt: 141, Lines: []engine.LineProgress{l(1, 100, 41), l(2, 200, 0), l(3, 300, 100)}}, true, reassemble.Chain{Conv: 3}, 80,
			"states: 141 of 600 rebuilt (23 %) · c3 33 % · c1 41 % · c2 0 %"},
	} {
		if got := rebuildLine(c.p, c.read, c.first, c.w); got != c.want {
			t.Errorf("rebuildLine(%+v, %v) = %q, want %q", c.p, c.read, got, c.want)
		}
	}
}

// TestRunningEngine starts the program the way pmdump tui does: the
// engine reads on its own goroutine while the screen refreshes.
func TestRunningEngine(t *testing.T) {
	m := New(Options{Start: func(ctx context.Context, e *engine.Engine) error { return e.Run(ctx, "sample:legacy") }})
	defer m.Close()
	m.resize(100, 30)
	var done tea.Msg
	for _, c := range m.Init()().(tea.BatchMsg) {
		if c == nil {
			continue
		}
		if msg := c(); msg != nil {
			if _, ok := msg.(runDoneMsg); ok {
				done = msg
			}
		}
	}
	if done == nil {
		t.Fatal("the engine's run did not end")
	}
	drive(t, m, done)
	if !m.env.read || m.e.Index().Len() == 0 {
		t.Errorf("after the run: read %v, %d packets", m.env.read, m.e.Index().Len())
	}
	// The states come behind the packets; the screen follows them
	// without a key press.
	m.e.Wait()
	drive(t, m, tickMsg{})
	if !m.env.done || len(m.scrub.lines) == 0 {
		t.Errorf("after the rebuild: done %v, %d lines", m.env.done, len(m.scrub.lines))
	}
	// Everything is in: the packets, nothing said to be in progress.
	if s := m.renderStatus(200); !strings.Contains(s, "809 packets") || strings.Contains(s, "rebuil") {
		t.Errorf("status after the rebuild: %q", s)
	}
	if rows := listRows(screen(m)); len(rows) == 0 {
		t.Error("no packets shown")
	}
}

// TestFilterInChunks filters a chunk at a time and finds what one pass
// finds, keeping the selected packet selected.
func TestFilterInChunks(t *testing.T) {
	m := newTest(t, "sample:legacy", 120, 40, false)
	drive(t, m, ":300<enter>/cdat<enter>")
	want := append([]int32(nil), m.packets.rows...)
	sel := m.e.Index().Entry(m.packets.pos(m.packets.cur)).N
	defer func(n int) { filterChunk = n }(filterChunk)
	filterChunk = 50
	drive(t, m, "/<ctrl+u><enter>:300<enter>/cdat<enter>")
	if len(want) == 0 || len(m.packets.rows) != len(want) {
		t.Fatalf("%d matches in chunks, %d in one pass", len(m.packets.rows), len(want))
	}
	for i := range want {
		if want[i] != m.packets.rows[i] {
			t.Fatalf("match %d: %d in chunks, %d in one pass", i, m.packets.rows[i], want[i])
		}
	}
	if got := m.e.Index().Entry(m.packets.pos(m.packets.cur)).N; got != sel || sel < 300 {
		t.Errorf("selected packet %d in chunks, %d in one pass (at or after 300)", got, sel)
	}
}

// TestHelpScrollsInSmallWindow reads the whole help at 80×24 by scrolling.
func TestHelpScrollsInSmallWindow(t *testing.T) {
	m := newTest(t, "sample:modern", 80, 24, false)
	drive(t, m, "?")
	seen := screen(m)
	for i := 0; i < 10; i++ {
		drive(t, m, "<pgdown>")
		seen += screen(m)
	}
	for _, g := range m.helpGroups() {
		for _, b := range g.keys {
			if h := b.Help(); !strings.Contains(seen, h.Key) || !strings.Contains(seen, h.Desc) {
				t.Errorf("scrolling the help never shows %q %q", h.Key, h.Desc)
			}
		}
	}
}

// TestNothingToShow goes to a packet number and a mark while a filter
// matches nothing.
func TestNothingToShow(t *testing.T) {
	m := newTest(t, "sample:modern", 80, 24, false)
	drive(t, m, "ma/num == 0<enter>")
	if len(m.packets.rows) != 0 {
		t.Fatalf("num == 0 matched %d packets", len(m.packets.rows))
	}
	for _, k := range []string{":5<enter>", "'a", "n", "N", "c", "C", "f"} {
		drive(t, m, k)
		if m.env.isErr && strings.Contains(m.env.msg, "internal error") {
			t.Errorf("%s on an empty list: %s", k, m.env.msg)
		}
	}
	if s := screen(m); !strings.Contains(s, "no packet matches num == 0") {
		t.Errorf("the empty list does not say why:\n%s", s)
	}
}

// On a live capture the status line names the interfaces; packets and
// states are counted as for a file.
func TestLiveStatusLine(t *testing.T) {
	m := newTestWith(t, engine.Config{Work: engine.Index | engine.Timeline | engine.Health}, "sample:modern", Options{Title: "live: lo", Live: "lo"}, 200, 30)
	// 761 game packets and 362 states: pmdump read and pmdump states on
	// sample:modern.
	if s := m.renderStatus(200); !strings.Contains(s, "live lo: 761 packets (capture ended)") || !strings.Contains(s, "states: 362 rebuilt") {
		t.Errorf("live status line: %q", s)
	}
}
