package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/filter"
	"github.com/pmdump/pmdump/internal/spill"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// IndexEntry is what the packet index keeps in memory of one game packet:
// 40 bytes. Its addresses and payload are read again from the capture file
// (at its record's offset) or, for a capture that cannot be read again, from
// the index's spool.
type IndexEntry struct {
	TS     int64 // capture time, unix nanoseconds
	loc    int64 // where its bytes are: see location
	N      int32 // frame number in the capture
	Conv   int32 // conversation number, 0 when none
	Frame  int32 // the game frame the packet refers to, NoFrame when none
	Len    uint16
	Name   [4]byte
	Kind   session.Kind
	Era    decode.Version // the conversation's era
	Dir    decode.Dir
	Player int8           // -1 when not known
	layout decode.Version // the version it decoded in
	link   uint8          // its frame's link type, as an index in PacketIndex.links
}

// A location says where an entry's bytes are: in input file k (k > 0) at
// byte offset off, read again with the input's Rereader, when loc is
// k<<inputShift | off; at offset loc of the spool when k is 0; nowhere when
// loc is negative (the spool failed).
const inputShift = 48

// maxRereadInputs is how many inputs can be read again by offset (each
// keeps its file open); the packets of any further ones go to the spool.
const maxRereadInputs = 256

// NoFrame is IndexEntry.Frame for a packet that refers to no game frame.
const NoFrame = math.MinInt32

// Time is the packet's capture time.
func (e *IndexEntry) Time() time.Time { return time.Unix(0, e.TS) }

// chunkSize is the entries of one chunk: entries are never moved once
// written, so readers can use them while the index grows. An index with a
// limit uses ringChunk, so that what it drops is given back soon.
const (
	chunkSize = 1 << 16
	ringChunk = 1 << 10
)

// pagedChunk is the entries of a chunk that can be paged out (chunkSize;
// smaller in tests).
var pagedChunk = chunkSize

// IndexLimit caps what a packet index keeps: as dumpcap's ring buffer
// does, it keeps the newest packets and drops the oldest once either bound
// is passed. A zero field is no bound. With a limit, the index spools in
// memory only (the limit bounds it); the packets of a capture file, read
// again from the file, cost only their entries.
type IndexLimit struct {
	Packets int   // the most packets kept
	Bytes   int64 // the most bytes kept: each packet's entry (40 bytes) and its spooled addresses and payload
}

func (l IndexLimit) set() bool { return l.Packets > 0 || l.Bytes > 0 }

// PacketIndex indexes every game packet of a capture for random access:
// an entry per packet in memory, and where to read the packet again: the
// offset of its record in a capture file (pcap or pcapng, not compressed),
// or, for a stream, a compressed file, a live interface or a datagram
// rebuilt from fragments, its addresses and payload in a spool (memory up
// to a budget, then a temporary file). Any packet can be decoded again and
// filtered without a new pass over the capture. It is safe for concurrent
// use: packets can be read while it grows.
type PacketIndex struct {
	mu        sync.RWMutex
	chunks    [][]IndexEntry
	csize     int // entries per chunk
	base      int // the position of chunks[0][0]
	n         int
	limit     IndexLimit
	first     int   // the oldest position kept; those before it were dropped
	bytes     int64 // what the kept packets take, as IndexLimit.Bytes counts it
	spool     *spill.Store
	pages     *pager // the entries paged out to a file, nil with a limit
	conv      func(id int) *session.Conversation
	rec       []byte
	rereaders []*source.Rereader // by input number - 1
	links     []layers.LinkType  // the link types of re-readable frames, by IndexEntry.link
}

func newPacketIndex(budget int, dir string, conv func(int) *session.Conversation, limit IndexLimit) *PacketIndex {
	x := &PacketIndex{spool: spill.New("packet index spool", budget, dir, "pmdump-packets-*"), conv: conv, csize: chunkSize, limit: limit}
	if limit.set() {
		x.csize = ringChunk
		x.spool.SetBudget(math.MaxInt) // bounded by the limit
	} else {
		x.csize = pagedChunk
		x.pages = newPager(budget, dir, x.csize)
	}
	return x
}

// entry is the entry of position i (first <= i < n). Call with x.mu held
// (to read or to write).
func (x *PacketIndex) entry(i int) IndexEntry {
	k := i - x.base
	if c := x.chunks[k/x.csize]; c != nil {
		return c[k%x.csize]
	}
	return x.pages.entry(k/x.csize, k%x.csize)
}

// cost is what entry e takes, as IndexLimit.Bytes counts it.
func (e *IndexEntry) cost() int64 {
	if e.loc>>inputShift == 0 && e.loc >= 0 {
		return entrySize + spoolHeader + int64(e.Len)
	}
	return entrySize
}

// drop drops the oldest packets while the index is past its limit. Call
// with x.mu held.
func (x *PacketIndex) drop() {
	over := func() bool {
		kept := x.n - x.first
		return kept > 1 && (x.limit.Packets > 0 && kept > x.limit.Packets || x.limit.Bytes > 0 && x.bytes > x.limit.Bytes)
	}
	for over() {
		e := x.entry(x.first)
		x.bytes -= e.cost()
		if e.loc>>inputShift == 0 && e.loc >= 0 {
			x.spool.Release(e.loc + spoolHeader + int64(e.Len))
		}
		x.first++
		if x.first-x.base == x.csize {
			x.chunks[0] = nil
			x.chunks = x.chunks[1:]
			x.base += x.csize
		}
	}
}

// First is the oldest position the index keeps: packets before it were
// dropped by its limit (0 without one).
func (x *PacketIndex) First() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.first
}

// Dropped is how many packets the index's limit has dropped.
func (x *PacketIndex) Dropped() int { return x.First() }

// Limit is the index's limit.
func (x *PacketIndex) Limit() IndexLimit { return x.limit }

// addInput makes the records of a capture file readable again through rr:
// it returns the input number to give add for the file's records, 0 when
// no more inputs can be (their records are then spooled).
func (x *PacketIndex) addInput(rr *source.Rereader) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.rereaders) >= maxRereadInputs {
		rr.Close()
		return 0
	}
	x.rereaders = append(x.rereaders, rr)
	return len(x.rereaders)
}

// linkID is the IndexEntry.link of link type lt, false when the table is
// full (the record is then spooled). Call with x.mu held.
func (x *PacketIndex) linkID(lt layers.LinkType) (uint8, bool) {
	for i, l := range x.links {
		if l == lt {
			return uint8(i), true
		}
	}
	if len(x.links) > math.MaxUint8 {
		return 0, false
	}
	x.links = append(x.links, lt)
	return uint8(len(x.links) - 1), true
}

// add indexes one game record of input number input (0: an input that
// cannot be read again) and returns its position.
func (x *PacketIndex) add(r *session.Record, d *source.Datagram, input int) int {
	e := IndexEntry{TS: r.TS.UnixNano(), N: int32(r.N), Name: r.Packet.Name, Kind: r.Kind, Era: r.Version, Dir: r.Dir,
		Player: int8(max(min(r.Player, 127), -1)), Frame: NoFrame, Len: uint16(min(len(r.Packet.Raw), math.MaxUint16))}
	if r.Conv != nil {
		e.Conv = int32(r.Conv.ID)
	}
	if r.Packet.Layout != nil {
		e.layout = r.Packet.Version
	}
	if r.Kind == session.Game {
		if f, ok := r.Packet.Frame(); ok && f >= math.MinInt32+1 && f <= math.MaxInt32 {
			e.Frame = int32(f)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	reread := false
	if input > 0 && d.Offset >= 0 && d.Offset < 1<<inputShift && !d.Reassembled {
		if id, ok := x.linkID(d.LinkType); ok {
			e.loc, e.link, reread = int64(input)<<inputShift|d.Offset, id, true
		}
	}
	if !reread {
		b := appendAddr(x.rec[:0], r.Src)
		b = appendAddr(b, r.Dst)
		b = append(b, r.Packet.Raw[:e.Len]...)
		x.rec = b
		off, err := x.spool.Put(b)
		if err != nil {
			off = -1 // the packet is listed; decoding it again says why not
		}
		e.loc = off
	}
	if (x.n-x.base)%x.csize == 0 {
		x.chunks = append(x.chunks, make([]IndexEntry, 0, x.csize))
		if x.pages != nil {
			x.pages.started(x.chunks, len(x.chunks)-1, e.N)
		}
	}
	c := &x.chunks[len(x.chunks)-1]
	*c = append(*c, e)
	x.n++
	if x.limit.set() {
		x.bytes += e.cost()
		x.drop()
	}
	return x.n - 1
}

// Len is the number of packets indexed so far.
func (x *PacketIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Entry returns the entry of packet i (0-based position in the index); for
// a position the limit has dropped, the oldest entry kept.
func (x *PacketIndex) Entry(i int) IndexEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entry(max(i, x.first))
}

// Entries copies the entries of positions [from, to) into dst (those the
// limit has dropped are left out).
func (x *PacketIndex) Entries(dst []IndexEntry, from, to int) []IndexEntry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	to = min(to, x.n)
	for i := max(from, x.first); i < to; i++ {
		dst = append(dst, x.entry(i))
	}
	return dst
}

// Search returns the position of the first packet kept whose capture
// frame number is at least n (Len when none is).
func (x *PacketIndex) Search(n int) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	lo, hi := x.first, x.n
	if x.pages != nil {
		// The first such packet is in the last chunk that starts before
		// n, or starts the chunk after it: one chunk is looked at.
		k := x.pages.chunkOf(n)
		lo, hi = max(lo, k*x.csize), min(hi, (k+1)*x.csize+1)
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(x.entry(m).N) < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Packet decodes packet i again. Like Record and Filter, it must not be
// called from the engine's event handlers (Config.OnEvent, OnPacket), which
// run with the engine locked: it looks up the packet's conversation.
func (x *PacketIndex) Packet(i int) (*Packet, error) {
	var r session.Record
	if err := x.Record(i, &r); err != nil {
		return nil, err
	}
	p := &Packet{N: r.N, TS: r.TS, Src: r.Src, Dst: r.Dst, Kind: r.Kind, Era: r.Version, Dir: r.Dir, Player: r.Player, Packet: r.Packet}
	if r.Conv != nil {
		p.Conv, p.Client = r.Conv.ID, r.Conv.Client
	}
	return p, nil
}

// Record decodes packet i again into r, as the session tracker made it
// (its conversation as it is now). r's packet keeps its own copy of the
// payload.
func (x *PacketIndex) Record(i int, r *session.Record) error {
	x.mu.RLock()
	if i < 0 || i >= x.n {
		x.mu.RUnlock()
		return fmt.Errorf("packet %d: the index has %d packets", i, x.n)
	}
	if i < x.first {
		x.mu.RUnlock()
		return fmt.Errorf("packet %d: %w", i, ErrDropped)
	}
	e := x.entry(i)
	*r = session.Record{N: int(e.N), TS: time.Unix(0, e.TS), Kind: e.Kind, Version: e.Era, Dir: e.Dir, Player: int(e.Player)}
	var payload []byte
	var err error
	if k := int(e.loc >> inputShift); k > 0 {
		// Read from the file without the lock: the index goes on
		// growing meanwhile, and the Rereader has its own.
		var rr *source.Rereader
		var lt layers.LinkType
		if k <= len(x.rereaders) && int(e.link) < len(x.links) {
			rr, lt = x.rereaders[k-1], x.links[e.link]
		}
		x.mu.RUnlock()
		payload, err = reread(rr, lt, &e, r)
	} else {
		payload, err = x.unspool(&e, r)
		x.mu.RUnlock()
	}
	if err != nil {
		return fmt.Errorf("packet %d (frame %d): %w", i, e.N, err)
	}
	if e.Conv != 0 || e.Kind != session.NonGame {
		r.Conv = x.conv(int(e.Conv))
		if r.Conv != nil {
			r.Client = r.Conv.Client
		}
	}
	switch e.Kind {
	case session.Unknown:
		r.Packet = decode.Packet{Raw: payload, Err: fmt.Errorf("unknown packet name %q", payload[:min(4, len(payload))])}
		copy(r.Packet.Name[:], payload)
	case session.Malformed:
		if e.layout == decode.VersionUnknown {
			decode.DecodeUnrecognised(&r.Packet, payload)
		} else {
			decode.Decode(&r.Packet, payload, e.layout)
		}
	default:
		if err := decode.Decode(&r.Packet, payload, e.layout); err != nil && e.Kind == session.Game {
			return fmt.Errorf("packet %d (frame %d) does not decode again: %w", i, e.N, err)
		}
	}
	return nil
}

// ErrDropped is the error for a packet the index's limit has dropped.
var ErrDropped = errors.New("dropped: the packet index keeps only the newest packets")

// Filter calls fn with the position of every packet kept in [from, to)
// that matches f, in order, until fn returns false or ctx is done.
func (x *PacketIndex) Filter(ctx context.Context, f *filter.Filter, from, to int, fn func(i int) bool) error {
	var r session.Record
	conv, oneConv := 0, false
	if f != nil {
		conv, oneConv = f.Conv()
	}
	for i := max(from, x.First()); i < min(to, x.Len()); i++ {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if oneConv && int(x.Entry(i).Conv) != conv {
			continue // the filter matches only conversation conv's packets
		}
		if err := x.Record(i, &r); err != nil {
			continue
		}
		if f == nil || f.Match(&r) {
			if !fn(i) {
				return nil
			}
		}
	}
	return nil
}

// MemoryBytes is the memory the index's entries take.
func (x *PacketIndex) MemoryBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := int64(0)
	for _, c := range x.chunks {
		if c != nil {
			n += int64(x.csize) * entrySize // entries are allocated a chunk at a time
		}
	}
	if x.pages != nil {
		n += x.pages.memoryBytes()
	}
	return n
}

// SpoolBytes is how many bytes of packets the index keeps in its spool (in
// memory or a temporary file): none for packets it reads again from their
// capture file.
func (x *PacketIndex) SpoolBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	mem, file := x.spool.Bytes()
	return mem + file
}

// entrySize is the size of an IndexEntry in memory.
const entrySize = 40

// err is the spool's failure, if it failed.
func (x *PacketIndex) err() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.pages != nil {
		if err := x.pages.failure(); err != nil {
			return err
		}
	}
	return x.spool.Err()
}

func (x *PacketIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	err := x.spool.Close()
	if x.pages != nil {
		err = errors.Join(err, x.pages.close())
	}
	for _, rr := range x.rereaders {
		err = errors.Join(err, rr.Close())
	}
	x.rereaders = nil
	return err
}
