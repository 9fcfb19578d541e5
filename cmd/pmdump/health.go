package main

import (
	"fmt"
	"io"
	"math"
	"net/netip"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
	"github.com/pmdump/pmdump/session"
)

// second is one per-second bucket of a client's netgame health. Means are
// over the samples of that second; 0 where there were none.
type second struct {
	T                int     `json:"t"`                // seconds since the capture's first packet
	Inputs           int     `json:"inputs"`           // cdat sent
	LateInputs       int     `json:"late_inputs"`      // legacy serr received; modern late_cdats increase in the states
	Difs             int     `json:"difs"`             // difs whose last piece arrived
	DifBytes         int     `json:"dif_bytes"`        // their compressed bytes
	BaseResets       int     `json:"base_resets"`      // keyframes after the level's first state
	Incomplete       int     `json:"incomplete"`       // difs abandoned with pieces missing
	Acks             int     `json:"acks"`             // stak sent
	AckMs            float64 `json:"ack_ms"`           // mean dif → stak latency
	PingPongMs       float64 `json:"ping_pong_ms"`     // ping → pong at the capture point
	PongPangMs       float64 `json:"pong_pang_ms"`     // pong → pang at the capture point (the server's round trip)
	ChaseFPS         float64 `json:"chase_fps"`        // stak (modern) / sdak (legacy) chase frame rate
	DsyncMs          float64 `json:"dsync_ms"`         // stak: client's average dsync
	LocalCorrection  float64 `json:"local_correction"` // stak: local player correction (px), max
	RemoteCorrection float64 `json:"remote_correction"`
	CPU              float64 `json:"cpu"`             // stak: client cpu %, mean
	DifCorrections   int     `json:"dif_corrections"` // legacy stak: the client's simulation was overwritten
	MaxStep          float64 `json:"max_step_px"`     // largest move of the client's player between consecutive states, px per frame
	Jumps            int     `json:"position_jumps"`  // moves over jumpPx per frame: corrections, respawns
	sums             map[string]*mean
}

// jumpPx is a move per frame no player makes by running or falling.
const jumpPx = 12

type mean struct {
	sum float64
	n   int
}

func (s *second) add(k string, v float64) {
	if s.sums == nil {
		s.sums = map[string]*mean{}
	}
	m := s.sums[k]
	if m == nil {
		m = &mean{}
		s.sums[k] = m
	}
	m.sum += v
	m.n++
}

func (s *second) mean(k string) float64 {
	if m := s.sums[k]; m != nil && m.n > 0 {
		return m.sum / float64(m.n)
	}
	return 0
}

// healthClient is one client's series.
type healthClient struct {
	Client       string          `json:"client"`
	Player       *int            `json:"player,omitempty"`
	Summary      map[string]any  `json:"summary"`
	Seconds      []*second       `json:"seconds"`
	secs         map[int]*second `json:"-"`
	pings        map[float64]time.Time
	pongs        map[float64]time.Time
	lastLate     float64
	haveLate     bool
	lastX, lastY float64
	lastDst      int32
	lastSLSN     int
	havePos      bool
	levels       map[int]bool
}

// health gathers the per-second netgame health of every client.
type health struct {
	t0      time.Time
	clients map[netip.AddrPort]*healthClient
	order   []netip.AddrPort
	user    *schema.Schema
	sent    map[sentKey]time.Time
}

func newHealth(user *schema.Schema) *health {
	return &health{clients: map[netip.AddrPort]*healthClient{}, user: user, sent: map[sentKey]time.Time{}}
}

func (h *health) client(c netip.AddrPort) *healthClient {
	x := h.clients[c]
	if x == nil {
		x = &healthClient{Client: c.String(), secs: map[int]*second{}, pings: map[float64]time.Time{},
			pongs: map[float64]time.Time{}, levels: map[int]bool{}}
		h.clients[c] = x
		h.order = append(h.order, c)
	}
	return x
}

func (h *health) at(x *healthClient, ts time.Time) *second {
	t := int(math.Floor(ts.Sub(h.t0).Seconds()))
	s := x.secs[t]
	if s == nil {
		s = &second{T: t}
		x.secs[t] = s
	}
	return s
}

// record takes every game packet, in capture order.
func (h *health) record(r *session.Record) {
	if h.t0.IsZero() {
		h.t0 = r.TS
	}
	if r.Kind != session.Game || r.Conv == nil || r.Conv.ID == 0 {
		return
	}
	x := h.client(r.Conv.Client)
	if r.Conv.Player >= 0 {
		p := r.Conv.Player
		x.Player = &p
	}
	pk := &r.Packet
	s := h.at(x, r.TS)
	switch pk.Layout.Name {
	case "cdat":
		s.Inputs++
	case "serr":
		s.LateInputs++
	case "ping":
		if len(x.pings) > 64 {
			clear(x.pings)
		}
		x.pings[pk.Values[0].Float] = r.TS
	case "pong":
		if t, ok := x.pings[pk.Values[0].Float]; ok {
			s.add("pingpong", float64(r.TS.Sub(t))/1e6)
			delete(x.pings, pk.Values[0].Float)
		}
		if len(x.pongs) > 64 {
			clear(x.pongs)
		}
		x.pongs[pk.Values[1].Float] = r.TS
	case "pang":
		if t, ok := x.pongs[pk.Values[0].Float]; ok {
			s.add("pongpang", float64(r.TS.Sub(t))/1e6)
			delete(x.pongs, pk.Values[0].Float)
		}
	case "sdak":
		if pk.Has("fps_chase") {
			s.add("chase", float64(pk.Int("fps_chase")))
		}
	case "stak":
		s.Acks++
		if pk.Has("corr") && pk.Int("corr") != 0 {
			s.DifCorrections++
		}
		if pk.Has("chase_fps") {
			l := pk.Layout
			f := func(n string) float64 { return pk.Values[l.Field(n)].Float }
			s.add("chase", f("chase_fps"))
			s.add("dsync", f("dsync")*1000)
			s.add("cpu", f("cpu"))
			s.LocalCorrection = math.Max(s.LocalCorrection, f("local_correction"))
			s.RemoteCorrection = math.Max(s.RemoteCorrection, f("remote_correction"))
		}
	}
}

// ack takes a stak's acknowledgement, for the latency of the dif it acks.
func (h *health) message(c netip.AddrPort, slsn int, dst int32, ts time.Time) {
	k := sentKey{c, slsn, dst}
	if _, ok := h.sent[k]; !ok {
		h.sent[k] = ts
		if len(h.sent) > 1<<16 {
			clear(h.sent)
		}
	}
}

func (h *health) ack(a ack) {
	k := sentKey{a.client, a.slsn, a.frame}
	if t, ok := h.sent[k]; ok {
		x := h.client(a.client)
		h.at(x, a.ts).add("ack", float64(a.ts.Sub(t))/1e6)
		delete(h.sent, k)
	}
}

// sample is what Inspect reads from a state for the health report: the
// client's own player's position and late-input counter.
type sample struct {
	x, y, late   float64
	pos, hasLate bool
}

// inspect runs on the rebuilding goroutines.
func (h *health) inspect(s *replay.State, _, st []byte) {
	sch := schema.For(len(st), h.user)
	v := sch.View
	if v == nil || v.Players == nil || s.Player < 0 {
		return
	}
	p := v.Players
	var sm sample
	var ok1, ok2 bool
	sm.x, ok1 = sch.Get(st, p.Region, s.Player, p.X)
	sm.y, ok2 = sch.Get(st, p.Region, s.Player, p.Y)
	sm.pos = ok1 && ok2
	if p.LateInputs != "" {
		sm.late, sm.hasLate = sch.Get(st, p.Region, s.Player, p.LateInputs)
	}
	s.Extra = sm
}

// state takes every rebuilt state, in the order the difs ended.
func (h *health) state(s *replay.State) {
	x := h.client(s.Client)
	sec := h.at(x, s.TS)
	switch s.Status {
	case replay.Incomplete:
		sec.Incomplete++
		return
	case replay.OK:
	default:
		return
	}
	sec.Difs++
	sec.DifBytes += s.Compressed
	if s.Keyframe() && x.levels[s.SLSN] {
		sec.BaseResets++
	}
	x.levels[s.SLSN] = true
	sm, ok := s.Extra.(sample)
	if !ok {
		return
	}
	if sm.hasLate {
		if x.haveLate && sm.late > x.lastLate && x.lastSLSN == s.SLSN {
			sec.LateInputs += int(sm.late - x.lastLate)
		}
		x.lastLate, x.haveLate = sm.late, true
	}
	if sm.pos {
		if x.havePos && x.lastSLSN == s.SLSN && s.Dst > x.lastDst {
			step := math.Hypot(sm.x-x.lastX, sm.y-x.lastY) / float64(s.Dst-x.lastDst)
			sec.MaxStep = math.Max(sec.MaxStep, step)
			if step > jumpPx {
				sec.Jumps++
			}
		}
		if !x.havePos || x.lastSLSN != s.SLSN || s.Dst > x.lastDst {
			x.lastX, x.lastY, x.lastDst, x.havePos = sm.x, sm.y, s.Dst, true
		}
	}
	x.lastSLSN = s.SLSN
}

// report finishes the series: sorted seconds, means, and a summary.
func (h *health) report() []*healthClient {
	var out []*healthClient
	for _, c := range h.order {
		x := h.clients[c]
		for _, s := range x.secs {
			s.AckMs = s.mean("ack")
			s.PingPongMs = s.mean("pingpong")
			s.PongPangMs = s.mean("pongpang")
			s.ChaseFPS = s.mean("chase")
			s.DsyncMs = s.mean("dsync")
			s.CPU = s.mean("cpu")
			x.Seconds = append(x.Seconds, s)
		}
		sort.Slice(x.Seconds, func(i, j int) bool { return x.Seconds[i].T < x.Seconds[j].T })
		tot := second{}
		var ack, rtt, chase mean
		maxStep := 0.0
		for _, s := range x.Seconds {
			tot.Inputs += s.Inputs
			tot.LateInputs += s.LateInputs
			tot.Difs += s.Difs
			tot.DifBytes += s.DifBytes
			tot.BaseResets += s.BaseResets
			tot.Incomplete += s.Incomplete
			tot.Acks += s.Acks
			tot.Jumps += s.Jumps
			tot.DifCorrections += s.DifCorrections
			maxStep = math.Max(maxStep, s.MaxStep)
			for k, m := range s.sums {
				switch k {
				case "ack":
					ack.sum, ack.n = ack.sum+m.sum, ack.n+m.n
				case "pongpang":
					rtt.sum, rtt.n = rtt.sum+m.sum, rtt.n+m.n
				case "chase":
					chase.sum, chase.n = chase.sum+m.sum, chase.n+m.n
				}
			}
		}
		secs := max(len(x.Seconds), 1)
		avg := func(m mean) float64 {
			if m.n == 0 {
				return 0
			}
			return m.sum / float64(m.n)
		}
		x.Summary = map[string]any{
			"seconds": len(x.Seconds), "inputs_per_s": float64(tot.Inputs) / float64(secs), "late_inputs": tot.LateInputs,
			"difs": tot.Difs, "difs_per_s": float64(tot.Difs) / float64(secs), "mean_dif_bytes": float64(tot.DifBytes) / math.Max(float64(tot.Difs), 1),
			"base_resets": tot.BaseResets, "incomplete": tot.Incomplete, "acks": tot.Acks, "mean_ack_ms": avg(ack),
			"mean_pong_pang_ms": avg(rtt), "mean_chase_fps": avg(chase), "dif_corrections": tot.DifCorrections,
			"max_step_px": maxStep, "position_jumps": tot.Jumps,
		}
		out = append(out, x)
	}
	return out
}

func writeHealth(w io.Writer, hc []*healthClient) {
	for _, x := range hc {
		pl := "?"
		if x.Player != nil {
			pl = fmt.Sprint(*x.Player)
		}
		s := x.Summary
		rtt := "n/a (no ping)"
		if v := s["mean_pong_pang_ms"].(float64); v > 0 {
			rtt = fmt.Sprintf("%.1f ms", v)
		}
		fmt.Fprintf(w, "\nHealth of client %s (player %s): %.1f inputs/s, %d late inputs, %.1f difs/s of %.0f B, %d base resets, %d incomplete, ack %.1f ms, pong-pang %s, chase %.1f fps, %d position jumps\n",
			x.Client, pl, s["inputs_per_s"], s["late_inputs"], s["difs_per_s"], s["mean_dif_bytes"], s["base_resets"], s["incomplete"],
			s["mean_ack_ms"], rtt, s["mean_chase_fps"], s["position_jumps"])
		tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "t\tinputs\tlate\tdifs\tdif B\tresets\tincompl\tacks\tack ms\tping-pong ms\tpong-pang ms\tchase\tdsync ms\tlocal corr\tremote corr\tcpu\tmax step\tjumps\t\n")
		for _, s := range x.Seconds {
			// A mean without samples is "-", not 0.
			m := func(k, format string, v float64) string {
				if s.sums[k] == nil {
					return "-"
				}
				return fmt.Sprintf(format, v)
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%.1f\t%d\t\n", s.T, s.Inputs, s.LateInputs,
				s.Difs, s.DifBytes, s.BaseResets, s.Incomplete, s.Acks, m("ack", "%.1f", s.AckMs), m("pingpong", "%.1f", s.PingPongMs),
				m("pongpang", "%.1f", s.PongPangMs), m("chase", "%.1f", s.ChaseFPS), m("dsync", "%.1f", s.DsyncMs), s.LocalCorrection,
				s.RemoteCorrection, m("cpu", "%.0f", s.CPU), s.MaxStep, s.Jumps)
		}
		tw.Flush()
	}
}
