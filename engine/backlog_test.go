package engine

import (
	"errors"
	"fmt"
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
