package source

import (
	"bytes"
	"io"
)

// Prefetcher reads a Reader's datagrams ahead in a goroutine of its own, in
// batches, so that reading and parsing the capture runs on one core while
// the caller decodes and prints on another. Memory is bounded: at most a few
// batches of about a megabyte are in flight.
type Prefetcher struct {
	// Idle, when set, is called before Next waits for the input, so a
	// caller can flush its output while a live stream is quiet.
	Idle   func()
	full   chan *batch
	free   chan *batch
	done   chan struct{}
	cur    *batch
	i      int
	err    error
	counts Counters
}

type batch struct {
	dgs    []Datagram
	slab   []byte
	err    error
	counts Counters
}

const (
	batchSlab    = 1 << 20
	batchMax     = 2048
	batchesInUse = 4
)

// Prefetch starts reading r ahead. The caller must call Close when done, and
// must not use r directly any more.
func Prefetch(r *Reader) *Prefetcher {
	p := &Prefetcher{
		full: make(chan *batch, batchesInUse),
		free: make(chan *batch, batchesInUse),
		done: make(chan struct{}),
	}
	for i := 0; i < batchesInUse; i++ {
		p.free <- &batch{dgs: make([]Datagram, 0, batchMax), slab: make([]byte, 0, batchSlab)}
	}
	go p.produce(r)
	return p
}

func (p *Prefetcher) produce(r *Reader) {
	defer close(p.full)
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.done:
			return
		}
		b.dgs, b.slab, b.err = b.dgs[:0], b.slab[:0], nil
		for len(b.dgs) < batchMax {
			// On a live stream, hand over what we have before waiting
			// for more: a batch must not hold packets back.
			if len(b.dgs) > 0 && !r.Buffered() {
				break
			}
			d, err := r.Next()
			if err != nil {
				b.err = err
				break
			}
			dg := *d
			need := len(d.Frame)
			if d.payloadAt < 0 {
				need += len(d.Payload)
			}
			if len(b.slab)+need <= cap(b.slab) {
				dg.Frame = appendCopy(&b.slab, d.Frame)
				if d.payloadAt >= 0 {
					dg.Payload = dg.Frame[d.payloadAt : d.payloadAt+len(d.Payload) : d.payloadAt+len(d.Payload)]
				} else {
					dg.Payload = appendCopy(&b.slab, d.Payload)
				}
			} else if len(b.dgs) > 0 {
				// No room: this datagram starts the next batch.
				r.unread()
				break
			} else {
				dg.Frame = bytes.Clone(d.Frame)
				dg.Payload = bytes.Clone(d.Payload)
				dg.payloadAt = -1
			}
			b.dgs = append(b.dgs, dg)
		}
		b.counts = r.Counters()
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
			p.counts = p.cur.counts
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
	p.i++
	return d, nil
}

// Counters returns the reader's counters as of the last batch consumed;
// after Next has returned an error they are final.
func (p *Prefetcher) Counters() Counters { return p.counts }

// Close stops the reading goroutine. It does not wait for it: on a live
// stream it may be waiting for input, and it ends when that comes (or with
// the program).
func (p *Prefetcher) Close() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}
