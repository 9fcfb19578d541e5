package reassemble

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/pmdump/pmdump/decode"
)

type piece struct {
	have      bool
	truncated bool
	start     int
	size      int
	data      []byte
	ref       int64
}

type message struct {
	Message
	pieces []piece
	lastTS time.Time
	owner  *client // the client whose pending list holds it
	// prev and next link the unfinished messages of every client in
	// arrival order, so the oldest is found without a pass over clients.
	prev, next *message
}

type client struct {
	chain   Chain
	pending []*message
	done    []doneKey // recently finished keys, so late pieces are not new messages
	// doneNext is the oldest of done once it is full: the one replaced
	// next.
	doneNext int
	newest   time.Time
}

type doneKey struct {
	// The client's chain is the same for all: the frames and the level
	// sequence tell its messages apart.
	slsn     int
	src, dst int32
	complete bool
}

// Assembler reassembles messages. It is not safe for concurrent use.
type Assembler struct {
	limits  Limits
	emit    func(*Message)
	clients map[Chain]*client
	// byConv holds the clients of chains with a conversation number, by
	// that number (the clients of a capture take turns, so a map look-up
	// per piece would be the rule).
	byConv []*client
	// reread gives back the bytes of a piece by its Ref (see RereadRefs).
	reread func(ref int64) ([]byte, error)
	// out is the Message emitted, with lend (see LendMessages).
	out   Message
	lend  bool
	total int
	bytes int // piece bytes held for unfinished messages
	// head and tail of the unfinished messages in arrival order
	head, tail *message
	// LatePieces counts pieces of messages that had already ended.
	LatePieces int
	free       []*message // ended messages, to start others in (see finish)
}

// maxFree bounds the ended messages an Assembler keeps for reuse.
const maxFree = 64

// maxClients bounds the clients an Assembler remembers: each holds the keys
// of its recently finished messages. Past it, the clients without
// unfinished messages are forgotten.
const maxClients = 4096

// New returns an Assembler that calls emit once for every message that
// ends. The Message is the caller's to keep.
func New(limits Limits, emit func(*Message)) *Assembler {
	if limits.MaxCompressed <= 0 {
		limits.MaxCompressed = DefaultLimits.MaxCompressed
	}
	if limits.PendingPerClient <= 0 {
		limits.PendingPerClient = DefaultLimits.PendingPerClient
	}
	if limits.PendingTotal <= 0 {
		limits.PendingTotal = DefaultLimits.PendingTotal
	}
	if limits.AbandonAfter <= 0 {
		limits.AbandonAfter = DefaultLimits.AbandonAfter
	}
	if limits.PendingBytes <= 0 {
		limits.PendingBytes = DefaultLimits.PendingBytes
	}
	return &Assembler{limits: limits, emit: emit, clients: map[Chain]*client{}}
}

// RereadRefs makes the Assembler keep no copy of the bytes of a piece that
// has a Ref: reread gives them back by that Ref when they are needed after
// all (a piece received again, to compare with it; a complete message some
// of whose pieces have no Ref, to join them). Every outcome is decided as
// without it. A piece reread cannot give back counts as the copy it is
// compared with when its start and size agree; a message that needs its
// bytes ends Corrupt.
func (a *Assembler) RereadRefs(reread func(ref int64) ([]byte, error)) { a.reread = reread }

// LendMessages makes the Assembler lend the Messages it emits instead of
// giving them: each is valid only during the call of emit, which must not
// end messages itself (Add, Flush, FlushChain, FlushClient, Tick), and the
// next one reuses it (its slices are its own). For a caller that keeps
// only figures, it saves an allocation per message.
func (a *Assembler) LendMessages() { a.lend = true }

// Pending is the number of unfinished messages held.
func (a *Assembler) Pending() int { return a.total }

// finished reports whether k ended recently, and whether it completed.
func (c *client) finished(k Key) (done, complete bool) {
	n := len(c.done)
	for j := range n { // oldest first
		i := c.doneNext + j
		if i >= n {
			i -= n
		}
		// The frames differ for nearly every key: they are compared
		// first.
		if d := &c.done[i]; d.dst == k.Dst && d.src == k.Src && d.slsn == k.SLSN {
			return true, d.complete
		}
	}
	return false, false
}

// FinishedKeep is how many of a client's newest finished messages an
// Assembler remembers, to ignore the late pieces of each.
const FinishedKeep = 64

func (c *client) remember(k Key, complete bool) {
	if len(c.done) < FinishedKeep {
		c.done = append(c.done, doneKey{k.SLSN, k.Src, k.Dst, complete})
		return
	}
	c.done[c.doneNext] = doneKey{k.SLSN, k.Src, k.Dst, complete} // in place of the oldest
	c.doneNext = (c.doneNext + 1) % FinishedKeep
}

// Add adds one piece and says what became of it.
func (a *Assembler) Add(p Piece) Outcome {
	c := a.client(p.Chain())
	if p.TS.After(c.newest) {
		c.newest = p.TS
		a.abandonStale(c)
	}
	m := c.find(p.Key)
	if m == nil {
		if done, complete := c.finished(p.Key); done {
			a.LatePieces++
			if complete {
				return LateDuplicate
			}
			return Late
		}
		m = a.start(c, p)
		if m.Status == Corrupt {
			a.finish(c, m)
			return Rejected
		}
	}
	m.LastN, m.Last, m.lastTS = p.N, p.TS, p.TS
	dup, err := a.place(m, p)
	if err != nil {
		m.Status, m.Err = Corrupt, err
		a.finish(c, m)
		return Rejected
	}
	if dup {
		return Duplicate
	}
	if m.Pieces == m.Count {
		a.complete(m)
		a.finish(c, m)
		return Accepted
	}
	for a.bytes > a.limits.PendingBytes && a.head != nil && a.head != m {
		o := a.oldest()
		a.abandon(a.clientOf(o), o, "too many bytes held for unfinished difs")
	}
	return Accepted
}

// maxByConv bounds the conversation numbers whose clients byConv holds.
const maxByConv = 4096

// client returns chain ch's client, made when it is new.
func (a *Assembler) client(ch Chain) *client {
	if ch.Conv > 0 && ch.Conv < len(a.byConv) {
		if c := a.byConv[ch.Conv]; c != nil && c.chain == ch {
			return c
		}
	}
	c := a.clients[ch]
	if c == nil {
		if len(a.clients) >= maxClients {
			a.forgetIdle()
		}
		c = &client{chain: ch}
		a.clients[ch] = c
	}
	if ch.Conv > 0 && ch.Conv < maxByConv {
		for len(a.byConv) <= ch.Conv {
			a.byConv = append(a.byConv, nil)
		}
		a.byConv[ch.Conv] = c
	}
	return c
}

// forget forgets a client.
func (a *Assembler) forget(c *client) {
	delete(a.clients, c.chain)
	if ch := c.chain; ch.Conv > 0 && ch.Conv < len(a.byConv) && a.byConv[ch.Conv] == c {
		a.byConv[ch.Conv] = nil
	}
}

// find returns c's unfinished message of key k, nil if none. The keys of
// a client's messages differ only in their level sequence and frames.
func (c *client) find(k Key) *message {
	for i := len(c.pending) - 1; i >= 0; i-- { // the newest first
		if m := c.pending[i]; m.Dst == k.Dst && m.Src == k.Src && m.SLSN == k.SLSN {
			return m
		}
	}
	return nil
}

// forgetIdle forgets the clients that have no unfinished message.
func (a *Assembler) forgetIdle() {
	for _, c := range a.clients {
		if len(c.pending) == 0 {
			a.forget(c)
		}
	}
}

// start makes a new message for p's key, abandoning the oldest unfinished
// ones when a limit is reached.
func (a *Assembler) start(c *client, p Piece) *message {
	var m *message
	if n := len(a.free); n > 0 {
		m, a.free = a.free[n-1], a.free[:n-1]
		*m = message{pieces: m.pieces[:0]}
	} else {
		m = &message{}
	}
	m.Message = Message{Key: p.Key, Count: p.Count, FirstN: p.N, LastN: p.N, First: p.TS, Last: p.TS}
	if p.Count < 1 || p.Count > decode.MaxPieces {
		m.Status, m.Err = Corrupt, fmt.Errorf("piece %d: piece count %d", p.Seq, p.Count)
		return m
	}
	for len(c.pending) >= a.limits.PendingPerClient {
		a.abandon(c, c.pending[0], "too many unfinished difs for this client")
	}
	for a.total >= a.limits.PendingTotal {
		a.abandon(a.clientOf(a.oldest()), a.oldest(), "too many unfinished difs")
	}
	if cap(m.pieces) >= p.Count {
		m.pieces = m.pieces[:p.Count] // cleared when it was freed
	} else {
		m.pieces = make([]piece, p.Count)
	}
	m.owner = c
	c.pending = append(c.pending, m)
	a.total++
	m.prev = a.tail
	if a.tail != nil {
		a.tail.next = m
	} else {
		a.head = m
	}
	a.tail = m
	return m
}

func (a *Assembler) clientOf(m *message) *client { return m.owner }

// oldest is the unfinished message that started first, nil if none.
func (a *Assembler) oldest() *message { return a.head }

// place checks p against the message's other pieces and stores it. It
// reports whether p duplicates a piece the message has.
func (a *Assembler) place(m *message, p Piece) (dup bool, err error) {
	switch {
	case p.Count != m.Count:
		return false, fmt.Errorf("piece %d says %d pieces, piece headers before it said %d", p.Seq, p.Count, m.Count)
	case p.Seq < 0 || p.Seq >= m.Count:
		return false, fmt.Errorf("piece seq %d not below piece count %d", p.Seq, m.Count)
	case p.Start < 0 || p.Start+len(p.Data) > a.limits.MaxCompressed:
		return false, fmt.Errorf("piece %d: bytes %d..%d beyond the largest dif (%d bytes)", p.Seq, p.Start, p.Start+len(p.Data), a.limits.MaxCompressed)
	}
	pc := &m.pieces[p.Seq]
	if p.Truncated {
		// What is left of a cut piece is not kept: the dif cannot be
		// rebuilt, but its headers still count.
		if pc.have {
			m.Duplicates++
			return true, nil
		}
		*pc = piece{have: true, start: p.Start, truncated: true}
		m.Pieces++
		m.Truncated++
		return false, nil
	}
	if pc.have && pc.truncated {
		// A whole copy of a piece that was cut before.
		*pc = piece{}
		m.Pieces--
		m.Truncated--
	}
	if pc.have {
		if pc.start != p.Start || pc.size != len(p.Data) || !a.limits.HeadersOnly && !a.same(pc, p.Data) {
			return false, fmt.Errorf("piece %d received twice with different contents", p.Seq)
		}
		m.Duplicates++
		return true, nil
	}
	if m.Bytes+len(p.Data) > a.limits.MaxCompressed {
		// Pieces that overlap (all at start 0, say) cannot hold more
		// than the largest dif.
		return false, fmt.Errorf("piece %d: the pieces hold %d bytes, more than the largest dif (%d bytes)", p.Seq, m.Bytes+len(p.Data), a.limits.MaxCompressed)
	}
	*pc = piece{have: true, start: p.Start, size: len(p.Data), ref: p.Ref}
	if !a.limits.HeadersOnly && (p.Ref == 0 || a.reread == nil) {
		pc.data = bytes.Clone(p.Data)
	}
	m.Pieces++
	m.Bytes += len(p.Data)
	a.bytes += len(p.Data)
	return false, nil
}

// same reports whether a piece the message has holds data.
func (a *Assembler) same(pc *piece, data []byte) bool {
	if pc.data == nil && pc.ref != 0 && a.reread != nil {
		b, err := a.reread(pc.ref)
		return err != nil || bytes.Equal(b, data)
	}
	return bytes.Equal(pc.data, data)
}

// complete joins the pieces, checking that they tile the dif from byte 0.
func (a *Assembler) complete(m *message) {
	if m.Truncated > 0 {
		m.Status, m.Err = Truncated, fmt.Errorf("%d of %d pieces cut by the capture's snap length", m.Truncated, m.Count)
		return
	}
	size := 0
	for i := range m.pieces {
		pc := &m.pieces[i]
		switch {
		case pc.start > size:
			m.Status, m.Err = Corrupt, fmt.Errorf("hole: piece %d starts at byte %d, the pieces before it end at %d", i, pc.start, size)
			return
		case pc.start < size:
			m.Status, m.Err = Corrupt, fmt.Errorf("overlap: piece %d starts at byte %d, the pieces before it end at %d", i, pc.start, size)
			return
		}
		size += pc.size
	}
	m.Status = Complete
	if m.pieces[0].ref != 0 {
		m.Refs = make([]int64, len(m.pieces))
		for i := range m.pieces {
			if m.Refs[i] = m.pieces[i].ref; m.Refs[i] == 0 {
				m.Refs = nil
				break
			}
		}
		if m.Refs != nil {
			return // the caller reads the bytes again
		}
	}
	if a.limits.HeadersOnly {
		return
	}
	buf := make([]byte, 0, size)
	for i := range m.pieces {
		pc := &m.pieces[i]
		if pc.data == nil && pc.ref != 0 && a.reread != nil {
			b, err := a.reread(pc.ref)
			if err != nil {
				m.Status, m.Err = Corrupt, fmt.Errorf("piece %d: %w", i, err)
				return
			}
			buf = append(buf, b...)
			continue
		}
		buf = append(buf, pc.data...)
	}
	m.Compressed = buf
	m.Status = Complete
}

// finish removes a message from the pending sets and emits it.
func (a *Assembler) finish(c *client, m *message) {
	if m.owner == c {
		if i := slices.Index(c.pending, m); i >= 0 {
			c.pending = slices.Delete(c.pending, i, i+1)
			a.total--
			a.bytes -= m.Bytes
			a.unlink(m)
		}
	}
	c.remember(m.Key, m.Status == Complete)
	// m is no longer anyone's: it starts a later message. The Message
	// emitted is a copy whose slices m does not reuse.
	msg := m.Message
	clear(m.pieces)
	m.Message, m.prev, m.next, m.owner = Message{}, nil, nil, nil
	if len(a.free) < maxFree {
		a.free = append(a.free, m)
	}
	if a.lend {
		a.out = msg
		a.emit(&a.out)
		return
	}
	a.give(msg)
}

// give emits a copy of a message, the caller's to keep.
func (a *Assembler) give(out Message) { a.emit(&out) }

// unlink takes m out of the arrival-order list.
func (a *Assembler) unlink(m *message) {
	if m.prev != nil {
		m.prev.next = m.next
	} else {
		a.head = m.next
	}
	if m.next != nil {
		m.next.prev = m.prev
	} else {
		a.tail = m.prev
	}
	m.prev, m.next = nil, nil
}
