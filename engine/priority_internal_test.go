package engine

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// The backlog hands the prioritized line's ops first, in their order, up
// to its dif that ends past the packet wanted and not past a flush; the
// other ops come after in their order, with what stands for each op taken
// in its place; in memory, through the file, and half in each.
func TestBacklogPriority(t *testing.T) {
	client := netip.MustParseAddrPort("10.0.0.2:24785")
	line := func(i int) reassemble.Chain { return reassemble.Chain{Conv: i % 3, Client: client} }
	op := func(i int) rebuildOp {
		switch {
		case i == 500:
			return rebuildOp{kind: opFlush, water: i}
		case i%4 == 3:
			return rebuildOp{kind: opAck, water: i, line: line(i), n: int32(i)}
		}
		m := &reassemble.Message{Key: reassemble.Key{Client: client, Conv: i % 3, Dst: int32(i)}, LastN: i, Compressed: make([]byte, 100)}
		return rebuildOp{kind: opDif, water: i, msg: m}
	}
	difsBefore := make([]int, 800)
	for i := 1; i < len(difsBefore); i++ {
		difsBefore[i] = difsBefore[i-1]
		if op(i-1).kind == opDif {
			difsBefore[i]++
		}
	}
	// which is the op's place, by its water (the test's own numbering).
	which := func(o rebuildOp) int { return o.water }
	for _, c := range []struct {
		name   string
		budget int
		upTo   int
		want   int // the ops taken first: those of line 2 before this one
	}{
		{"memory, all", 1 << 30, -1, 500},        // the flush
		{"memory, up to 200", 1 << 30, 200, 206}, // 203 is an ack
		{"file, all", 1000, -1, 500},
		{"both, up to 300", 40 << 10, 300, 302},
		{"file, up to 700", 1000, 700, 500},
	} {
		q := newBacklog(c.budget, t.TempDir())
		const n = 800
		for i := range n {
			q.push(op(i))
		}
		q.close()
		q.prioritize(line(2), c.upTo)
		var got []int
		for {
			o, ok := q.next(true)
			if !ok || !o.early {
				if ok {
					got = append(got, -1)
					q.pri.on = false
					if o.kind == opTaken || o.kind == opSkip {
						t.Fatalf("%s: an op taken comes first", c.name)
					}
					got = append(got, which(o))
				}
				break
			}
			got = append(got, which(o))
		}
		for {
			o, ok := q.next(false)
			if !ok {
				break
			}
			switch o.kind {
			case opTaken, opSkip:
				if o.seq != difsBefore[which(o)] || o.kind == opTaken && int(o.n) != which(o) {
					t.Fatalf("%s: op %d stands with %+v", c.name, which(o), o)
				}
				got = append(got, -2-which(o))
			default:
				got = append(got, which(o))
			}
		}
		var want []int
		for i := range c.want {
			if line(i) == line(2) && i != 500 {
				want = append(want, i)
			}
		}
		want = append(want, -1)
		for i := range n {
			if line(i) == line(2) && i < c.want && i != 500 {
				want = append(want, -2-i)
			} else {
				want = append(want, i)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d ops, want %d", c.name, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: op %d is %d, want %d", c.name, i, got[i], want[i])
			}
		}
		q.abort()
	}
}

// A line prioritized after another takes ops from the file before those
// the first one took, and the first one asked for again goes on from the
// ops it has not taken: each op still comes once in its place, the ops
// taken as what stands for them.
func TestBacklogPrioritySwitch(t *testing.T) {
	client := netip.MustParseAddrPort("10.0.0.2:24785")
	line := func(i int) reassemble.Chain { return reassemble.Chain{Conv: i % 3, Client: client} }
	q := newBacklog(1000, t.TempDir()) // all in the file
	defer q.abort()
	const n = 600
	for i := range n {
		m := &reassemble.Message{Key: reassemble.Key{Client: client, Conv: i % 3, Dst: int32(i)}, LastN: i, Compressed: make([]byte, 100)}
		q.push(rebuildOp{kind: opDif, water: i, msg: m})
	}
	q.close()
	early := map[int]bool{}
	// Line 2 is asked for again after line 1: from its ops not taken yet.
	for _, c := range []struct{ conv, ops int }{{2, 40}, {1, 25}, {2, 30}} {
		q.prioritize(line(c.conv), -1)
		for range c.ops {
			o, ok := q.next(true)
			if !ok || !o.early || o.msg.Conv != c.conv {
				t.Fatalf("line %d: %+v, %v; want its next op taken first", c.conv, o, ok)
			}
			if early[o.water] {
				t.Fatalf("line %d: op %d taken first twice", c.conv, o.water)
			}
			early[o.water] = true
		}
	}
	q.pri.on = false
	for i := range n {
		o, ok := q.next(false)
		if !ok {
			t.Fatalf("op %d: the backlog ended", i)
		}
		if o.kind == opTaken {
			if !early[i] || int(o.n) != i || o.seq != i {
				t.Fatalf("op %d: %+v stands for an op not taken first, or not for it", i, o)
			}
			continue
		}
		if early[i] || o.kind != opDif || o.water != i {
			t.Fatalf("op %d: %+v, want the dif in its place", i, o)
		}
	}
	if len(early) != 95 || len(q.pri.taken) != 0 || len(q.pri.takenAt) != 0 {
		t.Errorf("%d ops taken first, %d left waiting", len(early), len(q.pri.taken))
	}
}

// peekOp reads of each kind of record the kind, line and LastN that
// readOp decodes in full.
func TestPeekOp(t *testing.T) {
	v4 := reassemble.Chain{Conv: 3, Client: netip.MustParseAddrPort("10.0.0.2:24785")}
	v6 := reassemble.Chain{Conv: 70000, Client: netip.MustParseAddrPort("[fe80::1%eth0]:1")}
	dif := func(l reassemble.Chain, lastN int) *reassemble.Message {
		return &reassemble.Message{Key: reassemble.Key{Client: l.Client, Conv: l.Conv, SLSN: 9, Src: 40, Dst: 41}, Status: reassemble.Corrupt,
			Count: 3, Pieces: 2, Bytes: 900, LastN: lastN, Err: errors.New("cut"), Compressed: []byte{1, 2, 3}, Refs: []int64{5, -7}}
	}
	for _, c := range []struct {
		name string
		op   rebuildOp
	}{
		{"dif", rebuildOp{kind: opDif, water: 12, seq: 4, msg: dif(v4, 1234567)}},
		{"dif v6", rebuildOp{kind: opDif, water: -1, seq: 1 << 40, msg: dif(v6, 0)}},
		{"ack", rebuildOp{kind: opAck, water: 5, line: v6, n: -3, ts: time.Unix(7, 8), seq: 2}},
		{"player", rebuildOp{kind: opPlayer, line: v4, n: 6}},
		{"flush", rebuildOp{kind: opFlush, water: 99}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, _ := appendOp(nil, nil, &c.op)
			n, k := binary.Uvarint(b) // the record's length before it
			if k <= 0 || int(n) != len(b)-k {
				t.Fatalf("record of %d bytes after a length of %d", len(b)-k, n)
			}
			rec := b[k:]
			full, err := readOp(rec)
			if err != nil {
				t.Fatal(err)
			}
			kind, l, lastN, err := peekOp(rec)
			if err != nil {
				t.Fatal(err)
			}
			wantN := 0
			if full.kind == opDif {
				wantN = full.msg.LastN
			}
			if kind != full.kind || l != opLine(&full) || lastN != wantN {
				t.Errorf("peekOp = %d %v %d, readOp gives %d %v %d", kind, l, lastN, full.kind, opLine(&full), wantN)
			}
			if _, _, _, err := peekOp(rec[:len(rec)/3]); err == nil && c.op.kind == opDif {
				t.Error("a cut record peeks without an error")
			}
		})
	}
}

// An earlyState gives back the very State it was made of: its time with
// its location (or a monotonic reading), its error, sha256 and the
// inspections' Extra, however they nest.
func TestEarlyStatePack(t *testing.T) {
	client := netip.MustParseAddrPort("10.0.0.2:24785")
	at := time.Unix(1700000000, 123456789)
	hx := func(x any) any {
		return healthExtra{sample: sample{x: 1.5, y: -2, late: 3, pos: true, nextLevel: 4}, extra: x}
	}
	fx := func(ok bool, x any) any { return findingsExtra{active: 0x85, ok: ok, extra: x} }
	for _, c := range []struct {
		name string
		s    replay.State
	}{
		{"plain", replay.State{TS: at}},
		{"utc", replay.State{TS: at.UTC(), Err: errors.New("bad")}},
		{"zone", replay.State{TS: at.In(time.FixedZone("x", 3600))}},
		{"zero time", replay.State{}},
		{"monotonic", replay.State{TS: time.Now()}},
		{"health and findings", replay.State{TS: at, Extra: hx(fx(true, nil))}},
		{"findings not ok", replay.State{TS: at, Extra: hx(fx(false, nil))}},
		{"findings alone", replay.State{TS: at, Extra: fx(true, nil)}},
		{"caller's extra inside", replay.State{TS: at, Extra: hx(fx(true, []int{7}))}},
		{"nested the other way", replay.State{TS: at, Extra: fx(true, hx("x"))}},
		{"caller's only", replay.State{TS: at, Extra: "mine"}},
		{"sum", replay.State{TS: at, Sum: [32]byte{1, 2, 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.s
			s.Client, s.Conv, s.Seq, s.BaseSeq, s.Player, s.SLSN = client, 4, 77, 70, 3, 2
			s.Src, s.Dst, s.N, s.Size, s.Compressed, s.Pieces, s.Count = 10, 12, 900, 111000, 700, 2, 2
			s.Status, s.Hash = replay.Corrupt, statedif.Hash{5, 6}
			b := &behind{}
			es := b.pack(&s)
			got := b.unpack(&es)
			if !reflect.DeepEqual(*got, s) {
				t.Errorf("unpack(pack(s)) = %+v, want %+v", *got, s)
			}
			if len(b.sides) != 0 {
				t.Errorf("%d sides left after unpack", len(b.sides))
			}
		})
	}
}
