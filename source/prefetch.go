package source

import (
	"bytes"
	"io"
	"maps"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
)

// Prefetcher reads a Reader's datagrams ahead in a goroutine of its own, in
// batches, so that reading and parsing the capture runs on one core while
// the caller decodes and prints on another. Memory is bounded: at most a few
// batches of half a megabyte are in flight.
type Prefetcher struct {
	// Idle, when set, is called before Next waits for the input, so a
	// caller can flush its output while a live stream is quiet.
	Idle    func()
	prepare func(dgs []Datagram, aux *any)
	full    chan *batch
	free    chan *batch
	done    chan struct{}
	exited  chan struct{} // closed when the reading goroutine returns
	wait    bool          // Close waits for the reading goroutine (a pcap file, a prepare function)
	cur     *batch
	i       int
	err     error
	counts  Counters
}

type batch struct {
	dgs    []Datagram
	slab   []byte
	err    error
	aux    any      // what the prepare function made of the batch
	counts Counters // the reader's, after the batch and the datagram carried
	// carried is whether a datagram was read after the batch's (counted
	// in counts) to start the next batch, and carriedLT its link type.
	carried   bool
	carriedLT layers.LinkType
}

// countsAt is the reader's counters as of the batch's first i datagrams:
// the batch's, less the datagrams after them, each with a frame
// of its link type. Datagrams are then exact, and frames too unless later
// frames were fragments or carried no UDP (those stay counted, as the
// link types count them).
func (b *batch) countsAt(i int) Counters {
	c := b.counts
	if i == len(b.dgs) && !b.carried {
		return c
	}
	c.LinkTypes = maps.Clone(c.LinkTypes)
	drop := func(lt layers.LinkType) {
		c.Datagrams--
		c.Frames--
		name := LinkTypeName(lt)
		if c.LinkTypes[name]--; c.LinkTypes[name] <= 0 {
			delete(c.LinkTypes, name)
		}
	}
	for i := i; i < len(b.dgs); i++ {
		drop(b.dgs[i].LinkType)
	}
	if b.carried {
		drop(b.carriedLT)
	}
	return c
}

const (
	// prefetchAhead is how many datagrams ahead of the one Next returns
	// the caches are asked for the next one's bytes: far enough that they
	// have come by then, near enough that they are still there (measured
	// on modern/multi appended 20 times: 8 to 16 are as good).
	prefetchAhead = 12
	// Half a megabyte of frames, or 1024 datagrams, a batch: the four
	// batches' memory (3 MB) is new memory the system must give, which
	// costs a small capture more than twice as many hand-overs cost a
	// large one (measured: read of an empty pcap 4.8 ms of CPU against
	// 7.2 ms with batches twice as large; of modern/multi appended 20
	// times, the same within the noise).
	batchSlab    = 512 << 10
	batchMax     = 1024
	batchesInUse = 4
)

// Prefetch starts reading r ahead. The caller must call Close when done, and
// must not use r directly any more.
func Prefetch(r *Reader) *Prefetcher {
	return PrefetchPrepared(r, nil)
}

// PrefetchPrepared is Prefetch with a first stage of the caller's work on
// the reading goroutine: prepare is called there with each batch of
// datagrams before Next hands out the first of them, and what it makes of
// them it leaves in *aux, which Prepared returns beside each datagram. The
// datagrams and aux stay valid until Next has gone past the batch's last
// datagram; a batch's aux is given back to prepare when the batch is
// filled again, so its memory can be reused. Close waits for the reading
// goroutine, so that prepare has returned: r must be a file, which never
// waits for input. A nil prepare is Prefetch.
func PrefetchPrepared(r *Reader, prepare func(dgs []Datagram, aux *any)) *Prefetcher {
	p := &Prefetcher{
		prepare: prepare,
		full:    make(chan *batch, batchesInUse),
		free:    make(chan *batch, batchesInUse),
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
	}
	_, p.wait = r.src.(*pcapFile)
	p.wait = p.wait || prepare != nil
	for i := 0; i < batchesInUse; i++ {
		p.free <- &batch{dgs: make([]Datagram, 0, batchMax), slab: make([]byte, 0, batchSlab)}
	}
	go p.produce(r)
	return p
}

func (p *Prefetcher) produce(r *Reader) {
	defer close(p.exited)
	defer close(p.full)
	var carry Datagram
	carried := false // carry did not fit in the batch before: it starts the next
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.done:
			return
		}
		// A batch comes back with its last use's fields: each is set anew.
		b.dgs, b.slab, b.err, b.carried = b.dgs[:0], b.slab[:0], nil, false
		for len(b.dgs) < batchMax {
			n := len(b.dgs)
			b.dgs = b.dgs[:n+1] // within its capacity, batchMax
			d := &b.dgs[n]
			if carried {
				*d, carried = carry, false
			} else {
				// On a live stream, hand over what we have before
				// waiting for more: a batch must not hold packets back.
				if n > 0 && !r.Buffered() {
					b.dgs = b.dgs[:n]
					break
				}
				// The reader fills the batch's Datagram in place.
				if err := r.next(d); err != nil {
					b.dgs = b.dgs[:n]
					b.err = err
					break
				}
			}
			need := len(d.Frame)
			if d.payloadAt < 0 {
				need += len(d.Payload)
			}
			if len(b.slab)+need <= cap(b.slab) {
				frame := appendCopy(&b.slab, d.Frame)
				if d.payloadAt >= 0 {
					d.Payload = frame[d.payloadAt : d.payloadAt+len(d.Payload) : d.payloadAt+len(d.Payload)]
				} else {
					d.Payload = appendCopy(&b.slab, d.Payload)
				}
				d.Frame = frame
			} else if n > 0 {
				// No room: this datagram starts the next batch. Its
				// bytes stay valid until the reader's next call, made
				// after they are copied there.
				carry, carried = *d, true
				b.dgs = b.dgs[:n]
				break
			} else {
				d.Frame = bytes.Clone(d.Frame)
				d.Payload = bytes.Clone(d.Payload)
				d.payloadAt = -1
			}
		}
		b.counts, b.carried, b.carriedLT = r.Counters(), carried, carry.LinkType
		if p.prepare != nil && len(b.dgs) > 0 {
			p.prepare(b.dgs, &b.aux)
		}
		select {
		case p.full <- b:
		case <-p.done:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// appendCopy appends b to the slab and returns the copy, capped so that
// appending to it cannot reach the bytes after it.
func appendCopy(slab *[]byte, b []byte) []byte {
	start := len(*slab)
	*slab = append(*slab, b...)
	return (*slab)[start:len(*slab):len(*slab)]
}

// Next returns the next datagram, valid until the following call, or the
// error that ended the capture (io.EOF at its end).
func (p *Prefetcher) Next() (*Datagram, error) {
	for p.cur == nil || p.i >= len(p.cur.dgs) {
		if p.cur != nil {
			if p.cur.err != nil {
				p.err = p.cur.err
			}
			p.counts = p.cur.countsAt(len(p.cur.dgs))
			if p.err == nil {
				p.free <- p.cur
			}
			p.cur = nil
		}
		if p.err != nil {
			return nil, p.err
		}
		var b *batch
		var ok bool
		select {
		case b, ok = <-p.full:
		default:
			if p.Idle != nil {
				p.Idle()
			}
			b, ok = <-p.full
		}
		if !ok {
			p.err = io.EOF
			return nil, p.err
		}
		p.cur, p.i = b, 0
	}
	d := &p.cur.dgs[p.i]
	if j := p.i + prefetchAhead; j < len(p.cur.dgs) {
		// The reading goroutine wrote these bytes on another core: ask
		// for them a few datagrams ahead, so the caller does not wait for
		// each one when it gets there.
		ahead := &p.cur.dgs[j]
		prefetch(unsafe.Pointer(ahead))
		if len(ahead.Payload) > 0 {
			prefetch(unsafe.Pointer(&ahead.Payload[0]))
		}
	}
	p.i++
	return d, nil
}

// Prepared returns what the prepare function (PrefetchPrepared) made of
// the batch of the datagram Next returned last, and that datagram's place
// in the batch; nil and -1 before Next has returned one.
func (p *Prefetcher) Prepared() (aux any, i int) {
	if p.cur == nil || p.i == 0 {
		return nil, -1
	}
	return p.cur.aux, p.i - 1
}

// Ready reports whether Next has a datagram at hand, without waiting.
func (p *Prefetcher) Ready() bool { return p.cur != nil && p.i < len(p.cur.dgs) }

// Counters returns the reader's counters as of the last datagram Next
// returned; after Next has returned an error they are final. Datagrams
// are exact, frames nearly (see batch.countsAt), so a caller that stops
// within a batch (live -c) counts what it took; the other counters are
// those of the batch read ahead.
func (p *Prefetcher) Counters() Counters {
	if p.cur == nil || p.i == 0 {
		return p.counts
	}
	return p.cur.countsAt(p.i)
}

// Close stops the reading goroutine. It waits for it when it reads a
// pcap file (it stops within a batch), so the file can be closed, and
// when it has a prepare function, so that its work is over; it does not
// wait otherwise: on a live stream it may be waiting for input,
// and it ends when that comes (or with the program).
func (p *Prefetcher) Close() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	if p.wait {
		<-p.exited
	}
}
