package engine

import (
	"time"

	"github.com/pmdump/pmdump/replay"
)

// stamp is a capture time as the frame tables keep it: 16 bytes without a
// pointer (a time.Time has its location's), the same instant to the
// nanosecond whatever the year.
type stamp struct {
	sec  int64
	nsec int32
}

func stampOf(t time.Time) stamp { return stamp{t.Unix(), int32(t.Nanosecond())} }

// time is the stamp's instant, in UTC.
func (s stamp) time() time.Time { return time.Unix(s.sec, int64(s.nsec)).UTC() }

// recentFrames remembers a value for each of the last frames added (at most
// max of them, the oldest addition forgotten first), as a Go map with a queue
// of its keys beside it would, for the per-packet paths: under that constant
// churn a Go map spends most of its time probing past its deleted slots, so
// this is an open-addressed table (linear probing, deletion by backward
// shift: no deleted slots), at most half full (and one), that grows as needed, with
// the order of additions in a ring. Consecutive frames have their home
// slots side by side (see homeFrame).
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

// recentSlot is one slot of the table: the frame's two numbers, its home
// slot and whether the slot is used come first, packed in 16 bytes.
type recentSlot[V any] struct {
	slsn int
	n    int32
	home uint16 // homeFrame's slot (tables have at most 1<<16 slots)
	used bool
	val  V
}

func (s *recentSlot[V]) is(k replay.Frame) bool { return s.n == k.N && s.slsn == k.SLSN }

// maxRecentFrames is the most frames a recentFrames remembers: its slots
// number at most 1<<16.
const maxRecentFrames = 1 << 14

func newRecentFrames[V any](max int) *recentFrames[V] {
	return &recentFrames[V]{max: min(max, maxRecentFrames)}
}

// homeFrame is the home slot of a frame in a table of mask+1 slots. The
// frames of a game rise one by one: each run of 16 frames (of one level
// sequence) has its 16 slots side by side, so the frames looked up one
// after the other are mostly in the cache, and the runs are spread over
// the table by a multiplicative hash of their numbers, so no run of
// used slots grows long.
func homeFrame(k replay.Frame, mask int) int {
	h := (uint64(k.SLSN)*0x9e3779b97f4a7c15 ^ uint64(uint32(k.N)>>homeRun)) * 0xbf58476d1ce4e5b9
	h ^= h >> 29
	return int(h<<homeRun|uint64(k.N)&(1<<homeRun-1)) & mask
}

// homeRun is the log2 of the frames whose slots are side by side.
const homeRun = 4

// find returns k's slot, or -1.
func (r *recentFrames[V]) find(k replay.Frame) int {
	if r.count == 0 {
		return -1
	}
	if s := &r.slots[r.last]; s.used && s.is(k) {
		return r.last
	}
	mask := len(r.slots) - 1
	for i := homeFrame(k, mask); ; i = (i + 1) & mask {
		s := &r.slots[i]
		if !s.used {
			return -1
		}
		if s.is(k) {
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
	home := homeFrame(k, mask)
	i := home
	for r.slots[i].used {
		i = (i + 1) & mask
	}
	r.slots[i] = recentSlot[V]{slsn: k.SLSN, n: k.N, home: uint16(home), used: true, val: v}
	r.count++
}

func (r *recentFrames[V]) grow() {
	old := r.slots
	r.slots = make([]recentSlot[V], max(16, 2*len(old)))
	r.count = 0
	for _, s := range old {
		if s.used {
			r.insert(replay.Frame{SLSN: s.slsn, N: s.n}, s.val)
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
			home := int(r.slots[j].home)
			if (i <= j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
				r.slots[i] = r.slots[j]
				i = j
				break
			}
		}
	}
}
