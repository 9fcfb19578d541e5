package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
)

// healthModel shows the per-second health of one conversation as charts,
// with a cursor on one second.
type healthModel struct {
	ci  int // the conversation shown (of env.health)
	cur int // the second under the cursor; -1: none chosen yet
}

// healthLabel is the width of the charts' labels.
const healthLabel = 18

// series is one column of the health figures.
type series struct {
	name string
	get  func(h *engine.ClientHealth) []float64
}

func ints(f func(s *engine.Second) int) func(h *engine.ClientHealth) []float64 {
	return func(h *engine.ClientHealth) []float64 {
		out := make([]float64, len(h.Seconds))
		for i, s := range h.Seconds {
			out[i] = float64(f(s))
		}
		return out
	}
}

func opt(f func(s *engine.Second) *float64) func(h *engine.ClientHealth) []float64 {
	return func(h *engine.ClientHealth) []float64 {
		out := make([]float64, len(h.Seconds))
		for i, s := range h.Seconds {
			out[i] = math.NaN()
			if p := f(s); p != nil {
				out[i] = *p
			}
		}
		return out
	}
}

func optInt(f func(s *engine.Second) *int) func(h *engine.ClientHealth) []float64 {
	return opt(func(s *engine.Second) *float64 {
		if p := f(s); p != nil {
			v := float64(*p)
			return &v
		}
		return nil
	})
}

// soFar are the series counted from the rebuilt states: so-far figures
// while the rebuild behind the fast pass has states of the client to come
// (engine.ClientHealth.Partial).
var soFar = map[string]bool{"late inputs": true, "max step px": true, "position jumps": true}

// timelineSeries are the sparklines of the timeline.
var timelineSeries = []series{
	{"dif bytes/s", ints(func(s *engine.Second) int { return s.DifBytes })},
	{"late inputs", ints(func(s *engine.Second) int { return s.LateInputs })},
	{"base resets", ints(func(s *engine.Second) int { return s.BaseResets })},
	{"incomplete difs", ints(func(s *engine.Second) int { return s.Incomplete })},
	{"ack latency ms", opt(func(s *engine.Second) *float64 { return s.AckMs })},
}

// healthSeries are the charts of the health view: every figure the engine
// keeps per second.
var healthSeries = []series{
	{"inputs", ints(func(s *engine.Second) int { return s.Inputs })},
	{"late inputs", ints(func(s *engine.Second) int { return s.LateInputs })},
	{"difs", ints(func(s *engine.Second) int { return s.Difs })},
	{"dif bytes", ints(func(s *engine.Second) int { return s.DifBytes })},
	{"base resets", ints(func(s *engine.Second) int { return s.BaseResets })},
	{"incomplete difs", ints(func(s *engine.Second) int { return s.Incomplete })},
	{"acks", ints(func(s *engine.Second) int { return s.Acks })},
	{"ack latency ms", opt(func(s *engine.Second) *float64 { return s.AckMs })},
	{"ping→pong ms", opt(func(s *engine.Second) *float64 { return s.PingPongMs })},
	{"pong→pang ms (RTT)", opt(func(s *engine.Second) *float64 { return s.PongPangMs })},
	{"chase fps", opt(func(s *engine.Second) *float64 { return s.ChaseFPS })},
	{"dsync ms", opt(func(s *engine.Second) *float64 { return s.DsyncMs })},
	{"local correction", opt(func(s *engine.Second) *float64 { return s.LocalCorrection })},
	{"remote correction", opt(func(s *engine.Second) *float64 { return s.RemoteCorrection })},
	{"cpu %", opt(func(s *engine.Second) *float64 { return s.CPU })},
	{"dif corrections", optInt(func(s *engine.Second) *int { return s.DifCorrections })},
	{"stdf late", optInt(func(s *engine.Second) *int { return s.StdfLate })},
	{"frames skipped", optInt(func(s *engine.Second) *int { return s.FramesSkipped })},
	{"max step px", opt(func(s *engine.Second) *float64 { return s.MaxStep })},
	{"position jumps", ints(func(s *engine.Second) int { return s.Jumps })},
}

// refresh keeps the conversation shown among the figures refreshed.
func (h *healthModel) refresh(c *env) {
	if h.ci >= len(c.health) {
		h.ci = 0
	}
}

// healthOf is the health of conversation conv, nil when there is none.
func healthOf(hs []*engine.ClientHealth, conv int) *engine.ClientHealth {
	for _, c := range hs {
		if c.Conv == conv {
			return c
		}
	}
	return nil
}

func (h *healthModel) shown(c *env) *engine.ClientHealth {
	if h.ci < len(c.health) {
		return c.health[h.ci]
	}
	return nil
}

func (h *healthModel) move(c *env, d int) {
	ch := h.shown(c)
	if ch == nil || len(ch.Seconds) == 0 {
		return
	}
	if h.cur < 0 {
		// The first step puts the cursor on the first second (back: the
		// last); g and G on the first and the last.
		h.cur = 0
		if d < 0 && d > -1<<30 || d >= 1<<30 {
			h.cur = len(ch.Seconds) - 1
		}
		return
	}
	h.cur = clamp(h.cur+d, 0, len(ch.Seconds)-1)
}

// click puts the cursor on the second under column x of the charts.
func (h *healthModel) click(c *env, x int) {
	ch := h.shown(c)
	w := h.chartW(c)
	if ch == nil || x < 0 || x >= w || len(ch.Seconds) == 0 {
		return
	}
	h.cur = clamp(x*len(ch.Seconds)/w, 0, len(ch.Seconds)-1)
}

func (h *healthModel) chartW(c *env) int { return max(c.lay.body.w-healthLabel-10, 10) }

func (h *healthModel) update(c *env, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		h.move(c, wheelStep(msg, 1))
	case tea.MouseClickMsg:
		if b := c.lay.body; b.contains(msg.X, msg.Y) {
			h.click(c, msg.X-b.x-healthLabel)
		}
	case tea.KeyPressMsg:
		return h.onKey(c, msg)
	}
	return nil
}

func (h *healthModel) onKey(c *env, k tea.KeyPressMsg) tea.Cmd {
	keys := &c.keys
	switch {
	case key.Matches(k, keys.SecBack):
		h.move(c, -1)
	case key.Matches(k, keys.SecFwd):
		h.move(c, 1)
	case key.Matches(k, keys.SecFirst):
		h.move(c, -1<<30)
	case key.Matches(k, keys.SecLast):
		h.move(c, 1<<30)
	case key.Matches(k, keys.NextLine):
		if len(c.health) > 0 {
			h.ci = (h.ci + 1) % len(c.health)
		}
	case key.Matches(k, keys.PrevLine):
		if len(c.health) > 0 {
			h.ci = (h.ci + len(c.health) - 1) % len(c.health)
		}
	case key.Matches(k, keys.JumpTimeline):
		return h.jump(c)
	}
	return nil
}

func (h *healthModel) fit(*env) {}

func (h *healthModel) help(k *keyMap) []group { return []group{k.healthKeys()} }

// jump shows the state of the second under the cursor in the timeline.
func (h *healthModel) jump(c *env) tea.Cmd {
	ch := h.shown(c)
	if ch == nil || h.cur < 0 || h.cur >= len(ch.Seconds) {
		c.setMsg("move the cursor (←→) to a second first")
		return nil
	}
	s := c.cursor
	li := s.lineOf(ch.Conv)
	if li < 0 {
		c.setMsg("conversation %d has no rebuilt states", ch.Conv)
		return nil
	}
	if c.first.IsZero() {
		return nil
	}
	s.toLine(c, li)
	t := c.first.Add(time.Duration(ch.Seconds[h.cur].T) * time.Second)
	i := s.atTime(c, t)
	if i >= s.n {
		i = s.n - 1
	}
	s.setI(c, i)
	c.msg = ""
	return c.nav.show(viewTimeline)
}

func (h *healthModel) render(env *env) []string {
	r := env.lay.body
	c := h.shown(env)
	if c == nil {
		return []string{env.st.dim.Render("no health figures yet (they come from rebuilt states)")}
	}
	var out []string
	items := make([]string, len(env.health))
	for i, x := range env.health {
		items[i] = fmt.Sprintf(" %d %s ", x.Conv, x.Client)
		if x.Player != nil {
			items[i] = fmt.Sprintf(" %d %s p%d ", x.Conv, x.Client, *x.Player)
		}
	}
	out = append(out, windowList(env, "conversations (c/C):", items, h.ci, env.lay.body.w))
	sum := c.Summary
	late := fmt.Sprintf("%d late inputs", sum.LateInputs)
	if c.Partial {
		// Counted from the states, which are not all in yet.
		late = fmt.Sprintf("%d late inputs so far (%d states to come)", sum.LateInputs, c.PendingStates)
	}
	v, _ := decode.ParseVersion(c.Era)
	out = append(out, env.st.dim.Render(fmt.Sprintf("%s · %d s · %.1f inputs/s · %s · %d difs (%.1f/s, %.0f B mean) · %d base resets · %d incomplete · %d acks",
		v.Label(), sum.Seconds, sum.InputsPerS, late, sum.Difs, sum.DifsPerS, sum.MeanDifBytes, sum.BaseResets, sum.Incomplete, sum.Acks)))
	if c.Unrecognised != "" {
		out = append(out, env.st.warn.Render(fit(fmt.Sprintf("conversation %d is %s", c.Conv, engine.NoVersion(c.Unrecognised)), r.w)))
	}
	cw := h.chartW(env)
	marker := []rune(strings.Repeat(" ", cw))
	where := "←→ move the cursor, enter shows that second in the timeline"
	if h.cur >= 0 && h.cur < len(c.Seconds) {
		if col := column(h.cur, len(c.Seconds), cw); col >= 0 && col < cw {
			marker[col] = '▼'
		}
		t := c.Seconds[h.cur].T
		where = fmt.Sprintf("the second from t=%d s to t=%d s of the capture · enter: show it in the timeline", t, t+1)
	}
	out = append(out, fit(where, healthLabel+cw+10))
	out = append(out, fit("", healthLabel)+string(marker))
	if row, ok := findingMarkers(env, c, cw); ok {
		out = append(out, row)
	}
	// The series with any value, as many rows each as fit.
	type shown struct {
		s    series
		vals []float64
	}
	var list []shown
	for _, s := range healthSeries {
		v := s.get(c)
		if maxOf(v) > 0 {
			list = append(list, shown{s, v})
		}
	}
	room := r.h - len(out)
	rows := 1
	if len(list) > 0 {
		rows = clamp(room/len(list), 1, 4)
	}
	for _, x := range list {
		if len(out)+rows > r.h {
			break
		}
		cur := "-"
		if h.cur >= 0 && h.cur < len(x.vals) && !math.IsNaN(x.vals[h.cur]) {
			cur = gameview.Num(math.Round(x.vals[h.cur]*10) / 10)
		}
		for i, row := range chart(x.vals, cw, rows) {
			label, val := "", ""
			if i == 0 {
				label = x.s.name
			}
			if i == rows-1 {
				val = cur
			}
			if i == 0 && rows > 1 {
				val = env.st.dim.Render("≤" + gameview.Num(math.Round(maxOf(x.vals))))
			}
			if i == 0 && c.Partial && soFar[x.s.name] {
				val += env.st.dim.Render(" so far")
			}
			out = append(out, fit(label, healthLabel)+row+" "+val)
		}
	}
	return out
}
