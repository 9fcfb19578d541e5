package sender

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// batchSize is how many datagrams go in one sendmmsg.
const batchSize = 512

// batch collects datagrams from one socket, to be sent with one system
// call (sendmmsg) as fast as possible; the payloads are copied in.
type batch struct {
	conn    *net.UDPConn
	ms      []ipv4.Message
	arena   []byte
	n       int
	sentAny bool
}

func newBatch() *batch {
	b := &batch{ms: make([]ipv4.Message, batchSize), arena: make([]byte, 0, 256<<10)}
	for i := range b.ms {
		b.ms[i].Buffers = make([][]byte, 1)
	}
	return b
}

// add adds a datagram; false when the batch is full or from another socket.
func (b *batch) add(conn *net.UDPConn, to *net.UDPAddr, p []byte) bool {
	if b.n > 0 && (conn != b.conn || b.n == batchSize || len(b.arena)+len(p) > cap(b.arena)) {
		return false
	}
	b.conn = conn
	if len(b.arena)+len(p) > cap(b.arena) {
		b.arena = make([]byte, 0, len(p)) // a datagram larger than the arena
	}
	off := len(b.arena)
	b.arena = append(b.arena, p...)
	b.ms[b.n].Buffers[0] = b.arena[off:len(b.arena):len(b.arena)]
	b.ms[b.n].Addr = to
	b.n++
	return true
}

// send sends the batch, counting into st and sent.
func (b *batch) send(st *Stats, sent *int, progress func(int)) error {
	defer func() { b.n, b.arena = 0, b.arena[:0] }()
	if b.n == 0 {
		return nil
	}
	var w interface {
		WriteBatch([]ipv4.Message, int) (int, error)
	}
	if b.conn.LocalAddr().(*net.UDPAddr).IP.To4() != nil {
		w = ipv4.NewPacketConn(b.conn)
	} else {
		w = ipv6.NewPacketConn(b.conn)
	}
	ms := b.ms[:b.n]
	for len(ms) > 0 {
		k, err := w.WriteBatch(ms, 0)
		k = max(k, 0)
		for _, m := range ms[:k] {
			st.Datagrams++
			st.Bytes += len(m.Buffers[0])
		}
		*sent += k
		b.sentAny = b.sentAny || k > 0
		ms = ms[k:]
		if err == nil {
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			// the report of an earlier datagram, given instead of
			// sending this one (it is queued, and counted, from the
			// error queue): this one goes again
			continue
		}
		if !st.count(err) {
			return fmt.Errorf("send datagram %d: %w", *sent+1, err)
		}
		ms = ms[1:] // that one failed
		*sent++
	}
	if progress != nil {
		progress(*sent)
	}
	return nil
}
