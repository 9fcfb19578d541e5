package engine

import (
	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/session"
)

// Some versions send the same packets and differ only in the size of
// their states (2026-01, 2026-01b and 2026-07; modern and 2024-02b), so a
// conversation's version is settled by the size its difs inflate to. The
// fast pass keeps no dif bytes (stats, doctor --fast), so the engine
// gathers the pieces of one dif of each conversation on its own, inflates
// it once and tells the tracker (session.Tracker.LearnStateSize).

// probeTries bounds the difs a conversation's probe tries: a dif whose
// pieces are lost or corrupt makes it try the next one.
const probeTries = 8

// stateProbe gathers the pieces of one dif of a conversation.
type stateProbe struct {
	src, dst int64
	count    int
	pieces   [][]byte // by seq; nil until received
	have     int
	bytes    int
	tries    int
	done     bool
}

// probePiece takes a dif piece of conversation c (its header values and
// data) towards learning c's state size.
func (e *Engine) probePiece(c *session.Conversation, src, dst, seq, count int64, data []byte) {
	if c.StateSize > 0 || c.ID <= 0 || c.ID > session.MaxConversations {
		return
	}
	if e.probes == nil {
		e.probes = map[int]*stateProbe{}
	}
	p := e.probes[c.ID]
	if p == nil {
		p = &stateProbe{}
		e.probes[c.ID] = p
	}
	if p.done || count <= 0 || count > decode.MaxPieces || seq < 0 || seq >= count {
		return
	}
	if p.pieces == nil || p.src != src || p.dst != dst || p.count != int(count) {
		if p.pieces != nil {
			p.tries++ // the dif before never completed
		}
		if p.tries >= probeTries {
			p.done, p.pieces = true, nil
			return
		}
		p.src, p.dst, p.count, p.have, p.bytes = src, dst, int(count), 0, 0
		p.pieces = make([][]byte, count)
	}
	if p.pieces[seq] != nil || p.bytes+len(data) > reassemble.DefaultLimits.MaxCompressed {
		return
	}
	p.pieces[seq] = append([]byte{}, data...)
	p.have++
	p.bytes += len(data)
	if p.have < p.count {
		return
	}
	z := make([]byte, 0, p.bytes)
	for _, b := range p.pieces {
		z = append(z, b...)
	}
	p.pieces = nil
	var inf reassemble.Inflater
	st, err := inf.Inflate(nil, z, 0)
	if err != nil || len(st) == 0 || len(st) > decode.MaxStateSize {
		p.tries++
		p.done = p.tries >= probeTries
		return
	}
	p.done = true
	e.trackMu.Lock()
	e.tracker.LearnStateSize(c.ID, len(st))
	e.trackMu.Unlock()
}
