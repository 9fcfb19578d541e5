package engine

import "github.com/pmdump/pmdump/replay"

// recentFrames remembers a value for each of the last frames added (at most
// max of them, the oldest addition forgotten first), as a Go map with a queue
// of its keys beside it would, for the per-packet paths: under that constant
// churn a Go map spends most of its time probing past its deleted slots, so
// this is an open-addressed table (linear probing, deletion by backward
// shift: no deleted slots), at most half full (and one), that grows as needed, with
// the order of additions in a ring.
//
// Forgetting the oldest addition deletes its key whatever became of it since,
// as deleting the queue's first key from a map does: a key deleted and added
// again is forgotten when its first addition is.
type recentFrames[V any] struct {
	slots []recentSlot[V]
	count int
	max   int
	ring  []replay.Frame // additions, oldest at head once full
	head  int
	last  int // the slot found last: a client acknowledges one frame many times
}

type recentSlot[V any] struct {
	key  replay.Frame
	val  V
	used bool
}

func newRecentFrames[V any](max int) *recentFrames[V] { return &recentFrames[V]{max: max} }

// hashFrame mixes a frame's two numbers (the splitmix64 finaliser), so
// consecutive frames spread over the table.
func hashFrame(k replay.Frame) uint64 {
	h := uint64(k.SLSN)*0x9e3779b97f4a7c15 ^ uint64(uint32(k.N))
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// find returns k's slot, or -1.
func (r *recentFrames[V]) find(k replay.Frame) int {
	if r.count == 0 {
		return -1
	}
	if s := &r.slots[r.last]; s.used && s.key == k {
		return r.last
	}
	mask := len(r.slots) - 1
	for i := int(hashFrame(k)) & mask; ; i = (i + 1) & mask {
		s := &r.slots[i]
		if !s.used {
			return -1
		}
		if s.key == k {
			r.last = i
			return i
		}
	}
}

// get returns k's value and whether k is there.
func (r *recentFrames[V]) get(k replay.Frame) (V, bool) {
	if i := r.find(k); i >= 0 {
		return r.slots[i].val, true
	}
	var zero V
	return zero, false
}

// has reports whether k is there.
func (r *recentFrames[V]) has(k replay.Frame) bool { return r.find(k) >= 0 }

// set changes the value of k, which is there.
func (r *recentFrames[V]) set(k replay.Frame, v V) {
	if i := r.find(k); i >= 0 {
		r.slots[i].val = v
	}
}

// add adds k with v when k is not there, and then forgets the oldest
// addition past max; it reports whether k was added.
func (r *recentFrames[V]) add(k replay.Frame, v V) bool {
	if r.find(k) >= 0 {
		return false
	}
	if len(r.slots) == 0 || r.count > len(r.slots)/2 {
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
	mask := len(r.slots) - 1
	i := int(hashFrame(k)) & mask
	for r.slots[i].used {
		i = (i + 1) & mask
	}
	r.slots[i] = recentSlot[V]{key: k, val: v, used: true}
	r.count++
}

func (r *recentFrames[V]) grow() {
	old := r.slots
	r.slots = make([]recentSlot[V], max(16, 2*len(old)))
	r.count = 0
	for _, s := range old {
		if s.used {
			r.insert(s.key, s.val)
		}
	}
}

// del deletes k if it is there.
func (r *recentFrames[V]) del(k replay.Frame) {
	i := r.find(k)
	if i < 0 {
		return
	}
	mask := len(r.slots) - 1
	r.count--
	for {
		r.slots[i] = recentSlot[V]{}
		j := i
		for {
			j = (j + 1) & mask
			if !r.slots[j].used {
				return
			}
			// The entry at j stays unless its home slot is cyclically
			// outside (i, j]: then it moves into the hole at i.
			home := int(hashFrame(r.slots[j].key)) & mask
			if (i <= j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
				r.slots[i] = r.slots[j]
				i = j
				break
			}
		}
	}
}
