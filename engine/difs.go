package engine

import (
	"slices"
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// DifStats are the state-dif figures of one conversation.
//
// A dif is counted when at least one of its pieces is in the capture: a dif
// none of whose pieces were captured is invisible to any capture. Lost
// pieces are the pieces such difs have (their headers say how many) that
// never arrived. Duplicate pieces are copies of a piece that had arrived
// before, whether its dif had completed by then or not. Late pieces came
// after their dif had been abandoned with pieces missing (and are dropped).
type DifStats struct {
	Conv            int       `json:"conv"`
	Client          string    `json:"client"`
	Player          *int      `json:"player,omitempty"`
	Difs            int       `json:"difs"`
	Complete        int       `json:"complete"`   // every piece arrived whole
	OK              *int      `json:"ok"`         // rebuilt (only when states are rebuilt)
	Incomplete      int       `json:"incomplete"` // abandoned with pieces missing
	Corrupt         int       `json:"corrupt"`    // pieces that disagree, or (rebuilt) a stream that does not inflate to the state
	MissingBase     *int      `json:"missing_base"`
	Truncated       int       `json:"truncated"`   // every piece came, but the snap length cut some
	Keyframes       int       `json:"keyframes"`   // difs against an all-zero base (src 0), whatever became of them
	BaseResets      int       `json:"base_resets"` // keyframes after the first of their level sequence
	LostPieces      int       `json:"lost_pieces"`
	DuplicatePieces int       `json:"duplicate_pieces"`
	LatePieces      int       `json:"late_pieces"`
	TruncatedPieces int       `json:"truncated_pieces"`
	CompressedBytes int64     `json:"compressed_bytes"`     // compressed bytes of every dif, as received
	StateBytes      *int64    `json:"state_bytes"`          // inflated bytes of the ok difs (rebuilt)
	StateSize       int       `json:"state_size,omitempty"` // the size of the rebuilt states
	Ratio           *float64  `json:"compression_ratio"`
	Acked           int       `json:"acked"` // difs a stak acknowledged
	AckMs           Quantiles `json:"ack_latency_ms"`
}

// Quantiles summarise a set of durations in milliseconds.
type Quantiles struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// BaseReset is the one definition of a base reset: a keyframe (a dif from
// src 0, against an all-zero base) that is not the first keyframe of its
// level sequence, whatever became of it. The dif table, the health series,
// the findings and the terminal UI's timeline all use it.
func BaseReset(src int32, firstOfLevel bool) bool { return src == 0 && !firstOfLevel }

func quantiles(ms []float64) Quantiles {
	if len(ms) == 0 {
		return Quantiles{}
	}
	ms = slices.Clone(ms)
	slices.Sort(ms)
	q := Quantiles{N: len(ms), Median: ms[len(ms)/2], P95: ms[len(ms)*95/100], Max: ms[len(ms)-1]}
	for _, v := range ms {
		q.Mean += v
	}
	q.Mean /= float64(len(ms))
	return q
}

type lineDifs struct {
	DifStats
	line                            reassemble.Chain
	ok, missingBase, rebuiltCorrupt int
	stateBytes, okCompressed        int64
	acks                            []float64
	levels                          map[int]bool         // level sequences with a keyframe
	sent                            *recentFrames[stamp] // when the last 4096 complete difs were sent, by level sequence and dst
}

// maxAckSamples bounds the ack latencies kept per conversation for the
// quantiles; past it every other sample is dropped (a uniform thinning).
const maxAckSamples = 1 << 16

// difFigures gathers the per-conversation dif figures.
type difFigures struct {
	lines      map[reassemble.Chain]*lineDifs
	order      []reassemble.Chain
	headerless int
	byConv     []*lineDifs              // the same lines by conversation id, when they have one
	players    map[reassemble.Chain]int // players of lines with no dif yet
}

func newDifFigures() *difFigures { return &difFigures{lines: map[reassemble.Chain]*lineDifs{}} }

func (d *difFigures) of(l reassemble.Chain) *lineDifs {
	if l.Conv > 0 && l.Conv < len(d.byConv) {
		if x := d.byConv[l.Conv]; x != nil && x.line == l {
			return x
		}
	}
	x := d.lines[l]
	if x == nil {
		x = &lineDifs{levels: map[int]bool{}, sent: newRecentFrames[stamp](4096)}
		x.Conv, x.Client, x.line = l.Conv, l.Client.String(), l
		if p, ok := d.players[l]; ok {
			x.Player = &p
			delete(d.players, l)
		}
		d.lines[l] = x
		d.order = append(d.order, l)
	}
	if l.Conv > 0 && l.Conv < maxLineMemos {
		for len(d.byConv) <= l.Conv {
			d.byConv = append(d.byConv, nil)
		}
		d.byConv[l.Conv] = x
	}
	return x
}

func (d *difFigures) setPlayer(l reassemble.Chain, p int) {
	if p < 0 {
		return
	}
	if x := d.lines[l]; x != nil {
		x.Player = &p
		return
	}
	if d.players == nil {
		d.players = map[reassemble.Chain]int{}
	}
	d.players[l] = p // for when its first dif comes
}

// piece counts what became of one piece.
func (d *difFigures) piece(l reassemble.Chain, o reassemble.Outcome) {
	switch o {
	case reassemble.LateDuplicate:
		d.of(l).DuplicatePieces++
	case reassemble.Late:
		d.of(l).LatePieces++
	}
}

// dif counts a dif as it ends, from its headers, and reports whether it is
// a base reset: a keyframe (src 0) after the first of its level sequence,
// whatever became of it. This is the one definition of a base reset the
// dif table, the health series and the findings use.
func (d *difFigures) dif(m *Dif) (baseReset bool) {
	x := d.of(m.Chain())
	x.Difs++
	x.DuplicatePieces += m.Duplicates
	x.TruncatedPieces += m.Truncated
	x.CompressedBytes += int64(m.Bytes)
	switch m.Status {
	case reassemble.Complete:
		x.Complete++
	case reassemble.Incomplete:
		x.Incomplete++
		x.LostPieces += len(m.Missing)
	case reassemble.Corrupt:
		x.Corrupt++
	case reassemble.Truncated:
		x.Truncated++
	}
	if m.Src == 0 {
		x.Keyframes++
		if BaseReset(m.Src, !x.levels[m.SLSN]) {
			x.BaseResets++
			baseReset = true
		}
		x.levels[m.SLSN] = true
	}
	if m.Status != reassemble.Complete {
		return baseReset
	}
	// When it was sent, for the ack latency.
	x.sent.add(replay.Frame{SLSN: m.SLSN, N: m.Dst}, stampOf(m.Last))
	return baseReset
}

// ack counts a stak and returns its ack latency in milliseconds (ok false
// when it is not the first ack of a complete dif's frame). This is the one
// definition of the ack latency: the last piece of a complete dif → the
// first stak of its level sequence and frame.
func (d *difFigures) ack(a Ack) (ms float64, ok bool) {
	x := d.lines[a.Line]
	if x == nil {
		return 0, false
	}
	k := replay.Frame{SLSN: a.SLSN, N: a.Frame}
	if t, ok := x.sent.get(k); ok {
		if len(x.acks) >= maxAckSamples {
			for i := 0; i < len(x.acks)/2; i++ {
				x.acks[i] = x.acks[2*i]
			}
			x.acks = x.acks[:len(x.acks)/2]
		}
		ms = float64(since(a.TS, t)) / float64(time.Millisecond)
		x.acks = append(x.acks, ms)
		x.Acked++
		x.sent.del(k) // only the first ack of a state counts
		return ms, true
	}
	return 0, false
}

// state counts the outcome of a rebuild.
func (d *difFigures) state(s *replay.State) {
	x := d.of(s.Line())
	if s.Player >= 0 {
		p := s.Player
		x.Player = &p
	}
	switch s.Status {
	case replay.OK:
		x.ok++
		x.StateSize = s.Size
		x.stateBytes += int64(s.Size)
		x.okCompressed += int64(s.Compressed)
	case replay.MissingBase:
		x.missingBase++
	case replay.Corrupt:
		x.rebuiltCorrupt++
	}
}

func (d *difFigures) report(rebuilt bool) []DifStats {
	var out []DifStats
	for _, l := range d.order {
		x := d.lines[l]
		if x.Difs == 0 {
			continue
		}
		r := x.DifStats
		if rebuilt {
			ok, mb, sb := x.ok, x.missingBase, x.stateBytes
			r.OK, r.MissingBase, r.StateBytes = &ok, &mb, &sb
			r.Corrupt = x.rebuiltCorrupt // those of the reassembly are among them
			if x.okCompressed > 0 {
				ratio := float64(x.stateBytes) / float64(x.okCompressed)
				r.Ratio = &ratio
			}
		}
		r.AckMs = quantiles(x.acks)
		out = append(out, r)
	}
	return out
}
