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
	for k := int32(0); k <= lookAhead; k++ {
		at := e.Add(k)
		if next != nil && (next.Check == Confirmed || next.Check == Moved) && !at.Less(next.At) && next.Frame <= at.Frame {
			// The state shows the next input: this one was read no later
			// than it, and (after k frames without it) no earlier.
			a.Check = Confirmed
			if k > 0 {
				a.At, a.Check, a.Reason = next.At, Moved, "read with the client's next input"
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
