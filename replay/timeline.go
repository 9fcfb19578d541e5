package replay

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/klauspost/compress/s2"

	"github.com/pmdump/pmdump/internal/spill"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
)

// Entry is what a Timeline keeps of one state: everything but its bytes.
// A long capture has a million of them, so they are kept small (72
// bytes): the state's Hash, read only to check a state rebuilt again, is
// in the timeline's store beside its dif (see Timeline.Hash), and whether
// a checkpoint of it is kept is its line's to know.
type Entry struct {
	Frame
	Src        int32
	Status     Status
	Pieces     uint8
	Count      uint8
	Player     int8
	Size       int32
	Compressed int32
	CaptureN   int32 // capture frame number of the dif's last piece
	Seq        int32 // the state's Seq (see State)
	ts, ackTS  int64 // unix nanoseconds; ackTS is noAck until acknowledged
	dif        blob  // the compressed dif and the state's hash (OK states)
	base       int32 // index of the base entry, -1 for a keyframe
}

// noAck is the ackTS of a state not acknowledged: no capture is from 1677.
const noAck = math.MinInt64

// Time is the capture time of the dif's last piece.
func (e *Entry) Time() time.Time { return time.Unix(0, e.ts) }

// AckTime is when the client first acknowledged the state (stak), zero if
// it never did.
func (e *Entry) AckTime() time.Time {
	if e.ackTS == noAck {
		return time.Time{}
	}
	return time.Unix(0, e.ackTS)
}

// Acked reports whether the client acknowledged the state.
func (e *Entry) Acked() bool { return e.ackTS != noAck }

// Keyframe reports whether the state was sent against an all-zero base.
func (e *Entry) Keyframe() bool { return e.Src == 0 }

// Timeline indexes every state of every line (a client in one
// conversation) for random access. It keeps no states: only an entry per
// state, each OK state's compressed dif, and a compressed checkpoint every
// few difs, all in a store that spills to a temporary file past a memory
// budget. State rebuilds any state from its nearest checkpoint or keyframe,
// through the bases the rebuild really used. A Timeline is not safe for
// concurrent use.
type Timeline struct {
	lines  map[reassemble.Chain]*line
	expect map[reassemble.Chain]int // room for the entries of lines not added yet (see Expect)
	// reserved are the lines in order with no entry yet (see Reserve).
	reserved map[reassemble.Chain]bool
	order    []reassemble.Chain
	store    *store
	inf      reassemble.Inflater
	dif      []byte
	// The memory budget, and the bytes the lines' entries take of it
	// (what is left is the store's).
	budget     int
	entryBytes int
}

type line struct {
	entries []Entry
	latest  map[Frame]int     // newest OK entry of each recent frame
	recent  []Frame           // the frames in latest, oldest first
	slsns   []int             // the last level sequences seen, newest last
	forward map[int32][]int32 // entries waiting for the base of that Seq
	ckpts   map[int]blob      // checkpoints, by entry (one in CheckpointEvery)
}

// unresolved marks an entry whose base state has not been added yet.
const unresolved = -2

// recentFrames bounds latest: acks are of recent states.
const recentFrames = 4096

// recentSLSNs is how many level sequences an ack looks in: around a level
// change a frame exists in two.
const recentSLSNs = 4

// maxForward bounds the entries waiting for a base that comes later.
const maxForward = 4096

func (l *line) remember(f Frame, i int) {
	if _, ok := l.latest[f]; !ok {
		l.recent = append(l.recent, f)
		if len(l.recent) > 2*recentFrames {
			for _, old := range l.recent[:len(l.recent)-recentFrames] {
				delete(l.latest, old)
			}
			l.recent = append(l.recent[:0], l.recent[len(l.recent)-recentFrames:]...)
		}
	}
	l.latest[f] = i
	if n := len(l.slsns); n == 0 || l.slsns[n-1] != f.SLSN {
		l.slsns = append(l.slsns, f.SLSN)
		if len(l.slsns) > recentSLSNs {
			l.slsns = append(l.slsns[:0], l.slsns[len(l.slsns)-recentSLSNs:]...)
		}
	}
}

// NewTimeline returns an empty timeline. memBudget bounds the bytes it
// holds in memory: its entries, which never spill, take their share first;
// the difs and checkpoints spill to a temporary file in dir ("" for the
// system's) past what is left of it.
func NewTimeline(memBudget int, dir string) *Timeline {
	return &Timeline{lines: map[reassemble.Chain]*line{}, budget: memBudget,
		store: &store{s: spill.New("timeline store", memBudget, dir, "pmdump-timeline-*")}}
}

// entrySize is the bytes of an Entry.
const entrySize = int(unsafe.Sizeof(Entry{}))

// grown accounts for a line's entries grown from room for was entries to
// room for now: what the store may keep in memory shrinks by as much.
func (t *Timeline) grown(was, now int) {
	if was == now {
		return
	}
	t.entryBytes += (now - was) * entrySize
	t.store.s.SetBudget(max(t.budget-t.entryBytes, 0))
}

// Close releases the timeline's temporary file.
func (t *Timeline) Close() error { return t.store.close() }

// Lines returns the lines in order of their first state.
func (t *Timeline) Lines() []reassemble.Chain { return t.order }

// Reserve keeps line key's place in Lines before its first state is
// added: lines come in the order they are reserved or first added, so a
// rebuild that adds some lines' states ahead of others' (the line a user
// looks at first) keeps the order of their first difs. Until its first
// state, the line has no entries.
func (t *Timeline) Reserve(key reassemble.Chain) {
	if t.lines[key] != nil || t.reserved[key] {
		return
	}
	if t.reserved == nil {
		t.reserved = map[reassemble.Chain]bool{}
	}
	t.reserved[key] = true
	t.order = append(t.order, key)
}

// Entries returns a line's entries in the order their difs ended.
func (t *Timeline) Entries(l reassemble.Chain) []Entry {
	if x := t.lines[l]; x != nil {
		return x.entries
	}
	return nil
}

// Len is the number of entries of every line.
func (t *Timeline) Len() int {
	n := 0
	for _, l := range t.lines {
		n += len(l.entries)
	}
	return n
}

// StoreBytes is the bytes of difs and checkpoints the timeline holds in
// memory and in its temporary file.
func (t *Timeline) StoreBytes() (mem, file int64) { return t.store.s.Bytes() }

// Add records a state emitted by a Builder made with CheckpointEvery set.
// States must be added in the order the Builder emits them.
func (t *Timeline) Add(s *State) error {
	key := s.Line()
	l := t.lines[key]
	if l == nil {
		l = &line{latest: map[Frame]int{}, ckpts: map[int]blob{}, forward: map[int32][]int32{}}
		if n := t.expect[key]; n > 0 {
			l.entries = make([]Entry, 0, n)
			t.grown(0, n)
			delete(t.expect, key)
		}
		t.lines[key] = l
		if t.reserved[key] {
			delete(t.reserved, key)
		} else {
			t.order = append(t.order, key)
		}
	}
	e := Entry{
		Frame: Frame{s.SLSN, s.Dst}, Src: s.Src, Status: s.Status, ts: s.TS.UnixNano(), CaptureN: int32(s.N), Size: int32(s.Size),
		Compressed: int32(s.Compressed), Pieces: uint8(min(s.Pieces, 255)), Count: uint8(min(s.Count, 255)),
		Player: int8(max(min(s.Player, 127), -1)), base: -1, Seq: int32(s.Seq), ackTS: noAck,
	}
	i := int32(len(l.entries))
	if s.Status == OK {
		var err error
		if e.dif, err = t.store.putDif(s.Dif, s.Hash); err != nil {
			return err
		}
		if s.Checkpoint != nil {
			b, err := t.store.put(s.Checkpoint)
			if err != nil {
				return err
			}
			l.ckpts[int(i)] = b
		}
		if s.Src != 0 {
			if b := l.bySeq(s.BaseSeq); b >= 0 {
				e.base = int32(b)
			} else {
				// Its dif waited for the base, which is rebuilt from a dif
				// that ended later: it is linked when that state comes.
				e.base = unresolved
				if len(l.forward) < maxForward {
					l.forward[int32(s.BaseSeq)] = append(l.forward[int32(s.BaseSeq)], i)
				}
			}
		}
		l.remember(e.Frame, int(i))
	}
	was := cap(l.entries)
	l.entries = append(l.entries, e)
	t.grown(was, cap(l.entries))
	if e.Status == OK {
		if w, ok := l.forward[e.Seq]; ok {
			for _, j := range w {
				l.entries[j].base = i
			}
			delete(l.forward, e.Seq)
		}
	}
	return nil
}

// maxExpect bounds the room Expect gives a line's entries.
const maxExpect = 1 << 24

// Expect says that about n states of a line come in all: its entries get
// room for them at once. A long line's entries are the timeline's largest
// allocation; grown as they come they are copied at each growth and keep
// room never used.
func (t *Timeline) Expect(key reassemble.Chain, n int) {
	if n <= 0 || n > maxExpect {
		return
	}
	if l := t.lines[key]; l != nil {
		if n > cap(l.entries) {
			was := cap(l.entries)
			l.entries = slices.Grow(l.entries, n-len(l.entries))
			t.grown(was, cap(l.entries))
		}
		return
	}
	if t.expect == nil {
		t.expect = map[reassemble.Chain]int{}
	}
	t.expect[key] = n
}

// bySeq finds the entry of the state with Seq seq, or -1.
func (l *line) bySeq(seq int) int {
	i := sort.Search(len(l.entries), func(i int) bool { return int(l.entries[i].Seq) >= seq })
	if i < len(l.entries) && int(l.entries[i].Seq) == seq {
		return i
	}
	return -1
}

// Ack records that a line's client acknowledged frame n at ts. A stak does
// not say which level sequence it means; around a level change the frame
// can exist in two, so the state acknowledged is the one whose dif ended
// last before the ack.
func (t *Timeline) Ack(key reassemble.Chain, n int32, ts time.Time) {
	l := t.lines[key]
	if l == nil {
		return
	}
	best := -1
	for _, k := range l.slsns {
		i, ok := l.latest[Frame{k, n}]
		if !ok || l.entries[i].ts > ts.UnixNano() {
			continue
		}
		if best < 0 || l.entries[i].ts > l.entries[best].ts {
			best = i
		}
	}
	if best >= 0 && !l.entries[best].Acked() {
		l.entries[best].ackTS = ts.UnixNano()
	}
}

// Find returns the index of the newest OK state of a line at or before
// frame n of level sequence slsn, or -1. With held, only states the client
// acknowledged count: a client acknowledges every dif it applies, so those
// are the states it held.
func (t *Timeline) Find(key reassemble.Chain, slsn int, n int32, held bool) int {
	l := t.lines[key]
	if l == nil {
		return -1
	}
	best := -1
	for i := range l.entries {
		e := &l.entries[i]
		if e.Status != OK || e.SLSN != slsn || e.Frame.N > n || held && !e.Acked() {
			continue
		}
		if best < 0 || e.Frame.N >= l.entries[best].Frame.N {
			best = i
		}
	}
	return best
}

// SLSNs returns, in order, the level sequences whose rebuilt states of a
// line span frame n (from their first frame to their last); when none
// does, the one whose states end last before n.
func (t *Timeline) SLSNs(key reassemble.Chain, n int32) []int {
	l := t.lines[key]
	if l == nil {
		return nil
	}
	type span struct{ lo, hi int32 }
	spans := map[int]*span{}
	for i := range l.entries {
		e := &l.entries[i]
		if e.Status != OK {
			continue
		}
		sp := spans[e.SLSN]
		if sp == nil {
			spans[e.SLSN] = &span{e.Frame.N, e.Frame.N}
			continue
		}
		sp.lo, sp.hi = min(sp.lo, e.Frame.N), max(sp.hi, e.Frame.N)
	}
	var out []int
	for k, sp := range spans {
		if sp.lo <= n && n <= sp.hi {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		// Past the end of a level sequence (or of the capture): the one
		// that ended last before n.
		best := -1
		for k, sp := range spans {
			if sp.hi < n && (best < 0 || sp.hi > spans[best].hi) {
				best = k
			}
		}
		if best >= 0 {
			out = append(out, best)
		}
	}
	sort.Ints(out)
	return out
}

// State rebuilds the state of entry i of client into dst (reusing its
// capacity) and checks it against the Hash recorded when it was first
// rebuilt.
func (t *Timeline) State(dst []byte, key reassemble.Chain, i int) ([]byte, error) {
	l := t.lines[key]
	if l == nil || i < 0 || i >= len(l.entries) || l.entries[i].Status != OK {
		return nil, fmt.Errorf("no rebuilt state %d for %s", i, key)
	}
	// Walk back to the nearest checkpoint or keyframe, then forward. The
	// bases are the ones the rebuild used, so the walk ends; it is bounded
	// all the same.
	var path []int
	var ckpt blob // the checkpoint the walk ends at, if it does
	fromCkpt := false
	for j := i; ; j = int(l.entries[j].base) {
		if len(path) > len(l.entries) {
			return nil, fmt.Errorf("state %v: its chain of bases does not end", l.entries[i].Frame)
		}
		path = append(path, j)
		e := &l.entries[j]
		if e.base == unresolved {
			return nil, fmt.Errorf("state %v: its base %d is not in the timeline", e.Frame, e.Src)
		}
		if b, ok := l.ckpts[j]; ok {
			ckpt, fromCkpt = b, true
			break
		}
		if e.base < 0 {
			break
		}
	}
	first := &l.entries[path[len(path)-1]]
	var err error
	if fromCkpt {
		z, err := t.store.get(ckpt)
		if err != nil {
			return nil, err
		}
		if dst, err = decodeCheckpoint(dst, z, int(first.Size)); err != nil {
			return nil, fmt.Errorf("checkpoint %v: %w", first.Frame, err)
		}
	} else {
		if dst, err = t.apply(nil, first); err != nil {
			return nil, err
		}
	}
	for k := len(path) - 2; k >= 0; k-- {
		if dst, err = t.apply(dst, &l.entries[path[k]]); err != nil {
			return nil, err
		}
	}
	want, err := t.Hash(key, i)
	if err != nil {
		return nil, err
	}
	if statedif.HashOf(dst) != want {
		return nil, fmt.Errorf("state of frame %d (slsn %d) rebuilt from the index differs from the first pass", l.entries[i].Frame.N, l.entries[i].Frame.SLSN)
	}
	return dst, nil
}

// Hash returns the Hash of the state of entry i of a line (see State): the
// hash its rebuild computed, kept to check the state when it is rebuilt
// again.
func (t *Timeline) Hash(key reassemble.Chain, i int) (statedif.Hash, error) {
	l := t.lines[key]
	if l == nil || i < 0 || i >= len(l.entries) || l.entries[i].Status != OK {
		return statedif.Hash{}, fmt.Errorf("no rebuilt state %d for %s", i, key)
	}
	b, err := t.store.get(l.entries[i].dif)
	if err != nil {
		return statedif.Hash{}, err
	}
	if len(b) < hashBytes {
		return statedif.Hash{}, fmt.Errorf("state %v: %d-byte record in the timeline store", l.entries[i].Frame, len(b))
	}
	h := b[len(b)-hashBytes:]
	return statedif.Hash{binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:])}, nil
}

// apply applies entry e's dif to base (nil: the zero base) in place.
func (t *Timeline) apply(base []byte, e *Entry) ([]byte, error) {
	z, err := t.store.get(e.dif)
	if err != nil {
		return nil, err
	}
	if len(z) < hashBytes {
		return nil, fmt.Errorf("dif %v: %d-byte record in the timeline store", e.Frame, len(z))
	}
	z = z[:len(z)-hashBytes]
	t.dif, err = t.inf.Inflate(t.dif, z, int(e.Size))
	if err != nil {
		return nil, fmt.Errorf("dif %v: %w", e.Frame, err)
	}
	if base == nil {
		base = make([]byte, int(e.Size))
	}
	statedif.Sub(base, base, t.dif)
	return base, nil
}

// decodeCheckpoint decodes a checkpoint (see buffers.compress) of a state
// of size bytes into dst.
func decodeCheckpoint(dst, z []byte, size int) ([]byte, error) {
	n, err := s2.DecodedLen(z)
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, fmt.Errorf("decodes to %d bytes, the state has %d", n, size)
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.Decode(dst[:n], z)
}
