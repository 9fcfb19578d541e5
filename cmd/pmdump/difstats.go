package main

import (
	"net/netip"
	"slices"
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
)

// difReport is the per-client state-dif part of stats.
type difReport struct {
	Client          string   `json:"client"`
	Player          *int     `json:"player,omitempty"`
	Difs            int      `json:"difs"`
	OK              int      `json:"ok"`
	Incomplete      int      `json:"incomplete"`
	Corrupt         int      `json:"corrupt"`
	MissingBase     int      `json:"missing_base"`
	Keyframes       int      `json:"keyframes"`   // difs against an all-zero base (src 0), whatever became of them
	BaseResets      int      `json:"base_resets"` // keyframes after the first state of a level sequence
	LostPieces      int      `json:"lost_pieces"` // pieces missing from incomplete difs
	DuplicatePieces int      `json:"duplicate_pieces"`
	StateBytes      int64    `json:"state_bytes"`      // inflated bytes of the ok difs
	CompressedBytes int64    `json:"compressed_bytes"` // their compressed bytes
	Ratio           float64  `json:"compression_ratio"`
	Acked           int      `json:"acked"` // difs whose dst a stak acknowledged
	AckMs           quantile `json:"ack_latency_ms"`
}

// quantile summarises a set of durations in milliseconds.
type quantile struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

func quantiles(ms []float64) quantile {
	if len(ms) == 0 {
		return quantile{}
	}
	slices.Sort(ms)
	q := quantile{N: len(ms), Median: ms[len(ms)/2], P95: ms[len(ms)*95/100], Max: ms[len(ms)-1]}
	for _, v := range ms {
		q.Mean += v
	}
	q.Mean /= float64(len(ms))
	return q
}

type sentKey struct {
	client netip.AddrPort
	slsn   int
	dst    int32
}

type clientDifs struct {
	difReport
	acks    []float64
	levels  map[int]bool // level sequences with a first state
	sent    map[sentKey]time.Time
	sentAge []sentKey // order, to bound sent
}

// difStats gathers the per-client dif figures of stats.
type difStats struct {
	clients map[netip.AddrPort]*clientDifs
	order   []netip.AddrPort
}

func newDifStats() *difStats { return &difStats{clients: map[netip.AddrPort]*clientDifs{}} }

func (d *difStats) of(c netip.AddrPort) *clientDifs {
	x := d.clients[c]
	if x == nil {
		x = &clientDifs{levels: map[int]bool{}, sent: map[sentKey]time.Time{}}
		x.Client = c.String()
		d.clients[c] = x
		d.order = append(d.order, c)
	}
	return x
}

// message is called for every dif as it ends, in capture order.
func (d *difStats) message(m *reassemble.Message) {
	x := d.of(m.Client)
	x.DuplicatePieces += m.Duplicates
	if m.Src == 0 {
		x.Keyframes++
	}
	if m.Status == reassemble.Incomplete {
		x.LostPieces += len(m.Missing)
	}
	if m.Status != reassemble.Complete {
		return
	}
	// When it was sent, for the ack latency. A modern stdf carries its
	// slsn; a legacy one has -1 here and its staks are keyed by 0.
	k := sentKey{m.Client, max(m.SLSN, 0), m.Dst}
	if _, ok := x.sent[k]; !ok {
		x.sent[k] = m.Last
		x.sentAge = append(x.sentAge, k)
		if len(x.sentAge) > 4096 {
			delete(x.sent, x.sentAge[0])
			x.sentAge = x.sentAge[1:]
		}
	}
}

func (d *difStats) ack(a ack) {
	x := d.of(a.client)
	k := sentKey{a.client, a.slsn, a.frame}
	if t, ok := x.sent[k]; ok {
		x.acks = append(x.acks, float64(a.ts.Sub(t))/float64(time.Millisecond))
		x.Acked++
		delete(x.sent, k) // only the first ack of a state counts
	}
}

func (d *difStats) state(s *replay.State) {
	x := d.of(s.Client)
	if s.Player >= 0 {
		p := s.Player
		x.Player = &p
	}
	x.Difs++
	switch s.Status {
	case replay.OK:
		x.OK++
		x.StateBytes += int64(s.Size)
		x.CompressedBytes += int64(s.Compressed)
	case replay.Incomplete:
		x.Incomplete++
	case replay.Corrupt:
		x.Corrupt++
	case replay.MissingBase:
		x.MissingBase++
	}
	if s.Keyframe() && s.Status == replay.OK && x.levels[s.SLSN] {
		x.BaseResets++
	}
	if s.Status == replay.OK {
		x.levels[s.SLSN] = true
	}
}

func (d *difStats) report(convs []*session.Conversation) []difReport {
	var out []difReport
	for _, c := range d.order {
		x := d.clients[c]
		if x.Difs == 0 {
			continue
		}
		if x.CompressedBytes > 0 {
			x.Ratio = float64(x.StateBytes) / float64(x.CompressedBytes)
		}
		x.AckMs = quantiles(x.acks)
		out = append(out, x.difReport)
	}
	return out
}
