package replay

// The states a chain keeps as bases: the ring of recent ones, and the
// acknowledged ones copied out of it.

// keepAcked keeps the newest rebuilt state of frame n as an acknowledged
// base.
func (c *chain) keepAcked(n int32) {
	var src *kept
	slot := -1
	for i := range c.ring {
		k := &c.ring[i]
		if k.data != nil && k.f.N == n && (src == nil || k.seq > src.seq) {
			src, slot = k, i
		}
	}
	if src == nil {
		return
	}
	for _, a := range c.acked {
		if a.seq == src.seq {
			return
		}
	}
	var buf []byte
	if len(c.acked) >= keptAcked {
		buf = c.acked[0].data
		c.acked = append(c.acked[:0], c.acked[1:]...)
	}
	if len(buf) != len(src.data) {
		if buf != nil {
			c.mem.Add(-int64(cap(buf)))
		}
		if !c.reserve(len(src.data)) {
			return
		}
		buf = make([]byte, len(src.data))
	}
	c.acked = append(c.acked, kept{f: src.f, seq: src.seq, data: buf, hash: src.hash, depth: src.depth, slot: slot})
}

// leave copies the acknowledged states still in ring slot i to their own
// buffers: the slot is about to hold another state.
func (c *chain) leave(i int) {
	for j := range c.acked {
		if a := &c.acked[j]; a.slot == i {
			copy(a.data, c.ring[i].data)
			a.slot = -1
		}
	}
}

// reserve takes n bytes from the builder's budget, if it has them.
func (c *chain) reserve(n int) bool {
	if c.mem.Add(int64(n)) > int64(c.opt.MaxMemory) {
		c.mem.Add(-int64(n))
		return false
	}
	return true
}

// base finds the state of frame f: a recent one, or an acknowledged one.
func (c *chain) base(f Frame) (kept, bool) {
	if c.pinned != nil && c.pinned.f == f {
		return *c.pinned, true
	}
	if i, ok := c.states[f]; ok {
		return c.ring[i], true
	}
	for i := len(c.acked) - 1; i >= 0; i-- {
		if c.acked[i].f == f {
			k := c.acked[i]
			if k.slot >= 0 {
				k.data = c.ring[k.slot].data
			}
			return k, true
		}
	}
	return kept{}, false
}

// claim gives a ring slot of size bytes for a new state: a new one while
// the ring is not full and the memory budget allows, or else the oldest,
// which stops being a base (it may be the new state's own base: the dif
// is then applied in place). It returns -1 when no slot can be had. The
// caller fills the slot's data and says which frame it holds.
func (c *chain) claim(size int) (int, []byte) {
	if len(c.ring) < c.opt.History && c.reserve(size) {
		c.ring = append(c.ring, kept{data: make([]byte, size), slot: -1})
		return len(c.ring) - 1, c.ring[len(c.ring)-1].data
	}
	if len(c.ring) == 0 {
		return -1, nil
	}
	i := c.next
	c.next = (c.next + 1) % len(c.ring)
	old := &c.ring[i]
	if j, ok := c.states[old.f]; ok && j == i {
		delete(c.states, old.f)
	}
	if len(old.data) != size {
		return -1, nil // the size never changes within a chain
	}
	c.leave(i)
	return i, old.data
}
