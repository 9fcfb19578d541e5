package reassemble_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/reassemble"
)

// Pieces that all claim start 0 cannot hold more than the largest dif: one
// client's overlapping pieces once cost a gigabyte.
func TestOverlappingPiecesBounded(t *testing.T) {
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	data := make([]byte, 60000)
	k := key(0, 1)
	for seq := range 255 {
		a.Add(reassemble.Piece{Key: k, Seq: seq, Count: 255, Start: 0, Data: data, TS: t0})
	}
	m := c.byKey(k)
	if m.Status != reassemble.Corrupt || !strings.Contains(m.Err.Error(), "more than the largest dif") {
		t.Errorf("%v %v, want corrupt: more than the largest dif", m.Status, m.Err)
	}
	if m.Pieces > reassemble.DefaultLimits.MaxCompressed/len(data)+1 {
		t.Errorf("%d pieces of %d bytes held", m.Pieces, len(data))
	}
}

// The bytes held for unfinished difs are bounded over all clients: past
// the bound the oldest unfinished dif is abandoned.
func TestPendingBytesBounded(t *testing.T) {
	c := newCollector(t)
	lim := reassemble.DefaultLimits
	lim.PendingBytes = 10000
	a := reassemble.New(lim, c.emit)
	for i := range 30 {
		// 2 of 3 pieces of each dif: never complete.
		k := reassemble.Key{Client: client1, Conv: i + 1, Src: 0, Dst: int32(i + 1)}
		for seq := range 2 {
			a.Add(reassemble.Piece{Key: k, Seq: seq, Count: 3, Start: seq * 1000, Data: make([]byte, 1000), TS: t0})
		}
	}
	if len(c.msgs) < 20 {
		t.Errorf("%d difs abandoned, want the bytes held kept under 10000 (at most 5 difs of 2000)", len(c.msgs))
	}
	for _, m := range c.msgs {
		if m.Status != reassemble.Incomplete || m.Bytes != 2000 {
			t.Errorf("%v: %v, %d bytes received", m.Key, m.Status, m.Bytes)
		}
	}
}

// What becomes of each piece: a copy after its dif completed is a late
// duplicate, a piece after its dif was abandoned is late; both are counted.
func TestPieceOutcomes(t *testing.T) {
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	k := key(0, 1)
	p0 := reassemble.Piece{Key: k, Seq: 0, Count: 2, Start: 0, Data: []byte("ab"), TS: t0}
	p1 := reassemble.Piece{Key: k, Seq: 1, Count: 2, Start: 2, Data: []byte("cd"), TS: t0}
	steps := []struct {
		p    reassemble.Piece
		want reassemble.Outcome
	}{
		{p0, reassemble.Accepted}, {p0, reassemble.Duplicate}, {p1, reassemble.Accepted}, {p1, reassemble.LateDuplicate},
	}
	for i, s := range steps {
		if got := a.Add(s.p); got != s.want {
			t.Errorf("step %d: %v, want %v", i, got, s.want)
		}
	}
	// A dif abandoned after 2 s of silence: its last piece is late.
	k2 := key(1, 2)
	a.Add(reassemble.Piece{Key: k2, Seq: 0, Count: 2, Start: 0, Data: []byte("ab"), TS: t0})
	a.Tick(t0.Add(3 * time.Second))
	if m := c.byKey(k2); m.Status != reassemble.Incomplete || m.Bytes != 2 {
		t.Errorf("quiet dif after Tick: %v, %d bytes", m.Status, m.Bytes)
	}
	if got := a.Add(reassemble.Piece{Key: k2, Seq: 1, Count: 2, Start: 2, Data: []byte("cd"), TS: t0.Add(3 * time.Second)}); got != reassemble.Late {
		t.Errorf("piece after its dif was abandoned: %v, want late", got)
	}
	if a.LatePieces != 2 {
		t.Errorf("LatePieces %d, want 2", a.LatePieces)
	}
}

// Two conversations of one client endpoint are apart: the same key in
// another conversation is another dif.
func TestLinesApart(t *testing.T) {
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	k1 := reassemble.Key{Client: client1, Conv: 1, Src: 0, Dst: 5}
	k2 := k1
	k2.Conv = 2
	a.Add(reassemble.Piece{Key: k1, Seq: 0, Count: 1, Data: []byte("x"), TS: t0})
	if got := a.Add(reassemble.Piece{Key: k2, Seq: 0, Count: 1, Data: []byte("y"), TS: t0}); got != reassemble.Accepted {
		t.Errorf("the same frames in another conversation: %v", got)
	}
	if string(c.byKey(k1).Compressed) != "x" || string(c.byKey(k2).Compressed) != "y" {
		t.Errorf("difs mixed: %s", c.keys())
	}
}

// Pieces cut by the snap length still count: a dif whose pieces all came,
// some cut, ends Truncated, not Incomplete with lost pieces.
func TestTruncatedPieces(t *testing.T) {
	c := newCollector(t)
	a := reassemble.New(reassemble.DefaultLimits, c.emit)
	k := key(0, 1)
	a.Add(reassemble.Piece{Key: k, Seq: 0, Count: 2, Start: 0, Data: []byte("ab"), Truncated: true, TS: t0})
	a.Add(reassemble.Piece{Key: k, Seq: 1, Count: 2, Start: 1000, Data: []byte("cd"), TS: t0})
	m := c.byKey(k)
	if m.Status != reassemble.Truncated || m.Truncated != 1 || len(m.Missing) != 0 {
		t.Errorf("%v, %d truncated, missing %v; want truncated, 1, none", m.Status, m.Truncated, m.Missing)
	}
}

// OldestPendingN bounds the capture numbers of the difs still to end.
func TestOldestPendingN(t *testing.T) {
	a := reassemble.New(reassemble.DefaultLimits, func(*reassemble.Message) {})
	if n := a.OldestPendingN(); n != -1 {
		t.Errorf("nothing pending: %d", n)
	}
	a.Add(reassemble.Piece{Key: key(0, 1), Seq: 0, Count: 2, Data: []byte("a"), N: 7, TS: t0})
	a.Add(reassemble.Piece{Key: key(0, 2), Seq: 0, Count: 2, Data: []byte("a"), N: 5, TS: t0})
	if n := a.OldestPendingN(); n != 5 {
		t.Errorf("OldestPendingN %d, want 5", n)
	}
}

// Without the bytes (figures from the headers), every outcome is the same
// and a complete dif carries no stream.
func TestHeadersOnly(t *testing.T) {
	for _, only := range []bool{false, true} {
		c := newCollector(t)
		lim := reassemble.DefaultLimits
		lim.HeadersOnly = only
		a := reassemble.New(lim, c.emit)
		k1, k2, k3 := key(0, 1), key(0, 2), key(0, 3)
		a.Add(reassemble.Piece{Key: k1, Seq: 0, Count: 2, Start: 0, Data: []byte("ab"), TS: t0})
		a.Add(reassemble.Piece{Key: k1, Seq: 1, Count: 2, Start: 2, Data: []byte("cd"), TS: t0})
		a.Add(reassemble.Piece{Key: k2, Seq: 0, Count: 2, Start: 0, Data: []byte("ab"), TS: t0})
		a.Add(reassemble.Piece{Key: k2, Seq: 1, Count: 2, Start: 3, Data: []byte("cd"), TS: t0}) // a hole
		a.Add(reassemble.Piece{Key: k3, Seq: 0, Count: 2, Start: 0, Data: []byte("ab"), TS: t0})
		a.Add(reassemble.Piece{Key: k3, Seq: 0, Count: 2, Start: 0, Data: []byte("abc"), TS: t0}) // contradicts
		m1, m2, m3 := c.byKey(k1), c.byKey(k2), c.byKey(k3)
		if m1.Status != reassemble.Complete || m1.Bytes != 4 || m2.Status != reassemble.Corrupt || m3.Status != reassemble.Corrupt {
			t.Errorf("headers only %v: %v %d, %v, %v", only, m1.Status, m1.Bytes, m2.Status, m3.Status)
		}
		if got := string(m1.Compressed); only && got != "" || !only && got != "abcd" {
			t.Errorf("headers only %v: stream %q", only, got)
		}
	}
}
