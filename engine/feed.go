package engine

import (
	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// The fields of the packets feed reads, resolved once by their roles (the
// piece's data has none: it is found by name).
var (
	stdfSrc   = decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleDifBase)
	stdfDst   = decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleFrame)
	stdfSeq   = decode.MustKindRoleRef(decode.KindDifPiece, decode.RolePieceSeq)
	stdfCount = decode.MustKindRoleRef(decode.KindDifPiece, decode.RolePieceCount)
	stdfStart = decode.MustKindRoleRef(decode.KindDifPiece, decode.RolePieceStart)
	stdfData  = decode.MustKindRef(decode.KindDifPiece, "data")
	stdfSLSN  = decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleLevelSeq) // the legacy stdf has none
	sjonSLSN  = decode.MustKindRoleRef(decode.KindJoinReply, decode.RoleLevelSeq)
	stakSLSN  = decode.MustKindRoleRef(decode.KindDifAck, decode.RoleLevelSeq) // the versions of 2024-06 on
)

// lockRun is the most datagrams runSource analyses under one lock.
const lockRun = 64

// Feed analyses one datagram. Datagrams must come in capture order.
func (e *Engine) Feed(d *source.Datagram) {
	e.mu.Lock()
	defer e.unlock()
	e.feed(d)
}

func (e *Engine) feed(d *source.Datagram) {
	if e.finished {
		return
	}
	if e.index != nil {
		e.trackMu.Lock() // the index asks for conversations (Engine.conversation)
	}
	r := e.tracker.Process(d)
	if e.index != nil {
		e.trackMu.Unlock()
	}
	idx := -1
	if e.index != nil && r.Kind != session.NonGame {
		idx = e.index.add(r, d, e.input)
	}
	e.analyse(r, d, idx)
}

// analyse is the work on a datagram after the tracker and the index have
// had it (r is its record, idx its place in the index): in step with them
// (feed), or behind them on another goroutine when they run ahead (front).
func (e *Engine) analyse(r *session.Record, d *source.Datagram, idx int) {
	if e.finished {
		return
	}
	e.cap.see(d.TS)
	e.lastN, e.lastTS = d.N, d.TS
	if r.Kind == session.NonGame {
		return
	}
	if c := r.Conv; c != nil {
		if e.wants(ConversationEvents) {
			e.conversationChanged(c)
		}
		if e.cfg.Work&Counts != 0 {
			e.countName(r)
		}
	}
	if e.cfg.OnPacket != nil {
		e.pev = PacketEvent{Record: r, Index: idx, First: e.cap.first, Datagram: d, Digits: d.Digits}
		e.pending = append(e.pending, packetMark{})
	} else if e.wants(PacketEvents) {
		e.emit(PacketEvent{Record: r, Index: idx, First: e.cap.first, Datagram: d, Digits: d.Digits})
	}
	if e.health != nil {
		e.health.record(r)
	}
	if e.finds != nil {
		e.finds.packet(r, d)
	}
	if e.asm == nil || r.Conv == nil || r.Conv.ID == 0 {
		return
	}
	c := r.Conv
	if r.Kind == session.Malformed {
		if r.Packet.Kind() == decode.KindDifPiece {
			e.badStdf++
			if d.Truncated() {
				e.truncatedPiece(r)
			}
		}
		return
	}
	if r.Kind != session.Game {
		return
	}
	l := e.line(c)
	pk := &r.Packet
	switch pk.Layout.Kind {
	case decode.KindDifPiece:
		slsn := -1 // legacy: inferred when the dif ends
		if v, ok := stdfSLSN.Int(pk); ok {
			slsn = int(v)
			e.setSLSN(c, l, slsn)
		}
		src, _ := stdfSrc.Int(pk)
		dst, _ := stdfDst.Int(pk)
		seq, _ := stdfSeq.Int(pk)
		count, _ := stdfCount.Int(pk)
		start, _ := stdfStart.Int(pk)
		data, _ := stdfData.Value(pk)
		var ref int64
		if e.refInput > 0 {
			ref = pieceRef(e.refInput, d, data.Bytes)
		}
		e.addPiece(reassemble.Piece{
			Key: reassemble.Key{Client: c.Client, Conv: c.ID, SLSN: slsn, Src: int32(src), Dst: int32(dst)},
			Seq: int(seq), Count: int(count), Start: int(start),
			Data: data.Bytes, Ref: ref, N: r.N, TS: r.TS,
		})
		if c.StateSize == 0 {
			e.probePiece(c, src, dst, seq, count, data.Bytes)
		}
	case decode.KindJoinReply:
		v, _ := sjonSLSN.Int(pk)
		e.setSLSN(c, l, int(v))
	case decode.KindDifAck:
		fr, _ := pk.Frame()
		a := Ack{Line: l, SLSN: e.getSLSN(c, l), Frame: int32(fr), N: r.N, TS: r.TS}
		if v, ok := stakSLSN.Int(pk); ok {
			a.SLSN = int(v) // the client's own level sequence
		} else if lv := e.levels[l]; lv != nil {
			a.SLSN = lv.Current()
		}
		e.onAck(a)
	}
}

// truncatedPiece counts an stdf piece the snap length cut, from what is
// left of its header.
func (e *Engine) truncatedPiece(r *session.Record) {
	pk := &r.Packet
	var h [5]int64 // src, dst, seq, count, start
	for i, ref := range []decode.Ref{stdfSrc, stdfDst, stdfSeq, stdfCount, stdfStart} {
		v, ok := ref.Int(pk)
		if !ok {
			e.difs.headerless++
			return
		}
		h[i] = v
	}
	c := r.Conv
	l := e.line(c)
	slsn := -1
	if v, ok := stdfSLSN.Int(pk); ok {
		slsn = int(v)
		e.setSLSN(c, l, slsn)
	}
	e.addPiece(reassemble.Piece{
		Key: reassemble.Key{Client: c.Client, Conv: c.ID, SLSN: slsn, Src: int32(h[0]), Dst: int32(h[1])},
		Seq: int(h[2]), Count: int(h[3]), Start: int(h[4]),
		Truncated: true, N: r.N, TS: r.TS,
	})
}

func (e *Engine) addPiece(p reassemble.Piece) {
	o := e.asm.Add(p)
	e.difs.piece(p.Chain(), o)
}

// line returns a conversation's line, ending the previous conversation of
// the same client endpoint when this one is new. Conversations are told
// apart by their ids, not their pointers: behind the tracker a record's
// conversation is a copy (see front), a new one when the conversation
// changed.
func (e *Engine) line(c *session.Conversation) reassemble.Chain {
	if c.ID >= 0 && c.ID < len(e.lineMemo) {
		if m := &e.lineMemo[c.ID]; m.conv != nil && m.conv.ID == c.ID && m.player == c.Player {
			return m.line // as the conversation's packet before: nothing to do again
		}
	}
	l := reassemble.Chain{Conv: c.ID, Client: c.Client}
	if prev, ok := e.lines[c.Client]; ok && prev.ID != c.ID {
		old := reassemble.Chain{Conv: prev.ID, Client: prev.Client}
		e.asm.FlushChain(old)
		if e.bh != nil {
			e.bh.queue(rebuildOp{kind: opEndLine, line: old, water: e.asm.OldestPendingN()})
		} else if e.builder != nil {
			e.builder.EndLine(old)
		}
		delete(e.slsn, old)
		delete(e.levels, old)
		if old.Conv >= 0 && old.Conv < len(e.lineMemo) && e.lineMemo[old.Conv].line == old {
			e.lineMemo[old.Conv].hasSLSN = false
		}
	}
	if len(e.lines) >= session.MaxConversations && e.lines[c.Client] == nil {
		clear(e.lines)
	}
	e.lines[c.Client] = c
	if e.builder != nil && c.Player >= 0 {
		if e.bh != nil {
			e.bh.queue(rebuildOp{kind: opPlayer, line: l, n: int32(c.Player), water: -1})
		} else {
			e.builder.SetLinePlayer(l, c.Player)
		}
	}
	if c.Player >= 0 {
		e.difs.setPlayer(l, c.Player)
	}
	if c.ID >= 0 && c.ID < maxLineMemos {
		for len(e.lineMemo) <= c.ID {
			e.lineMemo = append(e.lineMemo, lineMemo{})
		}
		e.lineMemo[c.ID] = lineMemo{conv: c, player: c.Player, line: l}
	}
	return l
}

// maxLineMemos bounds the conversations whose lines line remembers.
const maxLineMemos = 4096

// lineMemo is the line line gave a conversation, with the player it had
// then, and the line's level sequence as e.slsn has it (when hasSLSN).
type lineMemo struct {
	conv    *session.Conversation
	player  int
	line    reassemble.Chain
	slsn    int
	hasSLSN bool
}

// memo returns conversation c's lineMemo when it is of line l, nil if not.
func (e *Engine) memo(c *session.Conversation, l reassemble.Chain) *lineMemo {
	if c.ID >= 0 && c.ID < len(e.lineMemo) {
		if m := &e.lineMemo[c.ID]; m.conv != nil && m.conv.ID == c.ID && m.line == l {
			return m
		}
	}
	return nil
}

// setSLSN sets line l's level sequence (c is its conversation): e.slsn is
// written only when it changes.
func (e *Engine) setSLSN(c *session.Conversation, l reassemble.Chain, slsn int) {
	m := e.memo(c, l)
	if m != nil && m.hasSLSN && m.slsn == slsn {
		return
	}
	e.slsn[l] = slsn
	if m != nil {
		m.slsn, m.hasSLSN = slsn, true
	}
}

// getSLSN returns line l's level sequence (c is its conversation), 0 when
// it has none.
func (e *Engine) getSLSN(c *session.Conversation, l reassemble.Chain) int {
	if m := e.memo(c, l); m != nil && m.hasSLSN {
		return m.slsn
	}
	return e.slsn[l]
}

func (e *Engine) countName(r *session.Record) {
	id := r.Conv.ID
	cc := e.counts
	if cc == nil || e.countsID != id {
		cc = e.perConv[id]
		if cc == nil {
			cc = &convCounts{byName: map[session.NameDir]*session.Count{}, byLayout: make([]*session.Count, 3*decode.NumLayouts())}
			e.perConv[id] = cc
		}
		e.counts, e.countsID = cc, id
	}
	// Most packets have a layout: their count is found by its number, and
	// only the first of each is looked up by name.
	slot := -1
	if l := r.Packet.Layout; l != nil && int(r.Dir) < 3 {
		slot = 3*l.ID + int(r.Dir)
		if c := cc.byLayout[slot]; c != nil && string(r.Packet.Name[:]) == l.Name {
			c.Add(len(r.Packet.Raw))
			return
		}
	}
	k := session.NameDir{Name: r.Packet.NameString(), Dir: r.Dir}
	if !session.AddName(cc.byName, k, len(r.Packet.Raw)) {
		e.cap.namesDropped++
		return
	}
	if slot >= 0 && k.Name == r.Packet.Layout.Name {
		cc.byLayout[slot] = cc.byName[k]
	}
}

// convCounts counts the packets of one conversation by name and direction.
type convCounts struct {
	byName   map[session.NameDir]*session.Count
	byLayout []*session.Count // the same counts, by 3*Layout.ID + Dir
}

func (e *Engine) conversationChanged(c *session.Conversation) {
	sig := convSig{era: c.Version, player: c.Player, host: c.Hostname, color: c.Color, server: c.Server}
	if c == e.lastConv && sig == e.lastSig {
		return // most packets are of the conversation before, unchanged
	}
	e.lastConv, e.lastSig = c, sig
	old, seen := e.convs[c.ID]
	if seen && old == sig {
		return
	}
	e.convs[c.ID] = sig
	e.emit(ConversationEvent{Conv: *c, New: !seen})
}

// onMessage takes every dif that ends in the reassembler.
