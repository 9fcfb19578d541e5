package statedif

// Bases are the states a server keeps for one client as bases of its next
// dif, with the game's rules (mwStateHistory): History slots; a state
// sent takes the slot of the same frame, else a free one, else the one of
// the lowest frame; an acknowledgement names the slot of its frame, or
// none when no slot holds it. V is what the caller keeps of a state (its
// bytes, or a handle to them). The zero value holds nothing.
type Bases[V any] struct {
	slots [History]Base[V]
	used  int // slots filled
	ack   int // index+1 of the acknowledged slot, 0 for none
}

// Base is one state kept: its frame and what the caller keeps of it.
type Base[V any] struct {
	Frame int32
	Value V
}

// Reset forgets every base: a new level sequence starts (frames start
// over). The slots' values stay for Add to hand back for reuse.
func (b *Bases[V]) Reset() { b.used, b.ack = 0, 0 }

// Len is the number of states kept.
func (b *Bases[V]) Len() int { return b.used }

// Kept returns the states kept, in slot order; the caller may change their
// values.
func (b *Bases[V]) Kept() []Base[V] { return b.slots[:b.used] }

// Ack takes the client's acknowledgement of frame: that state is the base
// of the next dif if it is kept, otherwise the next dif is against zeros.
// It reports whether the state is kept.
func (b *Bases[V]) Ack(frame int32) bool {
	b.ack = 0
	for i := range b.used {
		if b.slots[i].Frame == frame {
			b.ack = i + 1
		}
	}
	return b.ack > 0
}

// Add keeps the state of frame as a base and returns where its value goes:
// the slot of the same frame, a free slot, or that of the lowest frame,
// holding the value it held before (nil when new, or one Reset left).
// Replacing the acknowledged state with another frame leaves no base.
func (b *Bases[V]) Add(frame int32) *V {
	slot := -1
	for i := range b.used {
		if b.slots[i].Frame == frame {
			slot = i
		}
	}
	if slot < 0 {
		if b.used < History {
			slot = b.used
			b.used++
		} else {
			slot = 0
			for i := range b.used {
				if b.slots[i].Frame < b.slots[slot].Frame {
					slot = i
				}
			}
		}
	}
	if slot == b.ack-1 && b.slots[slot].Frame != frame {
		b.ack = 0
	}
	b.slots[slot].Frame = frame
	return &b.slots[slot].Value
}

// Base returns the base of the next dif: the acknowledged state kept, or
// ok false for none (the dif is against zeros, src 0).
func (b *Bases[V]) Base() (frame int32, v V, ok bool) {
	if b.ack == 0 {
		return 0, v, false
	}
	s := &b.slots[b.ack-1]
	return s.Frame, s.Value, true
}
