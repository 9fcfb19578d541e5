package engine

import "github.com/pmdump/pmdump/replay"

// recentFrames remembers a value for each of the last frames added (at most
// max of them, the oldest addition forgotten first), as a Go map with a queue
// of its keys beside it would, for the per-packet paths: under that constant
// churn a Go map spends most of its time probing past its deleted slots.
//
// The frames of a game rise one by one, so most frames have a slot of
// their own in a table indexed by the frame's number (offset by its level
// sequence, whose frames start again from 0): one look, in memory the
// frames before and after share, and a frame that is not there is known
// at once. A frame whose slot another frame holds goes to an
// open-addressed table beside it (linear probing, deletion by backward
// shift: no deleted slots). Both are at most half full (and one), and
// grow as needed; the order of additions is in a ring.
//
// Forgetting the oldest addition deletes its key whatever became of it since,
// as deleting the queue's first key from a map does: a key deleted and added
// again is forgotten when its first addition is.
type recentFrames[V any] struct {
	direct []recentSlot[V] // by directFrame
	count  int             // frames in direct
	over   frameTable[V]   // the frames whose direct slot another holds
	max    int
	ring   []replay.Frame // additions, oldest at head once full
	head   int
}

// recentSlot is one slot of a table: the frame's two numbers, its home slot
// (in a frameTable) and whether the slot is used come first, packed in 16
// bytes.
type recentSlot[V any] struct {
	slsn int
	n    int32
	home uint16 // hashFrame's slot (tables have at most 1<<16 slots)
	used bool
	val  V
}

func (s *recentSlot[V]) is(k replay.Frame) bool { return s.n == k.N && s.slsn == k.SLSN }

// maxRecentFrames is the most frames a recentFrames remembers: its tables
// have at most 1<<16 slots.
const maxRecentFrames = 1 << 14

func newRecentFrames[V any](max int) *recentFrames[V] {
	return &recentFrames[V]{max: min(max, maxRecentFrames)}
}

// directFrame is a frame's slot in a direct table of mask+1 slots: its
// number, offset by its level sequence.
func directFrame(k replay.Frame, mask int) int {
	return int(uint64(uint32(k.N))+uint64(k.SLSN)*0x9e3779b97f4a7c15) & mask
}

// len is the number of frames remembered.
func (r *recentFrames[V]) len() int { return r.count + r.over.count }

// find returns k's value's place: in direct (over false) or in over, at i;
// i is -1 when k is not there.
func (r *recentFrames[V]) find(k replay.Frame) (i int, over bool) {
	if len(r.direct) == 0 {
		return -1, false
	}
	i = directFrame(k, len(r.direct)-1)
	if s := &r.direct[i]; s.used && s.is(k) {
		return i, false
	}
	if r.over.count == 0 {
		return -1, false
	}
	return r.over.find(k), true
}

// slot returns k's slot, nil if k is not there.
func (r *recentFrames[V]) slot(k replay.Frame) *recentSlot[V] {
	i, over := r.find(k)
	switch {
	case i < 0:
		return nil
	case over:
		return &r.over.slots[i]
	}
	return &r.direct[i]
}

// get returns k's value and whether k is there.
func (r *recentFrames[V]) get(k replay.Frame) (V, bool) {
	if s := r.slot(k); s != nil {
		return s.val, true
	}
	var zero V
	return zero, false
}

// has reports whether k is there.
func (r *recentFrames[V]) has(k replay.Frame) bool { i, _ := r.find(k); return i >= 0 }

// set changes the value of k, which is there.
func (r *recentFrames[V]) set(k replay.Frame, v V) {
	if s := r.slot(k); s != nil {
		s.val = v
	}
}

// add adds k with v when k is not there, and then forgets the oldest
// addition past max; it reports whether k was added.
func (r *recentFrames[V]) add(k replay.Frame, v V) bool {
	if i, _ := r.find(k); i >= 0 {
		return false
	}
	if len(r.direct) == 0 || r.len() > len(r.direct)/2 {
		r.grow() // at most half full and one, so max+1 fit a power of two twice max
	}
	r.insert(k, v)
	if len(r.ring) < r.max+1 {
		r.ring = append(r.ring, k)
		if len(r.ring) <= r.max {
			return true
		}
		r.head = 0
	} else {
		r.ring[r.head] = k // the slot of the addition forgotten last time
		r.head = (r.head + 1) % len(r.ring)
	}
	// The ring holds max+1 additions, the newest just before head: forget
	// the oldest, at head.
	r.del(r.ring[r.head])
	return true
}

func (r *recentFrames[V]) insert(k replay.Frame, v V) {
	if s := &r.direct[directFrame(k, len(r.direct)-1)]; !s.used {
		*s = recentSlot[V]{slsn: k.SLSN, n: k.N, used: true, val: v}
		r.count++
		return
	}
	r.over.add(k, v)
}

func (r *recentFrames[V]) grow() {
	old, oldOver := r.direct, r.over
	r.direct = make([]recentSlot[V], max(16, 2*len(old)))
	r.count, r.over = 0, frameTable[V]{}
	for _, t := range [][]recentSlot[V]{old, oldOver.slots} {
		for _, s := range t {
			if s.used {
				r.insert(replay.Frame{SLSN: s.slsn, N: s.n}, s.val)
			}
		}
	}
}

// del deletes k if it is there.
func (r *recentFrames[V]) del(k replay.Frame) {
	i, over := r.find(k)
	switch {
	case i < 0:
	case over:
		r.over.del(i)
	default:
		r.direct[i] = recentSlot[V]{}
		r.count--
	}
}

// frameTable is an open-addressed table of frames (linear probing,
// deletion by backward shift), at most half full (and one).
type frameTable[V any] struct {
	slots []recentSlot[V]
	count int
}

// hashFrame mixes a frame's two numbers (the splitmix64 finaliser), so
// frames whose direct slots clash spread over the table.
func hashFrame(k replay.Frame) uint64 {
	h := uint64(k.SLSN)*0x9e3779b97f4a7c15 ^ uint64(uint32(k.N))
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// find returns k's slot, or -1.
func (t *frameTable[V]) find(k replay.Frame) int {
	if t.count == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := int(hashFrame(k)) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return -1
		}
		if s.is(k) {
			return i
		}
	}
}

// add adds k, which is not there.
func (t *frameTable[V]) add(k replay.Frame, v V) {
	if len(t.slots) == 0 || t.count >= len(t.slots)/2 {
		old := t.slots
		t.slots, t.count = make([]recentSlot[V], max(16, 2*len(old))), 0
		for _, s := range old {
			if s.used {
				t.add(replay.Frame{SLSN: s.slsn, N: s.n}, s.val)
			}
		}
	}
	mask := len(t.slots) - 1
	home := int(hashFrame(k)) & mask
	i := home
	for t.slots[i].used {
		i = (i + 1) & mask
	}
	t.slots[i] = recentSlot[V]{slsn: k.SLSN, n: k.N, home: uint16(home), used: true, val: v}
	t.count++
}

// del empties slot i.
func (t *frameTable[V]) del(i int) {
	mask := len(t.slots) - 1
	t.count--
	for {
		t.slots[i] = recentSlot[V]{}
		j := i
		for {
			j = (j + 1) & mask
			if !t.slots[j].used {
				return
			}
			// The entry at j stays unless its home slot is cyclically
			// outside (i, j]: then it moves into the hole at i.
			home := int(t.slots[j].home)
			if (i <= j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
				t.slots[i] = t.slots[j]
				i = j
				break
			}
		}
	}
}
