package replay

import (
	"crypto/sha256"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/pmdump/pmdump/reassemble"
)

// Entry is what a Timeline keeps of one state: everything but its bytes.
// A long capture has a million of them, so they are kept small.
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
	Sum        [32]byte
	ts, ackTS  int64 // unix nanoseconds
	dif        blob  // the compressed dif (OK states)
	base       int32 // index of the base entry, -1 for a keyframe
	ckpt       bool  // a checkpoint of the state is in the line's ckpts
	acked      bool
}

// Time is the capture time of the dif's last piece.
func (e *Entry) Time() time.Time { return time.Unix(0, e.ts) }

// AckTime is when the client first acknowledged the state (stak), zero if
// it never did.
func (e *Entry) AckTime() time.Time {
	if !e.acked {
		return time.Time{}
	}
	return time.Unix(0, e.ackTS)
}

// Acked reports whether the client acknowledged the state.
func (e *Entry) Acked() bool { return e.acked }

// Timeline indexes every state of every client for random access. It keeps
// no states: only an entry per state, each OK state's compressed dif, and a
// compressed checkpoint every few difs, all in a store that spills to a
// temporary file past a memory budget. State rebuilds any state from its
// nearest checkpoint or keyframe.
type Timeline struct {
	clients map[netip.AddrPort]*line
	past    map[netip.AddrPort][]*line // earlier sessions, see Restart
	order   []netip.AddrPort
	store   *store
	inf     reassemble.Inflater
	dif     []byte
}

type line struct {
	entries []Entry
	latest  map[Frame]int // newest OK entry of each recent frame
	recent  []Frame       // the frames in latest, oldest first
	slsns   []int         // level sequences seen
	forward []int         // entries whose base comes later
	ckpts   map[int]blob  // checkpoints, by entry (one in CheckpointEvery)
}

// unresolved marks an entry whose base state has not been added yet.
const unresolved = -2

// recentFrames bounds latest: bases and acks are always of recent states
// (the server bases difs on one of the last 8 states it sent).
const recentFrames = 4096

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
}

// NewTimeline returns an empty timeline. memBudget bounds the bytes of difs
// and checkpoints held in memory before they spill to a temporary file in
// dir ("" for the system's).
func NewTimeline(memBudget int, dir string) *Timeline {
	return &Timeline{clients: map[netip.AddrPort]*line{}, past: map[netip.AddrPort][]*line{}, store: &store{budget: memBudget, dir: dir}}
}

// Restart begins a new session of a client: the states added for it from
// now on form a new line (their frames start over), and Entries, Find and
// State see that one. Earlier sessions are kept in Sessions.
func (t *Timeline) Restart(client netip.AddrPort) {
	if l := t.clients[client]; l != nil {
		t.past[client] = append(t.past[client], l)
		delete(t.clients, client)
	}
}

// Sessions is the number of sessions of a client the timeline holds.
func (t *Timeline) Sessions(client netip.AddrPort) int {
	n := len(t.past[client])
	if t.clients[client] != nil {
		n++
	}
	return n
}

// Close releases the timeline's temporary file.
func (t *Timeline) Close() error { return t.store.close() }

// Clients returns the clients in order of their first state.
func (t *Timeline) Clients() []netip.AddrPort { return t.order }

// Entries returns a client's entries in the order their difs ended.
func (t *Timeline) Entries(client netip.AddrPort) []Entry {
	if l := t.clients[client]; l != nil {
		return l.entries
	}
	return nil
}

// Add records a state emitted by a Builder made with CheckpointEvery set.
func (t *Timeline) Add(s *State) error {
	l := t.clients[s.Client]
	if l == nil {
		l = &line{latest: map[Frame]int{}, ckpts: map[int]blob{}}
		t.clients[s.Client] = l
		if !slices.Contains(t.order, s.Client) {
			t.order = append(t.order, s.Client)
		}
	}
	e := Entry{
		Frame: Frame{s.SLSN, s.Dst}, Src: s.Src, Status: s.Status, ts: s.TS.UnixNano(), CaptureN: int32(s.N), Size: int32(s.Size),
		Compressed: int32(s.Compressed), Pieces: uint8(s.Pieces), Count: uint8(s.Count), Sum: s.Sum, Player: int8(s.Player), base: -1,
	}
	if s.Status == OK {
		var err error
		if e.dif, err = t.store.put(s.Dif); err != nil {
			return err
		}
		if s.Checkpoint != nil {
			b, err := t.store.put(s.Checkpoint)
			if err != nil {
				return err
			}
			e.ckpt = true
			l.ckpts[len(l.entries)] = b
		}
		if s.Src != 0 {
			if b, ok := l.latest[Frame{s.SLSN, s.Src}]; ok {
				e.base = int32(b)
			} else {
				// Its dif waited for the base, which is rebuilt from a dif
				// that ended later: it is linked when that state comes.
				e.base = unresolved
				l.forward = append(l.forward, len(l.entries))
			}
		}

		if !slices.Contains(l.slsns, e.SLSN) {
			l.slsns = append(l.slsns, e.SLSN)
		}
		l.remember(e.Frame, len(l.entries))
	}
	l.entries = append(l.entries, e)
	if e.Status == OK {
		l.link(len(l.entries) - 1)
	}
	return nil
}

// link makes entry i the base of the entries that were waiting for it.
func (l *line) link(i int) {
	e := &l.entries[i]
	for k := 0; k < len(l.forward); k++ {
		j := l.forward[k]
		if w := &l.entries[j]; j != i && w.SLSN == e.SLSN && w.Src == e.Frame.N {
			w.base = int32(i)
			l.forward = append(l.forward[:k], l.forward[k+1:]...)
			k--
		}
	}
	if len(l.forward) > 1024 {
		l.forward = l.forward[1:] // never linked: State reports it
	}
}

// Ack records that a client acknowledged frame n at ts. A stak does not say
// which level sequence it means; around a level change the frame can exist
// in two, so the state acknowledged is the one whose dif ended last before
// the ack.
func (t *Timeline) Ack(client netip.AddrPort, n int32, ts time.Time) {
	l := t.clients[client]
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
	if best >= 0 && !l.entries[best].acked {
		l.entries[best].ackTS, l.entries[best].acked = ts.UnixNano(), true
	}
}

// Find returns the index of the newest OK state of client at or before
// frame n of level sequence slsn, or -1. With held, only states the client
// acknowledged count: a client acknowledges every dif it applies, so those
// are the states it held.
func (t *Timeline) Find(client netip.AddrPort, slsn int, n int32, held bool) int {
	l := t.clients[client]
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

// SLSNs returns, in order, the level sequences whose rebuilt states of
// client span frame n (from their first frame to their last); when none
// does, the one whose states end last before n.
func (t *Timeline) SLSNs(client netip.AddrPort, n int32) []int {
	l := t.clients[client]
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
// capacity) and checks it against the sha256 recorded when it was first
// rebuilt.
func (t *Timeline) State(dst []byte, client netip.AddrPort, i int) ([]byte, error) {
	l := t.clients[client]
	if l == nil || i < 0 || i >= len(l.entries) || l.entries[i].Status != OK {
		return nil, fmt.Errorf("no rebuilt state %d for %s", i, client)
	}
	// Walk back to the nearest checkpoint or keyframe, then forward.
	var path []int
	for j := i; ; j = int(l.entries[j].base) {
		path = append(path, j)
		e := &l.entries[j]
		if e.base == unresolved {
			return nil, fmt.Errorf("state %v: its base %d is not in the timeline", e.Frame, e.Src)
		}
		if e.ckpt || e.base < 0 {
			break
		}
	}
	first := &l.entries[path[len(path)-1]]
	var err error
	if first.ckpt {
		z, err := t.store.get(l.ckpts[path[len(path)-1]])
		if err != nil {
			return nil, err
		}
		if dst, err = t.inf.Inflate(dst, z, int(first.Size)); err != nil {
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
	if sha256.Sum256(dst) != l.entries[i].Sum {
		return nil, fmt.Errorf("state %v rebuilt from the index differs from the first pass", l.entries[i].Frame)
	}
	return dst, nil
}

// apply applies entry e's dif to base (nil: the zero base) in place.
func (t *Timeline) apply(base []byte, e *Entry) ([]byte, error) {
	z, err := t.store.get(e.dif)
	if err != nil {
		return nil, err
	}
	t.dif, err = t.inf.Inflate(t.dif, z, int(e.Size))
	if err != nil {
		return nil, fmt.Errorf("dif %v: %w", e.Frame, err)
	}
	if base == nil {
		base = make([]byte, int(e.Size))
	}
	Sub(base, base, t.dif)
	return base, nil
}

// blob locates bytes in a store: offset in the low 40 bits (1 TiB), length
// in the high 24 (16 MiB).
type blob uint64

func mkblob(off int64, n int) blob { return blob(uint64(off) | uint64(n)<<40) }
func (b blob) off() int64          { return int64(b & (1<<40 - 1)) }
func (b blob) len() int            { return int(b >> 40) }

// store holds blobs in memory up to a budget, then in a temporary file.
type store struct {
	budget int
	dir    string
	mem    []byte
	file   *os.File
	size   int64 // bytes in the file
	buf    []byte
}

func (s *store) put(b []byte) (blob, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if len(b) >= 1<<24 {
		return 0, fmt.Errorf("timeline store: %d-byte blob", len(b))
	}
	if s.file == nil && len(s.mem)+len(b) <= s.budget {
		off := int64(len(s.mem))
		s.mem = append(s.mem, b...)
		return mkblob(off, len(b)), nil
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "pmdump-timeline-*")
		if err != nil {
			return 0, fmt.Errorf("timeline store: %w", err)
		}
		os.Remove(f.Name()) // gone when closed, whatever happens
		s.file = f
	}
	if _, err := s.file.WriteAt(b, s.size); err != nil {
		return 0, fmt.Errorf("timeline store: %w", err)
	}
	bl := mkblob(int64(len(s.mem))+s.size, len(b))
	s.size += int64(len(b))
	return bl, nil
}

func (s *store) get(b blob) ([]byte, error) {
	off, n := b.off(), b.len()
	if off+int64(n) <= int64(len(s.mem)) {
		return s.mem[off : off+int64(n)], nil
	}
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	buf := s.buf[:n]
	if _, err := s.file.ReadAt(buf, off-int64(len(s.mem))); err != nil {
		return nil, fmt.Errorf("timeline store: %w", err)
	}
	return buf, nil
}

func (s *store) close() error {
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}
