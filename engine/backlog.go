package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/pmdump/pmdump/reassemble"
)

// rebuildOp is one thing the fast pass hands the state rebuild that runs
// behind it: a dif that ended, an acknowledgement, a line's new player or
// end, a tick of a quiet live capture, or the end of the capture.
type rebuildOp struct {
	kind  uint8
	water int // the assembler's OldestPendingN when the op was queued
	line  reassemble.Chain
	n     int32 // opAck: the frame acknowledged; opPlayer: the player; opTaken: the dif's LastN
	ts    time.Time
	msg   *reassemble.Message // opDif
	// seq is, for a dif, its place among the difs pushed (its state's
	// Seq); for any other op, the number of difs pushed before it.
	seq int
	// early marks an op taken ahead of its turn for the prioritized line
	// (not stored).
	early bool
}

const (
	opDif = iota + 1
	opAck
	opPlayer
	opEndLine
	opFlush
	// opTaken and opSkip stand, in the queue's order, for a dif and for
	// another op that were taken ahead of their turn (see prioritize).
	opTaken
	opSkip
)

// size is about what the op costs in memory: the op in the queue, its
// message and their slices as the allocator rounds them.
func (o *rebuildOp) size() int {
	n := 112
	if o.msg != nil {
		n += 288 + cap(o.msg.Compressed) + 8*cap(o.msg.Missing) + 16*((cap(o.msg.Refs)+1)/2)
		if o.msg.Err != nil {
			n += 64
		}
	}
	return n
}

// backlog is the queue between the fast pass and the state rebuild: a
// first-in first-out queue of ops, held in memory up to a budget and
// spilled past it to a temporary file, so a fast pass far ahead of the
// rebuild (a long capture read in seconds, rebuilt in a minute) costs disk,
// not memory. One goroutine pushes, one pops.
type backlog struct {
	mu     sync.Mutex
	cond   sync.Cond
	budget int
	dir    string

	mem      opQueue // in memory, from head on
	head     int
	memBytes int

	file       *os.File // unlinked temporary file, nil until needed
	wOff, rOff int64    // write and read offsets in it
	rbuf       []byte   // read-ahead from the file
	rpos       int
	wbuf       []byte
	rec        []byte // an op's record, before its length
	spilled    int64  // bytes written to the file in all
	peak       int    // the most bytes held in memory at once

	closed  bool // no more pushes
	aborted bool // pops end now
	err     error

	difs int // difs pushed so far
	pri  priority
}

func newBacklog(budget int, dir string) *backlog {
	q := &backlog{budget: budget, dir: dir}
	q.cond.L = &q.mu
	return q
}

// push queues an op. It never waits for the rebuild.
func (q *backlog) push(o rebuildOp) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.err != nil {
		return
	}
	o.seq = q.difs
	if o.kind == opDif {
		q.difs++
	}
	sz := o.size()
	// Ops go to memory only while nothing unread waits in the file: the
	// order of the queue is the order of the pushes.
	if q.wOff == q.rOff && q.memBytes+sz <= q.budget {
		q.mem.push(o)
		q.memBytes += sz
		q.peak = max(q.peak, q.memBytes)
	} else if err := q.spill(&o); err != nil {
		q.err = err
	}
	q.cond.Signal()
}

// spill appends an op to the file.
func (q *backlog) spill(o *rebuildOp) error {
	if q.file == nil {
		f, err := os.CreateTemp(q.dir, "pmdump-backlog-*")
		if err != nil {
			return fmt.Errorf("rebuild backlog: %w", err)
		}
		os.Remove(f.Name()) // gone when closed, whatever happens
		q.file = f
	}
	n := len(q.wbuf)
	q.wbuf, q.rec = appendOp(q.wbuf, q.rec[:0], o)
	q.wOff += int64(len(q.wbuf) - n)
	q.spilled += int64(len(q.wbuf) - n)
	if len(q.wbuf) >= spillWrite {
		return q.flushWrites()
	}
	return nil
}

// spillWrite is how many bytes of ops the backlog gathers before it writes
// them to its file.
const spillWrite = 256 << 10

// flushWrites writes the gathered ops to the file: they end at wOff.
func (q *backlog) flushWrites() error {
	if len(q.wbuf) == 0 {
		return nil
	}
	if _, err := q.file.WriteAt(q.wbuf, q.wOff-int64(len(q.wbuf))); err != nil {
		return fmt.Errorf("rebuild backlog: %w", err)
	}
	q.wbuf = q.wbuf[:0]
	return nil
}

// close says no more ops come: pop returns false once the queue is empty.
func (q *backlog) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// abort makes pop return false at once, and releases the file.
func (q *backlog) abort() {
	q.mu.Lock()
	q.closed, q.aborted = true, true
	q.mem.reset()
	q.head, q.memBytes = 0, 0
	if q.file != nil {
		q.file.Close()
		q.file = nil
	}
	q.wOff, q.rOff = 0, 0
	q.pri = priority{}
	q.cond.Broadcast()
	q.mu.Unlock()
}

// pop returns the oldest op, waiting for one; false when the queue is
// closed and empty, or aborted.
func (q *backlog) pop() (rebuildOp, bool) { return q.next(false) }

// next is pop; with first, an op of the prioritized line (see prioritize)
// comes ahead of its turn, marked early, when one is waiting.
func (q *backlog) next(first bool) (rebuildOp, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.aborted {
			return rebuildOp{}, false
		}
		if first {
			if o, ok := q.nextPrioritized(); ok {
				o.early = true
				return o, true
			}
		}
		if q.head < q.mem.len() {
			p := q.mem.at(q.head)
			o := *p
			*p = rebuildOp{}
			q.head++
			q.memBytes -= o.size()
			if q.head == q.mem.len() || q.head >= opChunk {
				k := q.mem.drop(q.head)
				q.head -= k
				q.pri.mem = max(q.pri.mem-k, 0)
			}
			return o, true
		}
		if q.rOff < q.wOff {
			at := q.rOff
			o, err := q.readOp()
			if err != nil {
				q.err = err
				q.aborted = true
				continue
			}
			if m, ok := q.pri.taken.take(at); ok {
				o = m
				delete(q.pri.takenAt, at)
			}
			if q.rOff == q.wOff {
				// Everything spilled is read: the file starts over.
				q.rOff, q.wOff, q.rbuf, q.rpos = 0, 0, q.rbuf[:0], 0
				q.pri.off, q.pri.buf, q.pri.base = 0, q.pri.buf[:0], 0
				q.file.Truncate(0)
			}
			return o, true
		}
		if q.closed || q.err != nil {
			return rebuildOp{}, false
		}
		q.cond.Wait()
	}
}

// readOp reads the next op from the file (q.rOff < q.wOff).
func (q *backlog) readOp() (rebuildOp, error) {
	for {
		if n, k := binary.Uvarint(q.rbuf[q.rpos:]); k > 0 && len(q.rbuf)-q.rpos-k >= int(n) {
			rec := q.rbuf[q.rpos+k : q.rpos+k+int(n)]
			q.rpos += k + int(n)
			q.rOff += int64(k + int(n))
			return readOp(rec)
		}
		// Refill: keep what is left, read on (a megabyte at a time, and
		// at least the record).
		left := copy(q.rbuf[:cap(q.rbuf)], q.rbuf[q.rpos:])
		pos := q.rOff + int64(len(q.rbuf)-q.rpos)
		want := max(1<<20, left+256<<10)
		if cap(q.rbuf) < want {
			nb := make([]byte, left, want)
			copy(nb, q.rbuf[q.rpos:])
			q.rbuf = nb
		} else {
			q.rbuf = q.rbuf[:left]
		}
		q.rpos = 0
		if err := q.flushWrites(); err != nil { // the reader has caught up with the writes
			return rebuildOp{}, err
		}
		n := min(int64(cap(q.rbuf)-left), q.wOff-pos)
		if n <= 0 {
			return rebuildOp{}, errors.New("rebuild backlog: record runs past the end of the file")
		}
		got, err := q.file.ReadAt(q.rbuf[left:left+int(n)], pos)
		q.rbuf = q.rbuf[:left+got]
		if got == 0 && err != nil {
			return rebuildOp{}, fmt.Errorf("rebuild backlog: %w", err)
		}
	}
}

// appendOp appends an op's record (its length, then its fields) to b,
// with rec as scratch (returned for the next). The fields are written in
// place after one byte for the length, which is enough below 128 bytes
// (an op without a dif's bytes); a longer record moves up.
func appendOp(b, rec []byte, o *rebuildOp) ([]byte, []byte) {
	start := len(b)
	b = append(b, 0)
	b = append(b, o.kind)
	b = binary.AppendVarint(b, int64(o.water))
	b = appendLine(b, o.line)
	b = binary.AppendVarint(b, int64(o.n))
	b = binary.AppendVarint(b, o.ts.UnixNano())
	b = binary.AppendVarint(b, int64(o.seq))
	if o.kind == opDif {
		m := o.msg
		b = appendLine(b, m.Chain())
		b = binary.AppendVarint(b, int64(m.SLSN))
		b = binary.AppendVarint(b, int64(m.Src))
		b = binary.AppendVarint(b, int64(m.Dst))
		b = binary.AppendVarint(b, int64(m.Status))
		b = binary.AppendVarint(b, int64(m.Count))
		b = binary.AppendVarint(b, int64(m.Pieces))
		b = binary.AppendVarint(b, int64(m.Bytes))
		b = binary.AppendVarint(b, int64(m.LastN))
		b = binary.AppendVarint(b, m.Last.UnixNano())
		errText := ""
		if m.Err != nil {
			errText = m.Err.Error()
		}
		b = binary.AppendUvarint(b, uint64(len(errText)))
		b = append(b, errText...)
		b = binary.AppendUvarint(b, uint64(len(m.Compressed)))
		b = append(b, m.Compressed...)
		b = binary.AppendUvarint(b, uint64(len(m.Refs)))
		for _, ref := range m.Refs {
			b = binary.AppendVarint(b, ref)
		}
	}
	n := len(b) - start - 1
	if n < 0x80 {
		b[start] = byte(n) // its uvarint
		return b, rec
	}
	rec = append(rec[:0], b[start+1:]...)
	b = binary.AppendUvarint(b[:start], uint64(n))
	return append(b, rec...), rec
}

func appendLine(b []byte, l reassemble.Chain) []byte {
	b = binary.AppendVarint(b, int64(l.Conv))
	n := len(b)
	b = append(b, 0)
	b, _ = l.Client.AppendBinary(b)
	b[n] = byte(len(b) - n - 1)
	return b
}

// opReader reads the fields of a record in the order appendOp wrote them.
type opReader struct {
	b   []byte
	err error
}

func (r *opReader) int() int64 {
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.err = errors.New("rebuild backlog: bad record")
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *opReader) len() int {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || v > uint64(len(r.b)) {
		r.err = errors.New("rebuild backlog: bad record")
		return 0
	}
	r.b = r.b[k:]
	return int(v)
}

func (r *opReader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.err = errors.New("rebuild backlog: bad record")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *opReader) line() reassemble.Chain {
	conv := int(r.int())
	if len(r.b) == 0 {
		r.err = errors.New("rebuild backlog: bad record")
		return reassemble.Chain{}
	}
	n := int(r.b[0])
	r.b = r.b[1:]
	var a netip.AddrPort
	if err := a.UnmarshalBinary(r.bytes(n)); err != nil && r.err == nil {
		r.err = fmt.Errorf("rebuild backlog: %w", err)
	}
	return reassemble.Chain{Conv: conv, Client: a}
}

// readOp decodes a record; its bytes are copied.
func readOp(rec []byte) (rebuildOp, error) {
	if len(rec) == 0 {
		return rebuildOp{}, errors.New("rebuild backlog: empty record")
	}
	r := &opReader{b: rec[1:]}
	o := rebuildOp{kind: rec[0]}
	o.water = int(r.int())
	o.line = r.line()
	o.n = int32(r.int())
	o.ts = time.Unix(0, r.int())
	o.seq = int(r.int())
	if o.kind == opDif {
		l := r.line()
		m := &reassemble.Message{}
		m.Client, m.Conv = l.Client, l.Conv
		m.SLSN, m.Src, m.Dst = int(r.int()), int32(r.int()), int32(r.int())
		m.Status, m.Count, m.Pieces = reassemble.Status(r.int()), int(r.int()), int(r.int())
		m.Bytes, m.LastN, m.Last = int(r.int()), int(r.int()), time.Unix(0, r.int())
		if t := r.bytes(r.len()); len(t) > 0 {
			m.Err = errors.New(string(t))
		}
		if c := r.bytes(r.len()); len(c) > 0 {
			m.Compressed = append([]byte(nil), c...)
		}
		if n := r.len(); n > 0 && r.err == nil {
			m.Refs = make([]int64, n)
			for i := range m.Refs {
				m.Refs[i] = r.int()
			}
		}
		o.msg = m
	}
	return o, r.err
}

// failure is the error that ended the backlog (a temporary file that could
// not be written or read), nil if none.
func (q *backlog) failure() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// ready reports whether an op is waiting.
func (q *backlog) ready() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head < q.mem.len() || q.rOff < q.wOff
}
