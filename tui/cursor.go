package tui

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// stateCursor is the position in the states of one client (a line) that
// the timeline, state and diff views share, and what was loaded for it.
type stateCursor struct {
	lines []reassemble.Chain
	li    int // the line shown
	i     int // its entry
	ent   replay.Entry
	n     int // entries of the line

	// The loaded state and diff: a request runs off the UI goroutine, one
	// at a time; a position passed while one runs is never loaded.
	inflight, pending bool
	have              stateKey
	loaded            *stateMsg

	a          *markA // diff: state A
	across     bool   // diff: every client at this frame
	diffScroll int
	mapOnly    bool
	panX, panY int // the map's view moved from the player by this many blocks
	// the centre of the map last drawn, and the player's block it was
	// drawn for: a pan starts from where the view is
	viewX, viewY, playerX, playerY int
	follow                         bool // the last state was asked for: stay at the end as states come
	buf                            []replay.Entry
}

// markA is the state a diff starts from.
type markA struct {
	line reassemble.Chain
	i    int
	ent  replay.Entry
}

// stateKey says what a load is for: a state, and in the diff view what it
// is compared with.
type stateKey struct {
	line   reassemble.Chain
	i      int
	diff   bool
	a      markA
	hasA   bool
	across bool
}

// line is the line shown (the zero Line when there is none).
func (s *stateCursor) line() reassemble.Chain {
	if s.li < len(s.lines) {
		return s.lines[s.li]
	}
	return reassemble.Chain{}
}

// lineOf is the index of conversation conv's line, -1 when it has none.
func (s *stateCursor) lineOf(conv int) int {
	return slices.IndexFunc(s.lines, func(l reassemble.Chain) bool { return l.Conv == conv })
}

// toLine shows line li (its states as far as they are rebuilt).
func (s *stateCursor) toLine(m *Model, li int) {
	s.li = li
	s.n = m.e.EntryCount(s.line())
}

// refreshLines picks up new lines and states of a running engine.
func (s *stateCursor) refreshLines(m *Model) {
	s.lines = m.e.Lines()
	if s.li >= len(s.lines) {
		s.li = 0
	}
	if len(s.lines) == 0 {
		s.n = 0
		return
	}
	old := s.n
	s.n = m.e.EntryCount(s.line())
	if s.follow && old > 0 && s.i == old-1 && !m.done {
		s.i = s.n - 1 // G was pressed: follow the growing timeline
	}
	s.setI(m, s.i)
}

// entry returns entry i of the shown line.
func (s *stateCursor) entry(m *Model, i int) replay.Entry {
	s.buf = m.e.Entries(s.buf[:0], s.line(), i, i+1)
	if len(s.buf) == 0 {
		return replay.Entry{}
	}
	return s.buf[0]
}

func (s *stateCursor) setI(m *Model, i int) {
	if s.n == 0 {
		s.i = 0
		s.ent = replay.Entry{}
		return
	}
	s.i = clamp(i, 0, s.n-1)
	s.ent = s.entry(m, s.i)
}

// step moves by d states.
func (s *stateCursor) step(m *Model, d int) tea.Cmd {
	s.setI(m, s.i+d)
	return s.request(m)
}

// scan returns the first entry from i on in direction dir for which ok
// holds (given the entry before it, zero for the first), or -1.
func (s *stateCursor) scan(m *Model, i, dir int, ok func(i int, e, prev *replay.Entry) bool) int {
	w := entryWindow{e: m.e, line: s.line(), dir: dir}
	return seek(i, dir, 0, s.n, func(k int) bool {
		var prev replay.Entry
		if k > 0 {
			prev = w.at(k - 1)
		}
		e := w.at(k)
		return ok(k, &e, &prev)
	})
}

// atTime is the first entry at or after time t (n when none is).
func (s *stateCursor) atTime(m *Model, t time.Time) int {
	return sort.Search(s.n, func(i int) bool {
		e := s.entry(m, i)
		return !e.Time().Before(t)
	})
}

// baseReset reports a base reset in the timeline (engine.BaseReset: a
// keyframe after the first of its level sequence).
func baseReset(i int, e, prev *replay.Entry) bool {
	return engine.BaseReset(e.Src, i == 0 || prev.SLSN != e.SLSN)
}

func (s *stateCursor) jump(m *Model, i int, what string) tea.Cmd {
	if i < 0 {
		m.setMsg("no %s that way", what)
		return nil
	}
	m.msg = ""
	s.setI(m, i)
	return s.request(m)
}

func (s *stateCursor) onKey(m *Model, k tea.KeyPressMsg) tea.Cmd {
	keys := m.keys
	if s.n == 0 && !key.Matches(k, keys.NextLine, keys.PrevLine) {
		m.setMsg("no states yet")
		return nil
	}
	s.follow = key.Matches(k, keys.Last)
	switch {
	case key.Matches(k, keys.Back):
		return s.step(m, -1)
	case key.Matches(k, keys.Fwd):
		return s.step(m, 1)
	case key.Matches(k, keys.BackSec):
		i := s.atTime(m, s.ent.Time().Add(-time.Second))
		return s.jump(m, min(i, s.i-1), "earlier state")
	case key.Matches(k, keys.FwdSec):
		i := s.atTime(m, s.ent.Time().Add(time.Second))
		if i >= s.n {
			i = -1
		}
		return s.jump(m, i, "state a second later")
	case key.Matches(k, keys.PrevKey):
		return s.jump(m, s.scan(m, s.i-1, -1, func(_ int, e, _ *replay.Entry) bool { return e.Keyframe() }), "keyframe")
	case key.Matches(k, keys.NextKey):
		return s.jump(m, s.scan(m, s.i+1, 1, func(_ int, e, _ *replay.Entry) bool { return e.Keyframe() }), "keyframe")
	case key.Matches(k, keys.PrevProblem), key.Matches(k, keys.NextProblem):
		dir := 1
		if key.Matches(k, keys.PrevProblem) {
			dir = -1
		}
		return s.jump(m, s.scan(m, s.i+dir, dir, func(i int, e, prev *replay.Entry) bool {
			return e.Status != replay.OK || baseReset(i, e, prev)
		}), "incomplete dif or base reset")
	case key.Matches(k, keys.First):
		return s.jump(m, 0, "")
	case key.Matches(k, keys.Last):
		return s.jump(m, s.n-1, "")
	case key.Matches(k, keys.Frame):
		return m.openPrompt(promptFrame, fmt.Sprintf("go to frame (of level sequence %d, or SLSN:FRAME): ", s.ent.SLSN), "")
	case key.Matches(k, keys.NextLine):
		return s.switchLine(m, 1)
	case key.Matches(k, keys.PrevLine):
		return s.switchLine(m, -1)
	case key.Matches(k, keys.ToPieces):
		return m.toPieces()
	case key.Matches(k, keys.MapOnly):
		s.mapOnly = !s.mapOnly
	case key.Matches(k, keys.PanLeft):
		s.panX = s.viewX - s.playerX - 20
	case key.Matches(k, keys.PanRight):
		s.panX = s.viewX - s.playerX + 20
	case key.Matches(k, keys.PanUp):
		s.panY = s.viewY - s.playerY - 20
	case key.Matches(k, keys.PanDown):
		s.panY = s.viewY - s.playerY + 20
	case key.Matches(k, keys.PanHome):
		s.panX, s.panY = 0, 0
	case key.Matches(k, keys.MarkA):
		s.a = &markA{s.line(), s.i, s.ent}
		s.across = false
		m.setMsg("A = %s; move to B", describe(s.line(), &s.ent))
		if m.view != viewDiff {
			m.view = viewDiff
		}
		return s.request(m)
	case key.Matches(k, keys.AcrossClients):
		s.across = !s.across
		s.diffScroll = 0
		return s.request(m)
	case key.Matches(k, keys.Up):
		s.diffScroll = max(s.diffScroll-1, 0)
	case key.Matches(k, keys.Down):
		s.diffScroll++
	case key.Matches(k, keys.PageUp):
		s.diffScroll = max(s.diffScroll-10, 0)
	case key.Matches(k, keys.PageDown):
		s.diffScroll += 10
	}
	return nil
}

// switchLine shows the next or previous client, at the same frame when it
// has it.
func (s *stateCursor) switchLine(m *Model, d int) tea.Cmd {
	if len(s.lines) == 0 {
		return nil
	}
	slsn, frame := s.ent.SLSN, s.ent.N
	s.toLine(m, (s.li+d+len(s.lines))%len(s.lines))
	i := m.e.Find(s.line(), slsn, frame, false)
	if i < 0 {
		i = 0
	}
	s.setI(m, i)
	return s.request(m)
}

// gotoFrame goes to a frame of the current level sequence, or to
// SLSN:FRAME.
func (s *stateCursor) gotoFrame(m *Model, v string) tea.Cmd {
	slsn := s.ent.SLSN
	fs := v
	if a, b, ok := strings.Cut(v, ":"); ok {
		n, err := strconv.Atoi(a)
		if err != nil {
			m.setErr(fmt.Errorf("%q: level sequence is not a number", v))
			return nil
		}
		slsn, fs = n, b
	}
	n, err := strconv.Atoi(fs)
	if err != nil || n < 0 {
		m.setErr(fmt.Errorf("%q is not a frame number", v))
		return nil
	}
	i := m.e.Find(s.line(), slsn, int32(n), false)
	if i < 0 {
		m.setErr(fmt.Errorf("no state of level sequence %d at or before frame %d", slsn, n))
		return nil
	}
	return s.jump(m, i, "")
}

// clickBar moves to the place of the scrubber clicked.
func (s *stateCursor) clickBar(m *Model, x int) tea.Cmd {
	w := m.layout().body.w
	if s.n == 0 || w < 2 {
		return nil
	}
	return s.jump(m, x*(s.n-1)/(w-1), "")
}

// want is what the current view needs loaded.
func (s *stateCursor) want(m *Model) (stateKey, bool) {
	if (m.view != viewState && m.view != viewDiff) || s.n == 0 {
		return stateKey{}, false
	}
	k := stateKey{line: s.line(), i: s.i}
	if m.view == viewDiff {
		k.diff = true
		k.across = s.across
		if s.a != nil && !s.across {
			k.a, k.hasA = *s.a, true
		}
	}
	return k, true
}

// request loads what the view needs, unless it is loaded or loading.
func (s *stateCursor) request(m *Model) tea.Cmd {
	k, ok := s.want(m)
	if !ok || k == s.have && s.loaded != nil {
		return nil
	}
	if s.inflight {
		s.pending = true
		return nil
	}
	s.inflight, s.pending = true, false
	e, user := m.e, m.opts.Schema
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = stateMsg{key: k, err: recovered(fmt.Sprintf("rebuilding state %d of %s failed", k.i, k.line), r)}
			}
		}()
		return load(e, user, k)
	}
}

func (s *stateCursor) onState(m *Model, msg stateMsg) tea.Cmd {
	s.inflight = false
	s.have, s.loaded = msg.key, &msg
	return s.request(m)
}

// describe names a state in one line.
func describe(l reassemble.Chain, e *replay.Entry) string {
	return fmt.Sprintf("%s (p%d) slsn %d frame %d", l.Client, e.Player, e.SLSN, e.N)
}

// header is the two lines every scrubbing view starts with: where it is,
// and the scrubber.
func (s *stateCursor) header(m *Model, w int) []string {
	if s.n == 0 {
		msg := "no states rebuilt yet"
		if p := m.e.Progress(); !p.Done && p.Difs > 0 {
			msg = fmt.Sprintf("no states rebuilt yet: rebuilding, %d of %d difs done", p.Rebuilt, p.Difs)
		}
		if m.done {
			msg = "this capture has no rebuilt states (no state difs, or none complete)"
		}
		return []string{m.st.dim.Render(msg), ""}
	}
	e := &s.ent
	info := fmt.Sprintf("%s (p%d) · state %d/%d · slsn %d frame %d · dif %d→%d %s %dB %d/%d pieces",
		s.line().Client, e.Player, s.i+1, s.n, e.SLSN, e.N, e.Src, e.N, e.Status, e.Compressed, e.Pieces, e.Count)
	if lp := m.lineProgress(s.line()); lp != "" {
		info = fmt.Sprintf("client %d: %s · %s", s.line().Conv, lp, info)
	}
	if e.Keyframe() {
		info += " · keyframe"
	}
	if !e.Acked() {
		info += " · not acked"
	}
	if l := m.layout(); !l.wide && (m.view == viewState || m.view == viewDiff) {
		info = "M: map/text · " + info
	}
	if !m.first.IsZero() {
		info += fmt.Sprintf(" · t+%.3fs", e.Time().Sub(m.first).Seconds())
	}
	bar := []rune(strings.Repeat("─", max(w, 1)))
	if w >= 2 {
		bar[0], bar[w-1] = '├', '┤'
		if s.a != nil && s.a.line == s.line() && s.n > 1 {
			bar[s.a.i*(w-1)/(s.n-1)] = 'A'
		}
		c := 0
		if s.n > 1 {
			c = s.i * (w - 1) / (s.n - 1)
		}
		bar[c] = '●'
	}
	return []string{m.st.title.Render(fit(info, w)), string(bar)}
}
