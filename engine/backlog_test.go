package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/pmdump/pmdump/reassemble"
)

// The backlog gives back every op in the order pushed, with every field
// the rebuild uses, whether it stayed in memory or went through the file,
// with pops between the pushes or all at the end; and leaves no file.
func TestBacklogOrder(t *testing.T) {
	client := netip.MustParseAddrPort("10.0.0.2:24785")
	at := time.Unix(1700000000, 123456789)
	op := func(i int) rebuildOp {
		l := reassemble.Chain{Conv: i % 7, Client: client}
		switch i % 3 {
		case 0:
			m := &reassemble.Message{Key: reassemble.Key{Client: client, Conv: i % 7, SLSN: i % 5, Src: int32(i), Dst: int32(i + 1)},
				Status: reassemble.Status(i % 4), Count: i % 9, Pieces: i % 8, Bytes: i, LastN: 10 * i, Last: at.Add(time.Duration(i))}
			if i%2 == 0 {
				m.Compressed = make([]byte, i%3000)
				for k := range m.Compressed {
					m.Compressed[k] = byte(k * i)
				}
			} else {
				m.Err = fmt.Errorf("dif %d: no", i)
			}
			return rebuildOp{kind: opDif, water: i - 3, msg: m}
		case 1:
			return rebuildOp{kind: opAck, water: -1, line: l, n: int32(i), ts: at.Add(time.Duration(i))}
		}
		return rebuildOp{kind: opPlayer, water: i, line: l, n: int32(i % 8)}
	}
	same := func(a, b rebuildOp) error {
		if a.kind != b.kind || a.water != b.water || a.line != b.line || a.n != b.n || a.kind == opAck && !a.ts.Equal(b.ts) {
			return fmt.Errorf("%+v, want %+v", a, b)
		}
		if a.msg == nil {
			return nil
		}
		x, y := a.msg, b.msg
		if x.Key != y.Key || x.Status != y.Status || x.Count != y.Count || x.Pieces != y.Pieces || x.Bytes != y.Bytes ||
			x.LastN != y.LastN || !x.Last.Equal(y.Last) || string(x.Compressed) != string(y.Compressed) ||
			(x.Err == nil) != (y.Err == nil) || x.Err != nil && x.Err.Error() != y.Err.Error() {
			return fmt.Errorf("message %+v, want %+v", x, y)
		}
		return nil
	}
	for _, c := range []struct {
		name   string
		budget int
		every  int // pop after every this many pushes (0: at the end)
	}{
		{"memory", 1 << 30, 0},
		{"file", 100, 0},
		{"file, popping along", 20 << 10, 3},
		{"both, popping along", 300 << 10, 5},
	} {
		dir := t.TempDir()
		q := newBacklog(c.budget, dir)
		const n = 3000
		next := 0
		pop := func() error {
			o, ok := q.pop()
			if !ok {
				return errors.New("queue ended early")
			}
			if err := same(o, op(next)); err != nil {
				return fmt.Errorf("op %d: %w", next, err)
			}
			next++
			return nil
		}
		for i := range n {
			q.push(op(i))
			if c.every > 0 && i%c.every == 0 {
				if err := pop(); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
		}
		q.close()
		for next < n {
			if err := pop(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if _, ok := q.pop(); ok || q.failure() != nil {
			t.Errorf("%s: after the last op: more, or %v", c.name, q.failure())
		}
		if spilled := q.spilled > 0; spilled != (c.budget < 1<<30) {
			t.Errorf("%s: %d bytes spilled", c.name, q.spilled)
		}
		q.abort()
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%s: %d files left", c.name, len(left))
		}
	}
}

// appendOpPlain is appendOp as it was first written: the fields in a
// scratch record, then its length and the record.
func appendOpPlain(b []byte, o *rebuildOp) []byte {
	var rec []byte
	rec = append(rec, o.kind)
	rec = binary.AppendVarint(rec, int64(o.water))
	rec = appendLine(rec, o.line)
	rec = binary.AppendVarint(rec, int64(o.n))
	rec = binary.AppendVarint(rec, o.ts.UnixNano())
	rec = binary.AppendVarint(rec, int64(o.seq))
	if o.kind == opDif {
		m := o.msg
		rec = appendLine(rec, m.Chain())
		for _, v := range []int64{int64(m.SLSN), int64(m.Src), int64(m.Dst), int64(m.Status), int64(m.Count), int64(m.Pieces),
			int64(m.Bytes), int64(m.LastN), m.Last.UnixNano()} {
			rec = binary.AppendVarint(rec, v)
		}
		errText := ""
		if m.Err != nil {
			errText = m.Err.Error()
		}
		rec = binary.AppendUvarint(rec, uint64(len(errText)))
		rec = append(rec, errText...)
		rec = binary.AppendUvarint(rec, uint64(len(m.Compressed)))
		rec = append(rec, m.Compressed...)
		rec = binary.AppendUvarint(rec, uint64(len(m.Refs)))
		for _, ref := range m.Refs {
			rec = binary.AppendVarint(rec, ref)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(rec)))
	return append(b, rec...)
}

// TestAppendOp: the records appendOp writes in place are byte for byte
// those of the plain encoding, short and long, one after the other in one
// buffer, for IPv4 and IPv6 clients (with a zone).
func TestAppendOp(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	clients := []netip.AddrPort{
		netip.MustParseAddrPort("10.0.0.2:24785"),
		netip.MustParseAddrPort("[fe80::1%eth0]:24785"),
		netip.MustParseAddrPort("[2001:db8::7]:1"),
		{},
	}
	var got, want, rec []byte
	for i := range 2000 {
		c := clients[r.IntN(len(clients))]
		o := rebuildOp{kind: uint8(opAck + r.IntN(opSkip-opAck+1)), water: r.IntN(1<<20) - 1, line: reassemble.Chain{Conv: r.IntN(5000), Client: c},
			n: int32(r.Uint32()), ts: time.Unix(r.Int64N(1<<33), r.Int64N(1e9)), seq: r.IntN(1 << 30)}
		if r.IntN(2) == 0 {
			o.kind = opDif
			m := &reassemble.Message{Key: reassemble.Key{Client: c, Conv: r.IntN(100), SLSN: r.IntN(300), Src: int32(r.Uint32()), Dst: int32(r.Uint32())},
				Status: reassemble.Status(r.IntN(4)), Count: r.IntN(256), Pieces: r.IntN(256), Bytes: r.IntN(1 << 18), LastN: r.IntN(1 << 30),
				Last: time.Unix(r.Int64N(1<<33), r.Int64N(1e9))}
			switch r.IntN(4) {
			case 0:
				m.Compressed = make([]byte, r.IntN(300))
			case 1:
				m.Err = fmt.Errorf("dif %d: %s", i, string(make([]byte, r.IntN(200))))
			case 2:
				for range r.IntN(20) {
					m.Refs = append(m.Refs, r.Int64())
				}
			}
			o.msg = m
		}
		got, rec = appendOp(got, rec, &o)
		want = appendOpPlain(want, &o)
		if !bytes.Equal(got, want) {
			t.Fatalf("op %d (%+v): records differ", i, o)
		}
	}
}
