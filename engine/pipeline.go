package engine

import (
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

func (e *Engine) onMessage(m *reassemble.Message) {
	l := m.Chain()
	if m.SLSN < 0 {
		lv := e.levels[l]
		if lv == nil {
			lv = &replay.LevelInference{}
			e.levels[l] = lv
		}
		m.SLSN = lv.Infer(m)
	}
	dif := Dif{Key: m.Key, Status: m.Status, Count: m.Count, Pieces: m.Pieces, Missing: m.Missing, Truncated: m.Truncated,
		Duplicates: m.Duplicates, Bytes: m.Bytes, FirstN: m.FirstN, LastN: m.LastN, First: m.First, Last: m.Last, Err: m.Err}
	// The collectors keep nothing of the Dif itself: one of the engine's
	// serves them unless an event takes it (one allocation a dif less).
	d := &e.difScratch
	if e.wants(DifEvents) {
		d = new(Dif)
	}
	*d = dif
	reset := e.difs.dif(d)
	if e.health != nil {
		e.health.dif(d, reset)
	}
	if e.finds != nil {
		e.finds.dif(d, reset)
	}
	if e.wants(DifEvents) {
		e.emit(DifEvent{d})
	}
	if e.builder != nil && e.selected(l) {
		if e.bh != nil {
			e.bh.queue(rebuildOp{kind: opDif, msg: m, water: e.asm.OldestPendingN()})
			if e.bh.queued[l] == 0 && e.timeline != nil {
				// The line's place among the lines is its first dif's,
				// whichever line's states the rebuild takes first.
				e.timeline.Reserve(l)
			}
			e.bh.queued[l]++
			e.bh.total++
			return
		}
		e.order.added(e.builder.Added(), m.LastN)
		e.builder.Add(m)
	}
}

// selected reports whether line l's states are rebuilt.
func (e *Engine) selected(l reassemble.Chain) bool {
	if e.cfg.Select == nil {
		return true
	}
	player := -1
	if c := e.lines[l.Client]; c != nil && c.ID == l.Conv {
		player = c.Player
	}
	return e.cfg.Select.Match(l, player)
}

// onAck takes every stak.
func (e *Engine) onAck(a Ack) {
	ms, measured := e.difs.ack(a)
	if e.health != nil && measured {
		e.health.ack(a, ms)
	}
	if e.finds != nil {
		e.finds.ack(a, ms, measured)
	}
	if e.wants(AckEvents) {
		e.emit(AckEvent{a})
	}
	if e.bh != nil {
		e.bh.queue(rebuildOp{kind: opAck, line: a.Line, n: a.Frame, ts: a.TS, water: e.asm.OldestPendingN()})
		return
	}
	if e.builder != nil {
		e.builder.Ack(a.Line, a.Frame)
	}
	if e.timeline != nil {
		// The stak is read before the state it acknowledges is in the
		// timeline (states are rebuilt on other goroutines): hold it until
		// the states of every dif that ended before it are in.
		e.held = append(e.held, heldAck{a, e.builder.Added()})
		e.applyAcks(e.builder.Emitted())
	}
}

// applyAcks gives the timeline the held acknowledgements whose turn has
// come (after ≤ upTo), in the order of their turns: the held ones and those
// taken ahead of their turn merged.
func (e *Engine) applyAcks(upTo int) {
	k := 0
	for {
		// The next in turn: the held list's head or a line's early head
		// (few lines are ever taken early, so a scan of their heads).
		next, from := 0, reassemble.Chain{}
		found, early := false, false
		if k < len(e.held) && e.held[k].after <= upTo {
			next, found = e.held[k].after, true
		}
		for l, q := range e.early {
			if q[0].after <= upTo && (!found || q[0].after < next) {
				next, from, found, early = q[0].after, l, true, true
			}
		}
		if !found {
			break
		}
		if early {
			e.timeline.Ack(from, e.early[from][0].Frame, e.early[from][0].TS)
			e.popEarly(from, 1)
			continue
		}
		a := e.held[k]
		e.timeline.Ack(a.Line, a.Frame, a.TS)
		k++
	}
	if k > 0 {
		e.held = append(e.held[:0], e.held[k:]...)
	}
}

// onState takes every state the builder emits, in the order their difs
// ended.
func (e *Engine) onState(s *replay.State) {
	if e.bh != nil {
		// On the rebuild's goroutine: the states are added in batches,
		// so the fast pass seldom waits for the lock.
		e.bh.batch = append(e.bh.batch, s)
		if len(e.bh.batch) >= stateBatch {
			e.addStates()
		}
		return
	}
	e.addState(s)
	e.stateAdded(s)
}

// addState puts a rebuilt state in the timeline and the figures.
func (e *Engine) addState(s *replay.State) {
	if e.timeline != nil {
		if err := e.timeline.Add(s); err != nil && e.cap.timelineErr == nil {
			e.cap.timelineErr = err
			e.warnf("state timeline: %v", err)
		}
		e.applyAcks(s.Seq + 1)
	}
	e.difs.state(s)
	if e.health != nil {
		e.health.state(s)
	}
	if e.finds != nil {
		e.finds.state(s)
	}
}

// stateAdded emits a state once it is in the timeline.
func (e *Engine) stateAdded(s *replay.State) {
	s.Dif, s.Checkpoint, s.Data = nil, nil, nil
	e.order.emitted(s.Seq)
	if e.order.on {
		e.order.push(s)
		e.releaseStates(false)
	}
}

// releaseStates emits the buffered states that no later state can precede
// in capture order (all of them with all).
func (e *Engine) releaseStates(all bool) {
	water := -1
	if !all {
		water = e.order.watermark()
		if n := e.pendingN(); n >= 0 && (water < 0 || n < water) {
			water = n
		}
	}
	for {
		s := e.order.pop(water)
		if s == nil {
			return
		}
		if e.bh != nil {
			e.emitNow(StateEvent{s}) // on the rebuild's goroutine, without the lock
		} else {
			e.emit(StateEvent{s})
		}
	}
}
