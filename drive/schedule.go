package drive

import (
	"encoding/binary"
	"fmt"

	"github.com/pmdump/pmdump/schema"
)

// lookAhead is how many frames after the packet order's (or its own) an
// input may have been read in: the states checked are those of up to
// lookAhead frames later (a second of a server that stalled).
const lookAhead = 40

// controlsAt returns player p's control bits in the recorded state k.
func (r *Recording) controlsAt(k Key, p int) (byte, bool) {
	b := r.players[k]
	if b == nil || r.Schema == nil {
		return 0, false
	}
	reg := r.Schema.Region("psyn")
	if reg == nil {
		return 0, false
	}
	return controls(reg, b, p)
}

// controls returns player p's control bits from the player region b.
func controls(reg *schema.Region, b []byte, p int) (byte, bool) {
	if p < 0 || (p+1)*reg.Elem > len(b) {
		return 0, false
	}
	rec := b[p*reg.Elem : (p+1)*reg.Elem]
	var m byte
	for i, name := range controlNames {
		f := reg.Field(name)
		if f == nil {
			return 0, false
		}
		if binary.LittleEndian.Uint32(rec[f.Offset:]) != 0 {
			m |= 1 << i
		}
	}
	return m, true
}

// check confirms or corrects the frame of every input with the recorded
// states. The server read an input in the frame of the newest state sent
// before it arrived or later, and no later than the client's next input
// (one socket delivers in order). It enters an input at its own frame when
// that is still to come, else at once (going back to that frame), so the
// state made in the frame the server read it in shows the player's new
// controls, and only a later state does if the server read it later.
// Inputs are checked from the last to the first, so the next input's frame
// is known when an input's own state shows the next one instead.
func (r *Recording) check() {
	player := map[int]int{}
	for _, c := range r.Clients {
		player[c.N] = c.Player
	}
	next := map[int]*Action{} // the next input of each client
	for i := len(r.Actions) - 1; i >= 0; i-- {
		a := r.Actions[i]
		switch a.Kind {
		case Join:
			if a.Check != "" {
				continue
			}
			if a.At == a.Ordered || a.Ordered == (Key{}) {
				a.Check = Confirmed
			} else {
				a.Check = Moved
			}
			continue
		case Input:
		default:
			continue
		}
		nx := next[a.Client]
		next[a.Client] = a
		if a.Check == "" {
			r.checkInput(a, player[a.Client], nx)
		}
	}
	// One socket delivers in order: a client's input is read no earlier
	// than the one before it. An input whose own frame is still to come
	// shows the same in the states whenever it was read up to then, so
	// one placed before its predecessor is read with it.
	last := map[int]Key{}
	for _, a := range r.Actions {
		if a.Kind != Input {
			continue
		}
		if l, ok := last[a.Client]; ok && a.At.Less(l) && a.Frame >= l.Frame {
			a.At = l
			if a.Check == Confirmed && a.At != a.Ordered {
				a.Check = Moved
			}
		}
		if l := last[a.Client]; l.Less(a.At) {
			last[a.Client] = a.At
		}
	}
}

func (r *Recording) checkInput(a *Action, p int, next *Action) {
	d := a.At
	// The state made in frame e is the first that shows the input if the
	// server read it in time: in the frame the packet order says, or by
	// its own frame when that was still to come.
	e := Key{d.SLSN, max(d.Frame, a.Frame)}
	move := a.Move & 0x3f
	if before, ok := r.controlsAt(e, p); ok && before == move {
		a.Check = Unchecked // it changes no control
		return
	}
	if a.Frame > d.Frame {
		// Early by the packet order: the server held it until its own
		// frame, whichever frame it read it in up to then; it is sent
		// when it arrived. Its controls may never show: an input that
		// arrives in a level-done phase is taken as the player's
		// acknowledgement of the level's end, not as controls.
		if got, ok := r.controlsAt(e.Add(1), p); ok && got == move {
			a.Check = Confirmed
		} else {
			a.Check, a.Reason = Unchecked, "held until its frame; its controls do not show there"
		}
		return
	}
	for k := int32(0); k <= lookAhead; k++ {
		at := e.Add(k)
		if next != nil && (next.Check == Confirmed || next.Check == Moved) && !at.Less(next.At) && next.Frame <= at.Frame {
			// The state shows the next input: this one was read no later
			// than it, and (after k frames without it) no earlier.
			// No state before shows it, so the server read it in frame at
			// itself (check then moves the client's later inputs that the
			// states cannot place exactly to no earlier than it).
			a.Check = Confirmed
			if k > 0 {
				a.At, a.Check, a.Reason = at, Moved, "read with the client's next input"
				if next.At.Less(at) && next.Frame < at.Frame {
					a.At = next.At // the next one was late itself: no later than it
				}
			}
			return
		}
		got, ok := r.controlsAt(at.Add(1), p)
		if !ok {
			a.Check, a.Reason = Uncertain, fmt.Sprintf("the state of frame %d is not in the capture", at.Frame+1)
			return
		}
		if got == move {
			a.Check = Confirmed
			if k > 0 {
				a.At, a.Check = at, Moved
			}
			return
		}
	}
	a.Check, a.Reason = Uncertain, fmt.Sprintf("the controls do not show in the states of frames %d to %d", e.Frame+1, e.Frame+lookAhead+1)
}

// Uncertain returns the inputs whose frame the capture cannot give
// exactly.
func (r *Recording) Uncertain() []*Action {
	var out []*Action
	for _, a := range r.Actions {
		if a.Check == Uncertain {
			out = append(out, a)
		}
	}
	return out
}

// Counts counts the actions by the outcome of their check.
func (r *Recording) Counts() map[Check]int {
	m := map[Check]int{}
	for _, a := range r.Actions {
		m[a.Check]++
	}
	return m
}

// holds reports whether the server holds input a, sent lead frames before
// the frame it is read in, until that frame with the same outcome: its own
// frame is not before that one, and the recorded states of those frames
// show no level-done phase (the server treats an input that arrives in
// one by the phase it arrives in, not by the input's frame).
func (r *Recording) holds(a *Action, lead int32) bool {
	if a.Kind != Input || a.Frame < a.At.Frame || r.Schema == nil {
		return false
	}
	reg := r.Schema.Region("psyn")
	if reg == nil {
		return false
	}
	f := reg.Field("level_done_mode")
	if f == nil || f.Offset+4 > reg.Elem {
		return false
	}
	for k := a.At.Add(-lead); !a.At.Less(k); k = k.Add(1) {
		b := r.players[k]
		if len(b) < reg.Elem || binary.LittleEndian.Uint32(b[f.Offset:]) != 0 {
			return false // not recorded, or the level is done
		}
	}
	return true
}
