package reassemble_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/reassemble"
)

// arrive stamps pieces with capture frame numbers 1, 2, … and times 25 ms
// apart from t0, in the order given, and adds them.
func arrive(a *reassemble.Assembler, ps []reassemble.Piece) {
	for i, p := range ps {
		p.N = i + 1
		p.TS = t0.Add(time.Duration(i) * 25 * time.Millisecond)
		a.Add(p)
	}
}

// TestAssemblerComplete feeds whole difs with their pieces in various orders
// and checks that each ends Complete, once, with exactly its bytes.
func TestAssemblerComplete(t *testing.T) {
	reverse := func(ps []reassemble.Piece) []reassemble.Piece {
		ps = slices.Clone(ps)
		slices.Reverse(ps)
		return ps
	}
	shuffle := func(ps []reassemble.Piece) []reassemble.Piece {
		ps = slices.Clone(ps)
		r := rand.New(rand.NewPCG(7, 7))
		r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		return ps
	}
	// dupFirst sends every piece but the last twice (the last one ends
	// the message, so a copy after it would be a late piece).
	dupFirst := func(ps []reassemble.Piece) []reassemble.Piece {
		var out []reassemble.Piece
		for i, p := range ps {
			out = append(out, p)
			if i < len(ps)-1 {
				out = append(out, p)
			}
		}
		return out
	}
	inOrder := func(ps []reassemble.Piece) []reassemble.Piece { return ps }
	tests := []struct {
		name  string
		size  int // compressed bytes
		order func([]reassemble.Piece) []reassemble.Piece
		count int
		dups  int
	}{
		{"one piece", 600, inOrder, 1, 0},
		{"four pieces in order", 3600, inOrder, 4, 0},
		{"four pieces reversed", 3600, reverse, 4, 0},
		{"nine pieces shuffled", 8500, shuffle, 9, 0},
		{"duplicated", 3600, dupFirst, 4, 3},
		{"duplicated reversed", 3600, func(ps []reassemble.Piece) []reassemble.Piece { return dupFirst(reverse(ps)) }, 4, 3},
		{"exact 1000: empty last piece", 1000, inOrder, 2, 0},
		{"exact 2000: empty last piece first", 2000, reverse, 3, 0},
		{"exact 5000 shuffled", 5000, shuffle, 6, 0},
		{"exact 5000 duplicated", 5000, dupFirst, 6, 5},
		{"255 pieces shuffled", 254321, shuffle, 255, 0},
		{"255 pieces, the largest dif, empty last piece", 254000, reverse, 255, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, z := streamOfSize(t, tt.size, uint64(tt.size))
			k := key(100, 105)
			c := newCollector(t)
			a := reassemble.New(reassemble.DefaultLimits, c.emit)
			ps := tt.order(split(k, z))
			arrive(a, ps)
			a.Flush()
			if len(c.msgs) != 1 {
				t.Fatalf("%d messages emitted, want 1: %s", len(c.msgs), c.keys())
			}
			m := c.msgs[0]
			if m.Status != reassemble.Complete || m.Err != nil {
				t.Fatalf("status %v (%v), want complete", m.Status, m.Err)
			}
			if m.Key != k || m.Count != tt.count || m.Pieces != tt.count || m.Duplicates != tt.dups || len(m.Missing) != 0 {
				t.Errorf("got key %v count %d pieces %d dups %d missing %v; want %v %d %d %d none",
					m.Key, m.Count, m.Pieces, m.Duplicates, m.Missing, k, tt.count, tt.count, tt.dups)
			}
			if !bytes.Equal(m.Compressed, z) {
				t.Errorf("compressed bytes differ from the stream (%d vs %d bytes)", len(m.Compressed), len(z))
			}
			if m.FirstN != 1 || m.LastN != len(ps) || !m.First.Equal(t0) || !m.Last.Equal(t0.Add(time.Duration(len(ps)-1)*25*time.Millisecond)) {
				t.Errorf("frames %d..%d at %v..%v, want 1..%d", m.FirstN, m.LastN, m.First, m.Last, len(ps))
			}
			if a.Pending() != 0 || a.LatePieces != 0 {
				t.Errorf("pending %d, late pieces %d; want 0, 0", a.Pending(), a.LatePieces)
			}
			var f reassemble.Inflater
			got, err := f.Inflate(nil, m.Compressed, len(plain))
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("the reassembled dif does not inflate to the original (%v)", err)
			}
		})
	}
}

// TestAssemblerPiecesCopied checks that the Assembler copies piece data: the
// caller may reuse its buffer for the next packet.
func TestAssemblerPiecesCopied(t *testing.T) {
	_, z := streamOfSize(t, 2500, 1)
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	buf := make([]byte, 1000)
	for _, p := range split(key(0, 5), z) {
		n := copy(buf, p.Data)
		p.Data = buf[:n]
		a.Add(p)
		clear(buf)
	}
	if m := c.byKey(key(0, 5)); m.Status != reassemble.Complete || !bytes.Equal(m.Compressed, z) {
		t.Errorf("status %v, bytes equal %v: piece data was not copied", m.Status, bytes.Equal(m.Compressed, z))
	}
}

// TestAssemblerRefs: a complete message gives its pieces' Refs in piece
// order, whatever order the pieces came in and with the first copy's Ref
// for a piece received twice; none when a piece has no Ref.
func TestAssemblerRefs(t *testing.T) {
	_, z := streamOfSize(t, 3500, 1)
	for _, tc := range []struct {
		name  string
		order []int   // pieces sent, by seq (a seq twice: a duplicate)
		refs  []int64 // each piece's Ref, by seq
		want  []int64
	}{
		{"in order", []int{0, 1, 2, 3}, []int64{10, 20, 30, 40}, []int64{10, 20, 30, 40}},
		{"out of order", []int{3, 1, 0, 2}, []int64{10, 20, 30, 40}, []int64{10, 20, 30, 40}},
		{"duplicate", []int{0, 1, 1, 2, 3}, []int64{10, 20, 30, 40}, []int64{10, 20, 30, 40}},
		{"one without", []int{0, 1, 2, 3}, []int64{10, 0, 30, 40}, nil},
		{"none", []int{0, 1, 2, 3}, []int64{0, 0, 0, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t)
			a := reassemble.New(reassemble.DefaultLimits, c.emit)
			pieces := split(key(0, 5), z)
			if len(pieces) != len(tc.refs) {
				t.Fatalf("%d pieces, the case has %d", len(pieces), len(tc.refs))
			}
			for k, seq := range tc.order {
				p := pieces[seq]
				p.Ref = tc.refs[seq]
				if k > 0 && seq == tc.order[k-1] {
					p.Ref++ // a copy read elsewhere: the first one's counts
				}
				a.Add(p)
			}
			m := c.byKey(key(0, 5))
			if m.Status != reassemble.Complete {
				t.Fatalf("status %v", m.Status)
			}
			if !slices.Equal(m.Refs, tc.want) {
				t.Errorf("refs %v, want %v", m.Refs, tc.want)
			}
			// The bytes come with the message only when the refs do not.
			if want := z; tc.want != nil && m.Compressed != nil || tc.want == nil && !bytes.Equal(m.Compressed, want) {
				t.Errorf("%d compressed bytes with refs %v", len(m.Compressed), m.Refs)
			}
		})
	}
}

// TestAssemblerRereadRefs: with RereadRefs the Assembler keeps no copy of
// a piece that has a Ref, and every outcome is as with the copies: a piece
// received again is compared with the bytes reread, a complete message
// with a piece without Ref is joined from them, and a piece that cannot be
// reread is told apart only by its start and size (its message ends
// Corrupt when its bytes are needed).
func TestAssemblerRereadRefs(t *testing.T) {
	_, z := streamOfSize(t, 3500, 1)
	pieces := split(key(0, 5), z)
	refOf := func(seq int) int64 { return int64(seq + 1) }
	for _, tc := range []struct {
		name     string
		order    []int // pieces sent, by seq
		noRef    int   // a seq sent without a Ref, -1 for none
		altered  int   // a seq whose second copy has other bytes, -1 for none
		broken   bool  // the file cannot be read again
		status   reassemble.Status
		refs     bool // the message gives its Refs, not its bytes
		dups     int
		rereads  int
		outcomes []reassemble.Outcome // of each piece sent, in order
	}{
		{"refs", []int{0, 1, 2, 3}, -1, -1, false, reassemble.Complete, true, 0, 0, nil},
		{"same copy", []int{0, 1, 1, 2, 3}, -1, -1, false, reassemble.Complete, true, 1, 1,
			[]reassemble.Outcome{reassemble.Accepted, reassemble.Accepted, reassemble.Duplicate, reassemble.Accepted, reassemble.Accepted}},
		{"other copy", []int{0, 1, 1, 2, 3}, -1, 1, false, reassemble.Corrupt, false, 0, 1,
			[]reassemble.Outcome{reassemble.Accepted, reassemble.Accepted, reassemble.Rejected, reassemble.Late, reassemble.Late}},
		{"one without", []int{0, 1, 2, 3}, 2, -1, false, reassemble.Complete, false, 0, 3, nil},
		{"unreadable copy", []int{0, 1, 1, 2, 3}, -1, 1, true, reassemble.Complete, true, 1, 1, nil},
		{"unreadable join", []int{0, 1, 2, 3}, 2, -1, true, reassemble.Corrupt, false, 0, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t)
			a := reassemble.New(reassemble.DefaultLimits, c.emit)
			rereads := 0
			a.RereadRefs(func(ref int64) ([]byte, error) {
				rereads++
				if tc.broken {
					return nil, errors.New("file gone")
				}
				return bytes.Clone(pieces[ref-1].Data), nil
			})
			buf := make([]byte, 1000)
			var outcomes []reassemble.Outcome
			for k, seq := range tc.order {
				p := pieces[seq]
				p.Data = buf[:copy(buf, p.Data)] // the caller's buffer, reused
				if seq != tc.noRef {
					p.Ref = refOf(seq)
				}
				if k > 0 && seq == tc.order[k-1] && seq == tc.altered {
					p.Data[0] ^= 0xff
				}
				outcomes = append(outcomes, a.Add(p))
				clear(buf)
			}
			m := c.byKey(key(0, 5))
			if m.Status != tc.status {
				t.Fatalf("status %v (%v), want %v", m.Status, m.Err, tc.status)
			}
			if got := m.Refs != nil; got != tc.refs {
				t.Errorf("refs %v, want refs: %v", m.Refs, tc.refs)
			}
			if tc.status == reassemble.Complete && !tc.refs && !bytes.Equal(m.Compressed, z) {
				t.Errorf("the joined bytes are not the dif's")
			}
			if m.Duplicates != tc.dups || rereads != tc.rereads {
				t.Errorf("duplicates %d, rereads %d; want %d, %d", m.Duplicates, rereads, tc.dups, tc.rereads)
			}
			if tc.outcomes != nil && !slices.Equal(outcomes, tc.outcomes) {
				t.Errorf("outcomes %v, want %v", outcomes, tc.outcomes)
			}
		})
	}
}

// TestAssemblerLendMessages: a lent Message holds what a given one does,
// each in its turn, for messages that complete, end corrupt and are
// abandoned.
func TestAssemblerLendMessages(t *testing.T) {
	_, z := streamOfSize(t, 2500, 1)
	var pieces []reassemble.Piece
	for i, k := range []reassemble.Key{key(0, 5), key(5, 6), key(6, 7)} {
		ps := split(k, z)
		switch i {
		case 1:
			ps[1].Count++ // corrupt
		case 2:
			ps = ps[:1] // abandoned at the end
		}
		for j := range ps {
			ps[j].N, ps[j].TS = len(pieces)+1, t0.Add(time.Duration(len(pieces))*time.Millisecond)
			pieces = append(pieces, ps[j])
		}
	}
	run := func(lend bool) []reassemble.Message {
		var got []reassemble.Message
		var last *reassemble.Message
		a := reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) {
			if lend && last != nil && m != last {
				t.Errorf("lent message %p, then %p: not reused", last, m)
			}
			last = m
			got = append(got, *m)
		})
		if lend {
			a.LendMessages()
		}
		for _, p := range pieces {
			a.Add(p)
		}
		a.Flush()
		return got
	}
	given, lent := run(false), run(true)
	want := []reassemble.Status{reassemble.Complete, reassemble.Corrupt, reassemble.Incomplete}
	if len(given) != len(want) {
		t.Fatalf("%d messages given, want %d", len(given), len(want))
	}
	for i, m := range given {
		if m.Status != want[i] {
			t.Errorf("message %d: %v, want %v", i, m.Status, want[i])
		}
	}
	if !reflect.DeepEqual(given, lent) {
		t.Errorf("lent messages differ from the ones given:\n%+v\n%+v", lent, given)
	}
}

// TestAssemblerCorrupt feeds pieces whose headers contradict each other or
// are absurd; the message must end Corrupt, once, and its later pieces must
// count as late.
func TestAssemblerCorrupt(t *testing.T) {
	k := key(10, 15)
	data := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	p := func(seq, count, start int, d []byte) reassemble.Piece {
		return reassemble.Piece{Key: k, Seq: seq, Count: count, Start: start, Data: d}
	}
	lim := reassemble.DefaultLimits
	tests := []struct {
		name   string
		pieces []reassemble.Piece
		err    string // in the message's error
		late   int    // pieces after the one that made it corrupt
	}{
		{"conflicting duplicate", []reassemble.Piece{p(0, 2, 0, data(1000, 1)), p(0, 2, 0, data(1000, 2)), p(1, 2, 1000, data(5, 3))}, "different contents", 1},
		{"duplicate with another start", []reassemble.Piece{p(0, 2, 0, data(10, 1)), p(0, 2, 3, data(10, 1))}, "different contents", 0},
		{"duplicate cut short", []reassemble.Piece{p(0, 2, 0, data(1000, 1)), p(0, 2, 0, data(999, 1))}, "different contents", 0},
		{"count mismatch", []reassemble.Piece{p(0, 3, 0, data(1000, 1)), p(1, 4, 1000, data(1000, 1)), p(2, 3, 2000, data(1, 1))}, "piece headers before it said 3", 1},
		{"count 0", []reassemble.Piece{p(0, 0, 0, data(10, 1)), p(0, 0, 0, data(10, 1))}, "piece count 0", 1},
		{"count negative", []reassemble.Piece{p(0, -1, 0, data(10, 1))}, "piece count -1", 0},
		{"count above 255", []reassemble.Piece{p(0, 256, 0, data(10, 1))}, "piece count 256", 0},
		{"seq equal to count", []reassemble.Piece{p(0, 3, 0, data(1000, 1)), p(3, 3, 3000, data(10, 1))}, "not below piece count 3", 0},
		{"seq above count first", []reassemble.Piece{p(7, 3, 0, data(10, 1)), p(0, 3, 0, data(1000, 1))}, "not below piece count 3", 1},
		{"seq negative", []reassemble.Piece{p(-1, 3, 0, data(10, 1))}, "not below piece count 3", 0},
		{"start beyond the largest dif", []reassemble.Piece{p(1, 2, 1<<31, data(10, 1))}, "beyond the largest dif", 0},
		{"start+size just beyond the largest dif", []reassemble.Piece{p(1, 2, lim.MaxCompressed-9, data(10, 1))}, "beyond the largest dif", 0},
		{"negative start", []reassemble.Piece{p(1, 2, -1000, data(10, 1))}, "beyond the largest dif", 0},
		{"hole", []reassemble.Piece{p(0, 2, 0, data(1000, 1)), p(1, 2, 1100, data(10, 1))}, "hole", 0},
		{"hole at the start", []reassemble.Piece{p(1, 2, 1000, data(10, 1)), p(0, 2, 5, data(995, 1))}, "hole", 0},
		{"overlap", []reassemble.Piece{p(0, 2, 0, data(1000, 1)), p(1, 2, 900, data(10, 1))}, "overlap", 0},
		{"overlap of an empty piece", []reassemble.Piece{p(0, 3, 0, data(1000, 1)), p(2, 3, 500, nil), p(1, 3, 1000, data(10, 1))}, "overlap", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(t)
			a := reassemble.New(lim, c.emit)
			arrive(a, tt.pieces)
			if a.Pending() != 0 {
				t.Errorf("%d messages still pending, want the corrupt one ended", a.Pending())
			}
			a.Flush()
			if len(c.msgs) != 1 {
				t.Fatalf("%d messages emitted, want 1: %s", len(c.msgs), c.keys())
			}
			m := c.msgs[0]
			if m.Status != reassemble.Corrupt || m.Err == nil || !strings.Contains(m.Err.Error(), tt.err) {
				t.Errorf("status %v, error %v; want corrupt with %q", m.Status, m.Err, tt.err)
			}
			if m.Compressed != nil {
				t.Errorf("a corrupt message carries %d compressed bytes", len(m.Compressed))
			}
			if a.LatePieces != tt.late {
				t.Errorf("%d late pieces, want %d", a.LatePieces, tt.late)
			}
		})
	}
}

// TestAssemblerAtTheLimit checks that a piece ending exactly at
// MaxCompressed is accepted.
func TestAssemblerAtTheLimit(t *testing.T) {
	c := newCollector(t)
	a := reassemble.New(reassemble.Limits{MaxCompressed: 2000}, c.emit)
	a.Add(reassemble.Piece{Key: key(0, 1), Seq: 1, Count: 2, Start: 1000, Data: make([]byte, 1000)})
	a.Add(reassemble.Piece{Key: key(0, 1), Seq: 0, Count: 2, Start: 0, Data: make([]byte, 1000)})
	if m := c.byKey(key(0, 1)); m.Status != reassemble.Complete || len(m.Compressed) != 2000 {
		t.Errorf("status %v (%v), %d bytes; want complete, 2000", m.Status, m.Err, len(m.Compressed))
	}
}

// TestAssemblerIncomplete checks messages abandoned with pieces missing: at
// Flush, or once the client's capture time has moved AbandonAfter past the
// message's last piece.
func TestAssemblerIncomplete(t *testing.T) {
	const after = 2 * time.Second
	lim := reassemble.DefaultLimits
	lim.AbandonAfter = after
	pc := func(k reassemble.Key, seq, count int, at time.Duration) reassemble.Piece {
		return reassemble.Piece{Key: k, Seq: seq, Count: count, Start: seq * 1000, Data: make([]byte, 1000), TS: t0.Add(at), N: int(at / time.Millisecond)}
	}
	other := reassemble.Key{Client: client2, Src: 0, Dst: 99}
	tests := []struct {
		name    string
		pieces  []reassemble.Piece
		flush   bool
		missing []int // of key(1, 2), nil: not ended
		have    int   // pieces it had
	}{
		{"gap, flushed", []reassemble.Piece{pc(key(1, 2), 0, 3, 0), pc(key(1, 2), 2, 3, 0)}, true, []int{1}, 2},
		{"gap, not flushed", []reassemble.Piece{pc(key(1, 2), 0, 3, 0), pc(key(1, 2), 2, 3, 0)}, false, nil, 0},
		{"all but the first, flushed", []reassemble.Piece{pc(key(1, 2), 3, 4, 0), pc(key(1, 2), 2, 4, 0), pc(key(1, 2), 1, 4, 0)}, true, []int{0}, 3},
		{"count 255 with one piece", []reassemble.Piece{pc(key(1, 2), 0, 255, 0)}, true, seqs(1, 255), 1},
		{"abandoned by a later piece of the client", []reassemble.Piece{pc(key(1, 2), 0, 3, 0), pc(key(1, 7), 0, 3, after+time.Millisecond)}, false, []int{1, 2}, 1},
		{"not abandoned at exactly AbandonAfter", []reassemble.Piece{pc(key(1, 2), 0, 3, 0), pc(key(1, 7), 0, 3, after)}, false, nil, 0},
		{"last piece counts, not the first", []reassemble.Piece{pc(key(1, 2), 0, 3, 0), pc(key(1, 2), 1, 3, time.Second), pc(key(1, 7), 0, 3, after+time.Second)}, false, nil, 0},
		{"another client's time does not count", []reassemble.Piece{pc(key(1, 2), 0, 3, 0), pc(other, 0, 3, time.Minute)}, false, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(t)
			a := reassemble.New(lim, c.emit)
			for _, p := range tt.pieces {
				a.Add(p)
			}
			if tt.flush {
				a.Flush()
			}
			var m *reassemble.Message
			for _, x := range c.msgs {
				if x.Key == key(1, 2) {
					m = x
				}
			}
			if tt.missing == nil {
				if m != nil {
					t.Fatalf("ended %v (%v), want still pending", m.Status, m.Err)
				}
				return
			}
			if m == nil {
				t.Fatalf("never ended; emitted: %s", c.keys())
			}
			if m.Status != reassemble.Incomplete || m.Err == nil || m.Compressed != nil {
				t.Errorf("status %v (%v), %d bytes; want incomplete without bytes", m.Status, m.Err, len(m.Compressed))
			}
			if !slices.Equal(m.Missing, tt.missing) || m.Pieces != tt.have {
				t.Errorf("missing %v, %d pieces; want %v, %d", m.Missing, m.Pieces, tt.missing, tt.have)
			}
		})
	}
}

// seqs returns lo, lo+1, …, hi-1.
func seqs(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestAssemblerAbandonBehindFront checks that AbandonAfter applies to every
// unfinished message of the client, not only to the one that started first:
// a message that started later but has been silent longer must be abandoned,
// and its late pieces must not complete it.
func TestAssemblerAbandonBehindFront(t *testing.T) {
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	at := func(k reassemble.Key, seq int, d time.Duration) {
		a.Add(reassemble.Piece{Key: k, Seq: seq, Count: 3, Start: seq * 1000, Data: make([]byte, 1000), TS: t0.Add(d)})
	}
	older, stale := key(1, 10), key(1, 20)
	at(older, 0, 0)                    // starts first
	at(stale, 0, 100*time.Millisecond) // starts second, never heard of again
	at(older, 1, 2*time.Second)        // keeps the first one fresh
	at(key(1, 30), 0, 2200*time.Millisecond)
	var got *reassemble.Message
	for _, m := range c.msgs {
		if m.Key == stale {
			got = m
		}
	}
	if got == nil {
		t.Fatalf("a message silent for 2.1 s (AbandonAfter 2 s) is still pending; emitted: %s", c.keys())
	}
	if got.Status != reassemble.Incomplete || !slices.Equal(got.Missing, []int{1, 2}) {
		t.Errorf("status %v missing %v, want incomplete missing [1 2]", got.Status, got.Missing)
	}
	if _, ok := c.seen[older]; ok {
		t.Errorf("the message heard of 0.2 s ago was abandoned")
	}
	// Its missing pieces now come too late.
	at(stale, 1, 2300*time.Millisecond)
	at(stale, 2, 2300*time.Millisecond)
	if a.LatePieces != 2 || c.seen[stale] != 1 {
		t.Errorf("%d late pieces, emitted %d times; want 2, 1", a.LatePieces, c.seen[stale])
	}
}

// TestAssemblerLimits checks that the oldest unfinished message is abandoned
// when a client, or all clients together, hold too many.
func TestAssemblerLimits(t *testing.T) {
	type add struct {
		client netip.AddrPort
		dst    int32
	}
	tests := []struct {
		name      string
		lim       reassemble.Limits
		adds      []add
		abandoned []add // in order, before Flush
	}{
		{"per client", reassemble.Limits{PendingPerClient: 2, PendingTotal: 100},
			[]add{{client1, 1}, {client2, 1}, {client1, 2}, {client2, 2}, {client1, 3}, {client1, 4}},
			[]add{{client1, 1}, {client1, 2}}},
		{"total", reassemble.Limits{PendingPerClient: 100, PendingTotal: 3},
			[]add{{client1, 1}, {client2, 1}, {client1, 2}, {client2, 2}, {client2, 3}, {client1, 3}},
			[]add{{client1, 1}, {client2, 1}, {client1, 2}}},
		{"both", reassemble.Limits{PendingPerClient: 2, PendingTotal: 3},
			[]add{{client1, 1}, {client1, 2}, {client1, 3}, {client2, 1}, {client2, 2}},
			[]add{{client1, 1}, {client1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(t)
			a := reassemble.New(tt.lim, c.emit)
			for i, ad := range tt.adds {
				a.Add(reassemble.Piece{Key: reassemble.Key{Client: ad.client, Src: 0, Dst: ad.dst}, Seq: 0, Count: 2, Data: make([]byte, 1000), TS: t0, N: i + 1})
				if a.Pending() > tt.lim.PendingTotal {
					t.Fatalf("after piece %d, %d pending, limit %d", i+1, a.Pending(), tt.lim.PendingTotal)
				}
			}
			var got []add
			for _, m := range c.msgs {
				got = append(got, add{m.Client, m.Dst})
				if m.Status != reassemble.Incomplete || !strings.Contains(m.Err.Error(), "too many") || !slices.Equal(m.Missing, []int{1}) {
					t.Errorf("%v: %v (%v) missing %v, want incomplete (too many) missing [1]", m.Key, m.Status, m.Err, m.Missing)
				}
			}
			if !slices.Equal(got, tt.abandoned) {
				t.Errorf("abandoned %v, want %v", got, tt.abandoned)
			}
			n := len(c.msgs)
			a.Flush()
			if len(c.msgs) != len(tt.adds) || a.Pending() != 0 {
				t.Errorf("after Flush %d of %d messages emitted, %d pending", len(c.msgs), len(tt.adds), a.Pending())
			}
			// Flush ends the rest oldest first.
			for i := n + 1; i < len(c.msgs); i++ {
				if c.msgs[i].FirstN < c.msgs[i-1].FirstN {
					t.Errorf("Flush emitted the message started at frame %d after the one started at %d", c.msgs[i].FirstN, c.msgs[i-1].FirstN)
				}
			}
		})
	}
}

// countingEmit counts messages by status and checks that none is emitted
// twice, without keeping them.
type countingEmit struct {
	t      testing.TB
	seen   map[reassemble.Key]bool
	status [3]int
}

func (c *countingEmit) emit(m *reassemble.Message) {
	if c.seen[m.Key] {
		c.t.Errorf("%v emitted twice", m.Key)
	}
	c.seen[m.Key] = true
	c.status[m.Status]++
}

// TestAssemblerHostileKeys sends 100000 distinct (src, dst) keys, each with
// one of its two pieces: memory must stay bounded by the limits, and every
// message must end exactly once.
func TestAssemblerHostileKeys(t *testing.T) {
	const n = 100000
	lim := reassemble.Limits{PendingPerClient: 64, PendingTotal: 100}
	clients := []netip.AddrPort{client1, client2, netip.MustParseAddrPort("10.0.0.4:24785")}
	c := &countingEmit{t: t, seen: map[reassemble.Key]bool{}}
	a := reassemble.New(lim, c.emit)
	data := make([]byte, 1000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	maxPending := 0
	for i := range n {
		k := reassemble.Key{Client: clients[i%len(clients)], Src: int32(i), Dst: int32(i + 1)}
		a.Add(reassemble.Piece{Key: k, Seq: i & 1, Count: 2, Start: (i & 1) * 1000, Data: data, N: i + 1, TS: t0})
		maxPending = max(maxPending, a.Pending())
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if maxPending > lim.PendingTotal {
		t.Errorf("up to %d messages pending, limit %d", maxPending, lim.PendingTotal)
	}
	// 100 pending pieces of 1000 bytes, plus per-client bookkeeping; the
	// seen map of this test is most of it.
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 32<<20 {
		t.Errorf("heap grew by %d MB for %d pending messages", grow>>20, a.Pending())
	}
	a.Flush()
	if len(c.seen) != n || c.status[reassemble.Incomplete] != n || a.Pending() != 0 {
		t.Errorf("%d messages ended (%v by status), want %d incomplete", len(c.seen), c.status, n)
	}
}

// TestAssemblerManyClients sends one of two pieces for each of 50000
// clients, so the total limit is hit on every piece: abandoning the oldest
// message must not cost a pass over every client ever seen.
func TestAssemblerManyClients(t *testing.T) {
	if testing.Short() {
		t.Skip("slow when broken")
	}
	const n = 50000
	c := &countingEmit{t: t, seen: map[reassemble.Key]bool{}}
	a := reassemble.New(reassemble.Limits{PendingTotal: 1024}, c.emit)
	start := time.Now()
	for i := range n {
		cl := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 24785)
		a.Add(reassemble.Piece{Key: reassemble.Key{Client: cl, Dst: 5}, Seq: 0, Count: 2, Data: []byte{1}, TS: t0})
		if a.Pending() > 1024 {
			t.Fatalf("%d pending, limit 1024", a.Pending())
		}
	}
	a.Flush()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("%d clients took %v: abandoning the oldest is not O(1)", n, el)
	}
	if len(c.seen) != n || c.status[reassemble.Incomplete] != n {
		t.Errorf("%d messages ended (%v by status), want %d incomplete", len(c.seen), c.status, n)
	}
}

// TestAssemblerLatePieces checks that pieces of a message that already
// ended (complete, abandoned or corrupt) are counted and start nothing.
func TestAssemblerLatePieces(t *testing.T) {
	_, z := streamOfSize(t, 2500, 3)
	k := key(40, 45)
	ps := split(k, z)
	tests := []struct {
		name   string
		first  []reassemble.Piece // ends the message
		end    func(a *reassemble.Assembler)
		status reassemble.Status
		late   []reassemble.Piece
	}{
		{"after complete", ps, nil, reassemble.Complete, ps},
		{"after flush", ps[:2], (*reassemble.Assembler).Flush, reassemble.Incomplete, ps[2:]},
		{"after corrupt", []reassemble.Piece{ps[0], {Key: k, Seq: 1, Count: 9, Start: 1000, Data: ps[1].Data}}, nil, reassemble.Corrupt, ps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(t)
			a := reassemble.New(reassemble.DefaultLimits, c.emit)
			for _, p := range tt.first {
				a.Add(p)
			}
			if tt.end != nil {
				tt.end(a)
			}
			if m := c.byKey(k); m.Status != tt.status {
				t.Fatalf("status %v (%v), want %v", m.Status, m.Err, tt.status)
			}
			for _, p := range tt.late {
				a.Add(p)
			}
			if a.LatePieces != len(tt.late) || a.Pending() != 0 {
				t.Errorf("%d late pieces, %d pending; want %d, 0", a.LatePieces, a.Pending(), len(tt.late))
			}
			a.Flush()
			if len(c.msgs) != 1 {
				t.Errorf("%d messages emitted, want 1: %s", len(c.msgs), c.keys())
			}
		})
	}
}

// TestAssemblerKeys checks that pieces of different clients, level
// sequences, srcs or dsts are different messages, interleaved freely.
func TestAssemblerKeys(t *testing.T) {
	keys := []reassemble.Key{
		{Client: client1, SLSN: 0, Src: 0, Dst: 10},
		{Client: client2, SLSN: 0, Src: 0, Dst: 10},
		{Client: client1, SLSN: 1, Src: 0, Dst: 10},
		{Client: client1, SLSN: 0, Src: 5, Dst: 10},
		{Client: client1, SLSN: 0, Src: 0, Dst: 11},
		{Client: client1, SLSN: -1, Src: 0, Dst: 10},
	}
	streams := map[reassemble.Key][]byte{}
	var all [][]reassemble.Piece
	for i, k := range keys {
		_, z := streamOfSize(t, 1500+i*1000, uint64(i))
		streams[k] = z
		all = append(all, split(k, z))
	}
	// Round robin over the messages, in reverse piece order.
	var order []reassemble.Piece
	for i := 0; ; i++ {
		added := false
		for _, ps := range all {
			if i < len(ps) {
				order = append(order, ps[len(ps)-1-i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	arrive(a, order)
	if len(c.msgs) != len(keys) {
		t.Fatalf("%d messages, want %d: %s", len(c.msgs), len(keys), c.keys())
	}
	for _, k := range keys {
		if m := c.byKey(k); m.Status != reassemble.Complete || !bytes.Equal(m.Compressed, streams[k]) {
			t.Errorf("%v: %v (%v), bytes equal %v", k, m.Status, m.Err, bytes.Equal(m.Compressed, streams[k]))
		}
	}
}

// TestStatusString checks the status names.
func TestStatusString(t *testing.T) {
	for s, want := range map[reassemble.Status]string{reassemble.Complete: "complete", reassemble.Incomplete: "incomplete", reassemble.Corrupt: "corrupt"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", s, s.String(), want)
		}
	}
	if got := key(3, 8).String(); got != "10.0.0.2:24785 slsn 0 [3 to 8]" {
		t.Errorf("key: %q", got)
	}
}
