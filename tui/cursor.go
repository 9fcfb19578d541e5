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
	loadedAt          time.Time // when it came
	loadedRebuilt     int       // the states rebuilt when it was asked for

	a      *markA // diff: state A
	across bool   // diff: every client at this frame
	follow bool   // the last state was asked for: stay at the end as states come
	// await is the packet whose state is shown once it is rebuilt (nil:
	// none awaited): a move of the scrubber or another line shown forgets it.
	await *awaitLink
	buf   []replay.Entry
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

// toLine shows line li (its states as far as they are rebuilt), and no
// longer awaits a state.
func (s *stateCursor) toLine(c *env, li int) {
	s.forget(c)
	s.li = li
	s.n = c.e.EntryCount(s.line())
}

// refreshLines picks up new lines and states of a running engine.
func (s *stateCursor) refreshLines(c *env) {
	s.lines = c.e.Lines()
	if s.li >= len(s.lines) {
		s.li = 0
	}
	if len(s.lines) == 0 {
		s.n = 0
		return
	}
	old := s.n
	s.n = c.e.EntryCount(s.line())
	if s.follow && old > 0 && s.i == old-1 && !c.done {
		s.i = s.n - 1 // G was pressed: follow the growing timeline
	}
	s.setI(c, s.i)
	s.awaited(c)
}

// entry returns entry i of the shown line.
func (s *stateCursor) entry(c *env, i int) replay.Entry {
	s.buf = c.e.Entries(s.buf[:0], s.line(), i, i+1)
	if len(s.buf) == 0 {
		return replay.Entry{}
	}
	return s.buf[0]
}

func (s *stateCursor) setI(c *env, i int) {
	if s.n == 0 {
		s.i = 0
		s.ent = replay.Entry{}
		return
	}
	s.i = clamp(i, 0, s.n-1)
	s.ent = s.entry(c, s.i)
}

// forget no longer awaits a state (the user moved on), nor says it does.
func (s *stateCursor) forget(c *env) {
	if a := s.await; a != nil {
		s.await = nil
		if c.msg == a.msg {
			c.msg = ""
		}
	}
}

// step moves by d states.
func (s *stateCursor) step(c *env, d int) tea.Cmd {
	s.forget(c)
	s.setI(c, s.i+d)
	return s.request(c)
}

// scan returns the first entry from i on in direction dir for which ok
// holds (given the entry before it, zero for the first), or -1.
func (s *stateCursor) scan(c *env, i, dir int, ok func(i int, e, prev *replay.Entry) bool) int {
	w := entryWindow{e: c.e, line: s.line(), dir: dir}
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
func (s *stateCursor) atTime(c *env, t time.Time) int {
	return sort.Search(s.n, func(i int) bool {
		e := s.entry(c, i)
		return !e.Time().Before(t)
	})
}

// baseReset reports a base reset in the timeline (engine.BaseReset: a
// keyframe after the first of its level sequence).
func baseReset(i int, e, prev *replay.Entry) bool {
	return engine.BaseReset(e.Src, i == 0 || prev.SLSN != e.SLSN)
}

func (s *stateCursor) jump(c *env, i int, what string) tea.Cmd {
	if i < 0 {
		c.setMsg("no %s that way", what)
		return nil
	}
	c.msg = ""
	s.forget(c)
	s.setI(c, i)
	return s.request(c)
}

// onKey handles the scrubber's keys, which the timeline, state and diff
// views share; it says whether the key was one of them (with no state to
// move to, it says so).
func (s *stateCursor) onKey(c *env, k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := &c.keys
	if s.n == 0 && key.Matches(k, keys.Back, keys.Fwd, keys.BackSec, keys.FwdSec, keys.PrevKey, keys.NextKey,
		keys.PrevProblem, keys.NextProblem, keys.First, keys.Last, keys.Frame, keys.ToPieces, keys.MarkA) {
		c.setMsg("no states yet")
		return nil, true
	}
	s.follow = key.Matches(k, keys.Last)
	switch {
	case key.Matches(k, keys.Back):
		return s.step(c, -1), true
	case key.Matches(k, keys.Fwd):
		return s.step(c, 1), true
	case key.Matches(k, keys.BackSec):
		i := s.atTime(c, s.ent.Time().Add(-time.Second))
		return s.jump(c, min(i, s.i-1), "earlier state"), true
	case key.Matches(k, keys.FwdSec):
		i := s.atTime(c, s.ent.Time().Add(time.Second))
		if i >= s.n {
			i = -1
		}
		return s.jump(c, i, "state a second later"), true
	case key.Matches(k, keys.PrevKey, keys.NextKey):
		dir := 1
		if key.Matches(k, keys.PrevKey) {
			dir = -1
		}
		return s.jump(c, s.scan(c, s.i+dir, dir, func(_ int, e, _ *replay.Entry) bool { return e.Keyframe() }), "keyframe"), true
	case key.Matches(k, keys.PrevProblem, keys.NextProblem):
		dir := 1
		if key.Matches(k, keys.PrevProblem) {
			dir = -1
		}
		return s.jump(c, s.scan(c, s.i+dir, dir, func(i int, e, prev *replay.Entry) bool {
			return e.Status != replay.OK || baseReset(i, e, prev)
		}), "incomplete dif or base reset"), true
	case key.Matches(k, keys.First):
		return s.jump(c, 0, ""), true
	case key.Matches(k, keys.Last):
		return s.jump(c, s.n-1, ""), true
	case key.Matches(k, keys.Frame):
		c.nav.openPrompt(promptFrame, fmt.Sprintf("go to frame (of level sequence %d, or SLSN:FRAME): ", s.ent.SLSN), "")
		return nil, true
	case key.Matches(k, keys.NextLine):
		return s.switchLine(c, 1), true
	case key.Matches(k, keys.PrevLine):
		return s.switchLine(c, -1), true
	case key.Matches(k, keys.ToPieces):
		return s.toPieces(c), true
	}
	return nil, false
}

// setA marks the state shown as A and shows the diff from it.
func (s *stateCursor) setA(c *env) tea.Cmd {
	s.a = &markA{s.line(), s.i, s.ent}
	s.across = false
	c.setMsg("A = %s; move to B", describe(s.line(), &s.ent))
	return c.nav.show(viewDiff)
}

// toggleAcross compares every client at the frame shown, or A with B
// again.
func (s *stateCursor) toggleAcross(c *env) tea.Cmd {
	s.across = !s.across
	return s.request(c)
}

// clickBar moves to the place of the scrubber clicked.
func (s *stateCursor) clickBar(c *env, x int) tea.Cmd {
	w := c.lay.body.w
	if s.n == 0 || w < 2 {
		return nil
	}
	return s.jump(c, x*(s.n-1)/(w-1), "")
}

// onMouse moves the cursor a state a turn of the wheel, or to the place of
// the scrubber clicked.
func (s *stateCursor) onMouse(c *env, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		return s.step(c, wheelStep(msg, 1))
	case tea.MouseClickMsg:
		if msg.Y == c.lay.body.y+1 {
			return s.clickBar(c, msg.X-c.lay.body.x)
		}
	}
	return nil
}

// switchLine shows the next or previous client, at the same frame when it
// has it.
func (s *stateCursor) switchLine(c *env, d int) tea.Cmd {
	if len(s.lines) == 0 {
		return nil
	}
	slsn, frame := s.ent.SLSN, s.ent.N
	s.toLine(c, (s.li+d+len(s.lines))%len(s.lines))
	i := c.e.Find(s.line(), slsn, frame, false)
	if i < 0 {
		i = 0
	}
	s.setI(c, i)
	return s.request(c)
}

// gotoFrame goes to a frame of the current level sequence, or to
// SLSN:FRAME.
func (s *stateCursor) gotoFrame(c *env, v string) tea.Cmd {
	slsn := s.ent.SLSN
	fs := v
	if a, b, ok := strings.Cut(v, ":"); ok {
		n, err := strconv.Atoi(a)
		if err != nil {
			c.setErr(fmt.Errorf("%q: level sequence is not a number", v))
			return nil
		}
		slsn, fs = n, b
	}
	n, err := strconv.Atoi(fs)
	if err != nil || n < 0 {
		c.setErr(fmt.Errorf("%q is not a frame number", v))
		return nil
	}
	s.forget(c)
	return s.toFrame(c, slsn, n)
}

// toFrame goes to the newest state at or before frame n of level
// sequence slsn; while the rebuild has not reached past the frame, to the
// newest so far, and on to the frame's as the states come (see awaited).
func (s *stateCursor) toFrame(c *env, slsn, n int) tea.Cmd {
	settled := c.e.Settled(s.line(), slsn, int32(n), false)
	i := c.e.Find(s.line(), slsn, int32(n), false)
	if i < 0 && settled {
		c.setErr(fmt.Errorf("no state of level sequence %d at or before frame %d", slsn, n))
		return nil
	}
	var cmd tea.Cmd
	if i >= 0 {
		cmd = s.jump(c, i, "")
	}
	switch {
	case !settled:
		msg := fmt.Sprintf("frame %d of level sequence %d shows here once client %d is rebuilt to it", n, slsn, s.line().Conv)
		s.await = &awaitLink{pos: -1, line: s.line(), slsn: slsn, frame: n, msg: msg}
		c.setMsg("%s", msg)
	case int(s.ent.N) != n:
		c.setMsg("no state of frame %d: the newest before it, frame %d", n, s.ent.N)
	}
	return cmd
}

// want is what the current view needs loaded.
func (s *stateCursor) want(c *env) (stateKey, bool) {
	if (c.view != viewState && c.view != viewDiff) || s.n == 0 {
		return stateKey{}, false
	}
	k := stateKey{line: s.line(), i: s.i}
	if c.view == viewDiff {
		k.diff = true
		k.across = s.across
		if s.a != nil && !s.across {
			k.a, k.hasA = *s.a, true
		}
	}
	return k, true
}

// request loads what the view needs, unless it is loaded or loading.
func (s *stateCursor) request(c *env) tea.Cmd {
	k, ok := s.want(c)
	if !ok || k == s.have && s.loaded != nil {
		return nil
	}
	if s.inflight {
		s.pending = true
		return nil
	}
	s.inflight, s.pending = true, false
	e, user := c.e, c.schema
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = stateMsg{key: k, err: recovered(fmt.Sprintf("rebuilding state %d of %s failed", k.i, k.line), r)}
			}
		}()
		return load(e, user, k)
	}
}

// reloadPending has what is shown loaded again when it depends on states
// the rebuild had not reached (see stateMsg.pending) and the rebuild has
// gone on since, at most every pendingReload, and once more when the
// rebuild is over.
func (s *stateCursor) reloadPending(c *env) {
	ld := s.loaded
	if ld == nil || !ld.pending || s.inflight {
		return
	}
	// Once the rebuild is over, at once (no refresh comes after it).
	if c.done || time.Since(s.loadedAt) >= pendingReload && c.e.Progress().Rebuilt != s.loadedRebuilt {
		s.have = stateKey{} // request loads it again; it is shown meanwhile
	}
}

// pendingReload is how often what depends on states not rebuilt yet is
// loaded again.
const pendingReload = time.Second

func (s *stateCursor) onState(c *env, msg stateMsg) tea.Cmd {
	s.inflight = false
	s.have, s.loaded = msg.key, &msg
	s.loadedAt, s.loadedRebuilt = time.Now(), msg.rebuilt
	s.reloadPending(c)
	return s.request(c)
}

// shared reports whether another line has the shown line's client
// endpoint (the same game captured twice, a port used again).
func (s *stateCursor) shared() bool {
	l := s.line()
	for _, o := range s.lines {
		if o != l && o.Client == l.Client {
			return true
		}
	}
	return false
}

// describe names a state in one line.
func describe(l reassemble.Chain, e *replay.Entry) string {
	return fmt.Sprintf("%s (p%d) slsn %d frame %d", l.Client, e.Player, e.SLSN, e.N)
}

// header is the two lines every scrubbing view starts with: where it is,
// and the scrubber.
func (s *stateCursor) header(c *env, w int) []string {
	if a := s.await; s.awaitingOther() {
		return []string{c.st.dim.Render(fit(fmt.Sprintf("client %d (%s): no state rebuilt yet (%s); the state of packet %d shows here when it is",
			a.line.Conv, a.line.Client, c.lineProgress(a.line), a.n), w)), ""}
	}
	if s.n == 0 {
		msg := "no states rebuilt yet"
		if p := c.e.Progress(); !p.Done && p.Difs > 0 {
			msg = fmt.Sprintf("no states rebuilt yet: rebuilding, %d of %d difs done", p.Rebuilt, p.Difs)
		}
		if l := s.line(); l.Conv > 0 && !c.done {
			msg = fmt.Sprintf("client %d (%s): no state rebuilt yet (%s)", l.Conv, l.Client, c.lineProgress(l))
		}
		if c.done {
			msg = "this capture has no rebuilt states (no state difs, or none complete)"
		}
		return []string{c.st.dim.Render(msg), ""}
	}
	e := &s.ent
	info := fmt.Sprintf("%s (p%d) · state %d/%d · slsn %d frame %d · dif %d→%d %s %dB %d/%d pieces",
		s.line().Client, e.Player, s.i+1, s.n, e.SLSN, e.N, e.Src, e.N, e.Status, e.Compressed, e.Pieces, e.Count)
	if lp := c.lineProgress(s.line()); lp != "" {
		info = fmt.Sprintf("client %d: %s · %s", s.line().Conv, lp, info)
	} else if s.shared() {
		info = fmt.Sprintf("client %d · %s", s.line().Conv, info) // its endpoint does not say which
	}
	if e.Keyframe() {
		info += " · keyframe"
	}
	if !e.Acked() {
		if c.e.Settled(s.line(), e.SLSN, e.N, true) {
			info += " · not acked"
		} else {
			info += " · no ack in yet" // the rebuild has not reached its ack
		}
	}
	if l := c.lay; !l.wide && (c.view == viewState || c.view == viewDiff) {
		info = "M: map/text · " + info
	}
	if !c.first.IsZero() {
		info += fmt.Sprintf(" · t+%.3fs", e.Time().Sub(c.first).Seconds())
	}
	bar := []rune(strings.Repeat("─", max(w, 1)))
	if w >= 2 {
		bar[0], bar[w-1] = '├', '┤'
		if s.a != nil && s.a.line == s.line() && s.n > 1 {
			bar[s.a.i*(w-1)/(s.n-1)] = 'A'
		}
		col := 0
		if s.n > 1 {
			col = s.i * (w - 1) / (s.n - 1)
		}
		bar[col] = '●'
	}
	return []string{c.st.title.Render(fit(info, w)), string(bar)}
}
