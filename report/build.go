package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// maxProblems bounds the capture's problems listed one by one.
const maxProblems = 100

// Data returns the report's data from a finished engine configured by
// Configure: the summary, every conversation with its replay and health,
// the levels and the findings.
func (c *Collector) Data(e *engine.Engine) *Data {
	st := e.Stats()
	d := &Data{Version: Version, Generator: "pmdump", Levels: []Level{}, Findings: []Finding{}, Conversations: []Conversation{}}
	var first time.Time
	if st.First != nil {
		first = *st.First
	}
	rel := func(t time.Time) float64 {
		if first.IsZero() || t.IsZero() {
			return 0
		}
		return t.Sub(first).Seconds()
	}
	d.Summary = summary(st)
	for _, f := range append(e.Findings(), c.Extra...) {
		d.Findings = append(d.Findings, findingOf(f, rel))
	}
	full := c.FullDetail
	if full <= 0 {
		full = FullDetail
	}
	thin := time.Duration(st.Duration*float64(time.Second)) > full
	if thin {
		d.Summary.Thinned = fmt.Sprintf("capture over %v: one state every %v per client, every state within %v of a finding; things every %v",
			full, ThinEvery, FindingMargin, ThinSnapEvery)
	}
	health := map[int]*engine.ClientHealth{}
	for _, h := range st.Health {
		health[h.Conv] = h
	}
	lines := map[int]int{} // conversation → its position in e.Lines
	ls := e.Lines()
	for i, l := range ls {
		lines[l.Conv] = i
	}
	levelIdx := map[string]int{}
	var entries []replay.Entry
	for _, cv := range st.Convs {
		if cv.ID == 0 {
			continue // the overflow of clients past the tracker's bound
		}
		out := Conversation{
			ID: cv.ID, Client: cv.Client, Server: cv.Server, Player: cv.Player, Era: cv.Era,
			Hostname: cv.Hostname, Color: cv.Color, Colors: map[string]int{}, Levels: map[string]int{},
		}
		out.Replay.Players = map[string]Track{}
		out.Things = Things{I: []int{}, Enemies: [][]int{}, Items: [][]int{}, Lifts: [][]int{}, Shots: [][]int{}}
		if h := health[cv.ID]; h != nil {
			out.Health = healthOf(h)
		} else {
			out.Health = healthOf(&engine.ClientHealth{})
		}
		if i, ok := lines[cv.ID]; ok {
			l := ls[i]
			entries = e.Entries(entries[:0], l, 0, -1)
			c.mu.Lock()
			sch := c.schemas[l]
			levels := c.replay(&out, entries, sch, rel, thin, d.Findings)
			c.mu.Unlock()
			if sch != nil {
				out.Schema = sch.Name
			}
			for slsn, lv := range levels {
				k, ok := levelIdx[lv.Tiles]
				if !ok {
					k = len(d.Levels)
					levelIdx[lv.Tiles] = k
					d.Levels = append(d.Levels, *lv)
				}
				out.Levels[strconv.Itoa(slsn)] = k
			}
		}
		d.Conversations = append(d.Conversations, out)
	}
	return d
}

// replay fills a conversation's replay and things from its timeline
// entries and the samples, and returns the level of each level sequence;
// c.mu is held.
func (c *Collector) replay(b *Conversation, es []replay.Entry, sch *schema.Schema, rel func(time.Time) float64, thin bool, fs []Finding) map[int]*Level {
	levels := map[int]*Level{}

	windows := detailWindows(fs, b.ID)
	inWindow := func(t float64) bool {
		i := sort.Search(len(windows), func(i int) bool { return windows[i][1] >= t })
		return i < len(windows) && windows[i][0] <= t
	}
	var kept []*sample
	r := &b.Replay
	lastMark := math.Inf(-1)
	nextSnap := math.Inf(-1)
	var items [][]int // every snapshot's items, before eliding
	for i := range es {
		en := &es[i]
		if en.Status != replay.OK {
			continue
		}
		b.States++
		if en.Acked() {
			b.Acked++
		}
		sm := c.get(int(en.Seq))
		if !sm.ok { // a state no schema names players in
			continue
		}
		t := rel(en.Time())
		if sm.snap != nil && sm.snap.level != nil {
			if _, ok := levels[en.SLSN]; !ok {
				levels[en.SLSN] = sm.snap.level
			}
		}
		if en.Acked() {
			keep := !thin
			if thin {
				mark := math.Floor(t / ThinEvery.Seconds())
				if mark > lastMark || inWindow(t) {
					keep = true
					lastMark = mark
				}
			}
			if keep {
				r.SLSN = append(r.SLSN, en.SLSN)
				r.Frame = append(r.Frame, en.Frame.N)
				r.T = append(r.T, t)
				kept = append(kept, sm)
			}
		}
		if sm.snap == nil || len(kept) == 0 {
			continue
		}
		if thin && t < nextSnap {
			continue
		}
		nextSnap = t + ThinSnapEvery.Seconds()
		k := len(kept) - 1
		th := &b.Things
		if n := len(th.I); n > 0 && th.I[n-1] == k { // one snapshot per entry: the newest
			th.I, th.Enemies, items, th.Lifts, th.Shots = th.I[:n-1], th.Enemies[:n-1], items[:n-1], th.Lifts[:n-1], th.Shots[:n-1]
		}
		th.I = append(th.I, k)
		th.Enemies = append(th.Enemies, nonNil(sm.snap.enemies))
		items = append(items, nonNil(sm.snap.items))
		th.Lifts = append(th.Lifts, nonNil(sm.snap.lifts))
		th.Shots = append(th.Shots, nonNil(sm.snap.shots))
		for p, col := range sm.snap.colors {
			b.Colors[strconv.Itoa(p)] = col
		}
	}
	b.Things.Items = make([][]int, len(items))
	for k, it := range items {
		if k == 0 || !slices.Equal(it, items[k-1]) {
			b.Things.Items[k] = it
		}
	}
	for p := 0; p < MaxPlayers; p++ {
		var any bool
		for _, sm := range kept {
			if sm.active&(1<<p) != 0 {
				any = true
				break
			}
		}
		if !any {
			continue
		}
		tr := Track{X: Coords{V: make([]float64, len(kept))}, Y: Coords{V: make([]float64, len(kept))}}
		for k, sm := range kept {
			switch {
			case sm.active&(1<<p) == 0:
				tr.X.V[k], tr.Y.V[k] = math.NaN(), math.NaN()
			case sm.wide != nil:
				tr.X.V[k], tr.Y.V[k] = sm.wide[2*p], sm.wide[2*p+1]
			default:
				tr.X.V[k], tr.Y.V[k] = float64(sm.xy[2*p]), float64(sm.xy[2*p+1])
			}
		}
		r.Players[strconv.Itoa(p)] = tr
	}
	if r.SLSN == nil {
		r.SLSN, r.Frame, r.T = []int{}, []int32{}, Seconds{}
	}
	return levels
}

// detailWindows are the times (seconds) a thinned replay of conversation
// conv keeps at full detail: each finding of that conversation or of the
// whole capture, FindingMargin before and after (at most FindingSpan of a
// long finding), the most severe first, until MaxFindingDetail; sorted and
// merged.
func detailWindows(fs []Finding, conv int) [][2]float64 {
	var mine []Finding
	for _, f := range fs {
		if f.Conv == 0 || f.Conv == conv {
			mine = append(mine, f)
		}
	}
	sev := map[string]int{"error": 2, "warning": 1}
	sort.SliceStable(mine, func(i, j int) bool {
		if sev[mine[i].Severity] != sev[mine[j].Severity] {
			return sev[mine[i].Severity] > sev[mine[j].Severity]
		}
		return mine[i].Start < mine[j].Start
	})
	margin, budget := FindingMargin.Seconds(), MaxFindingDetail.Seconds()
	var ws [][2]float64
	for _, f := range mine {
		end := min(f.End, f.Start+FindingSpan.Seconds())
		w := [2]float64{f.Start - margin, end + margin}
		if budget -= w[1] - w[0]; budget < 0 {
			break
		}
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i][0] < ws[j][0] })
	merged := ws[:0]
	for _, w := range ws {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

func nonNil(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

// findingOf is a finding as the page shows it.
func findingOf(f engine.Finding, rel func(time.Time) float64) Finding {
	out := Finding{
		Kind: f.Kind, Severity: f.Severity.String(), Start: rel(f.Start), End: rel(f.End),
		Conv: f.Conv, Player: f.Player, Summary: f.Summary, Figures: f.Figures,
	}
	if out.End < out.Start {
		out.End = out.Start
	}
	if f.Client.IsValid() {
		out.Client = f.Client.String()
	}
	return out
}

// summary is the capture's summary from the engine's figures.
func summary(st engine.Stats) Summary {
	s := Summary{
		Inputs: st.Inputs, First: st.First, Duration: st.Duration, Eras: map[string]int{},
		Packets: st.Game.Packets + st.Malformed.Packets + st.Unknown.Packets, Malformed: st.Malformed.Packets,
		Unknown: st.Unknown.Packets, Problems: []string{},
	}
	if s.Inputs == nil {
		s.Inputs = []string{}
	}
	games := map[string]bool{}
	for _, cv := range st.Convs {
		if cv.ID == 0 {
			continue
		}
		s.Eras[cv.Era]++
		g := cv.Listen
		if g == "" {
			g = cv.Server
		}
		if g != "" {
			games[g] = true
		}
	}
	s.Games = len(games)
	add := func(format string, a ...any) {
		if len(s.Problems) < maxProblems {
			s.Problems = append(s.Problems, fmt.Sprintf(format, a...))
		}
	}
	for _, u := range st.Unreadable {
		add("%s", u)
	}
	counts := []struct {
		n    int
		what string
	}{
		{st.Malformed.Packets, "malformed game packets"},
		{st.Unknown.Packets, "unknown game packets"},
		{st.Truncated, "datagrams cut by the snap length"},
		{st.BadFrames, "frames that could not be decoded"},
		{st.FragmentsDropped, "IP fragments that never made a datagram"},
		{st.Dropped.Conversations, "packets of clients past the conversation bound"},
	}
	for _, c := range counts {
		if c.n > 0 {
			add("%d %s", c.n, c.what)
		}
	}
	for _, df := range st.Difs {
		var parts []string
		if df.Incomplete > 0 {
			parts = append(parts, fmt.Sprintf("%d incomplete difs", df.Incomplete))
		}
		if df.LostPieces > 0 {
			parts = append(parts, fmt.Sprintf("%d lost pieces", df.LostPieces))
		}
		if df.Corrupt > 0 {
			parts = append(parts, fmt.Sprintf("%d corrupt difs", df.Corrupt))
		}
		if df.MissingBase != nil && *df.MissingBase > 0 {
			parts = append(parts, fmt.Sprintf("%d difs with a missing base", *df.MissingBase))
		}
		if df.Truncated > 0 {
			parts = append(parts, fmt.Sprintf("%d truncated difs", df.Truncated))
		}
		if len(parts) > 0 {
			add("conversation %d (%s): %s", df.Conv, df.Client, join(parts))
		}
	}
	for i, w := range st.Warnings {
		if len(s.Problems) >= maxProblems {
			s.Problems = append(s.Problems, fmt.Sprintf("… and %d more warnings", len(st.Warnings)-i))
			break
		}
		add("%s", w)
	}
	return s
}

func join(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}

// healthOf is a conversation's health as columns.
func healthOf(h *engine.ClientHealth) Health {
	n := len(h.Seconds)
	col := func() Coords { return Coords{V: make([]float64, 0, n)} }
	out := Health{T: make([]int, 0, n), DifBytes: col(), AckMs: col(), PingMs: col(), Incomplete: col(), LateInputs: col(),
		Corrections: col(), RemoteCorrection: col(), ChaseFPS: col(), BaseResets: col(), Jumps: col()}
	opt := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return math.Round(*p*100) / 100
	}
	legacy := h.Era == "legacy"
	for _, s := range h.Seconds {
		out.T = append(out.T, s.T)
		out.DifBytes.V = append(out.DifBytes.V, float64(s.DifBytes))
		out.AckMs.V = append(out.AckMs.V, opt(s.AckMs))
		out.PingMs.V = append(out.PingMs.V, opt(s.PingPongMs))
		out.Incomplete.V = append(out.Incomplete.V, float64(s.Incomplete))
		out.LateInputs.V = append(out.LateInputs.V, float64(s.LateInputs))
		corr := opt(s.LocalCorrection)
		if legacy {
			corr = math.NaN()
			if s.DifCorrections != nil {
				corr = float64(*s.DifCorrections)
			}
		}
		out.Corrections.V = append(out.Corrections.V, corr)
		out.RemoteCorrection.V = append(out.RemoteCorrection.V, opt(s.RemoteCorrection))
		out.ChaseFPS.V = append(out.ChaseFPS.V, opt(s.ChaseFPS))
		out.BaseResets.V = append(out.BaseResets.V, float64(s.BaseResets))
		out.Jumps.V = append(out.Jumps.V, float64(s.Jumps))
	}
	return out
}
