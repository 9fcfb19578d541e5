package reassemble_test

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
)

// The FuzzAssembler input is one limits byte, then pieces, each a 7-byte
// header and its data:
//
//	limits: bits 0-2 PendingPerClient-1, bits 3-6 PendingTotal-1
//	0: key bits: 0-1 client, 2 slsn, 3-4 src, 5-7 dst
//	1: seq (0..255, as on the wire)
//	2: count (0..255)
//	3-4: start, big-endian int16 (so negative starts happen)
//	5: data size; the data follows, cut short by the end of the input
//	6: capture time advance, in 100 ms steps
//
// MaxCompressed is 4000 and AbandonAfter 1 s, so both come into play.
var fuzzClients = [4]netip.AddrPort{
	netip.MustParseAddrPort("10.0.0.2:24785"),
	netip.MustParseAddrPort("10.0.0.3:24785"),
	netip.MustParseAddrPort("10.0.0.4:24786"),
	netip.MustParseAddrPort("[fe80::1]:24785"),
}

const fuzzMaxCompressed = 4000

func fuzzLimits(b byte) reassemble.Limits {
	return reassemble.Limits{
		MaxCompressed:    fuzzMaxCompressed,
		PendingPerClient: 1 + int(b&7),
		PendingTotal:     1 + int(b>>3&15),
		AbandonAfter:     time.Second,
	}
}

// fuzzPiece is one piece of a FuzzAssembler input.
type fuzzPiece struct {
	client, slsn, src, dst int // key bits
	seq, count, start      int
	data                   []byte
	advance                int // 100 ms steps
}

// frameAssembler packs a FuzzAssembler input (the inverse of
// parseAssembler, for pieces within the fields' ranges).
func frameAssembler(limits byte, ps ...fuzzPiece) []byte {
	b := []byte{limits}
	for _, p := range ps {
		kb := byte(p.client&3 | (p.slsn&1)<<2 | (p.src&3)<<3 | (p.dst&7)<<5)
		b = append(b, kb, byte(p.seq), byte(p.count), byte(uint16(p.start)>>8), byte(p.start), byte(len(p.data)), byte(p.advance))
		b = append(b, p.data...)
	}
	return b
}

func parseAssembler(data []byte) (reassemble.Limits, []reassemble.Piece) {
	if len(data) == 0 {
		return fuzzLimits(0), nil
	}
	lim := fuzzLimits(data[0])
	ts := t0
	var ps []reassemble.Piece
	for rest := data[1:]; len(rest) >= 7; {
		h := rest[:7]
		rest = rest[7:]
		n := min(int(h[5]), len(rest))
		d := rest[:n]
		rest = rest[n:]
		ts = ts.Add(time.Duration(h[6]) * 100 * time.Millisecond)
		ps = append(ps, reassemble.Piece{
			Key: reassemble.Key{
				Client: fuzzClients[h[0]&3], SLSN: int(h[0] >> 2 & 1),
				Src: int32(h[0] >> 3 & 3), Dst: int32(h[0] >> 5),
			},
			Seq: int(h[1]), Count: int(h[2]), Start: int(int16(uint16(h[3])<<8 | uint16(h[4]))),
			Data: d, N: len(ps) + 1, TS: ts,
		})
	}
	return lim, ps
}

// checkAssembler runs pieces through an Assembler against a model of which
// messages are open, and checks that every message started ends exactly
// once, with its outcome consistent, and that the limits hold throughout.
func checkAssembler(t *testing.T, lim reassemble.Limits, ps []reassemble.Piece) {
	open := map[reassemble.Key]map[int][]byte{} // open messages: the first bytes of each piece
	starts, emitted := 0, 0
	var cur *reassemble.Piece // the piece being added
	a := reassemble.New(lim, func(m *reassemble.Message) {
		pieces, ok := open[m.Key]
		if !ok {
			t.Fatalf("%v emitted but not open", m.Key)
		}
		delete(open, m.Key)
		emitted++
		switch m.Status {
		case reassemble.Complete:
			// The piece being added is the one that completes it.
			if _, ok := pieces[cur.Seq]; cur.Key != m.Key || ok {
				t.Fatalf("%v completed by a piece of %v (seq %d, seen before: %v)", m.Key, cur.Key, cur.Seq, ok)
			}
			var want []byte
			for i := range m.Count {
				if i == cur.Seq {
					want = append(want, cur.Data...)
				} else {
					want = append(want, pieces[i]...)
				}
			}
			if m.Err != nil || m.Pieces != m.Count || len(m.Missing) != 0 || !bytes.Equal(m.Compressed, want) || len(m.Compressed) > lim.MaxCompressed {
				t.Fatalf("%v complete with error %v, %d of %d pieces, missing %v, %d bytes (model %d)",
					m.Key, m.Err, m.Pieces, m.Count, m.Missing, len(m.Compressed), len(want))
			}
		case reassemble.Incomplete:
			if m.Err == nil || m.Compressed != nil || len(m.Missing) == 0 || len(m.Missing)+m.Pieces != m.Count || m.Pieces != len(pieces) {
				t.Fatalf("%v incomplete with error %v, %d bytes, missing %v, %d of %d pieces (model %d)",
					m.Key, m.Err, len(m.Compressed), m.Missing, m.Pieces, m.Count, len(pieces))
			}
			for i, s := range m.Missing {
				if s < 0 || s >= m.Count || i > 0 && s <= m.Missing[i-1] {
					t.Fatalf("%v: missing %v", m.Key, m.Missing)
				}
				if _, ok := pieces[s]; ok {
					t.Fatalf("%v: piece %d received but listed missing", m.Key, s)
				}
			}
		case reassemble.Corrupt:
			if m.Err == nil || m.Compressed != nil {
				t.Fatalf("%v corrupt with error %v, %d bytes", m.Key, m.Err, len(m.Compressed))
			}
		default:
			t.Fatalf("%v: status %d", m.Key, m.Status)
		}
		if m.FirstN > m.LastN || m.Last.Before(m.First) {
			t.Fatalf("%v: frames %d..%d, times %v..%v", m.Key, m.FirstN, m.LastN, m.First, m.Last)
		}
	})
	for _, p := range ps {
		_, wasOpen := open[p.Key]
		if !wasOpen {
			open[p.Key] = map[int][]byte{} // provisionally: the piece may start a message
		}
		late := a.LatePieces
		cur = &p
		a.Add(p)
		switch {
		case a.LatePieces == late+1:
			if !wasOpen {
				if _, still := open[p.Key]; !still {
					t.Fatalf("%v: a late piece emitted a message", p.Key)
				}
				delete(open, p.Key)
			}
		case a.LatePieces != late:
			t.Fatalf("one piece made %d late pieces", a.LatePieces-late)
		default:
			if !wasOpen {
				starts++
			}
			if pieces, ok := open[p.Key]; ok {
				if _, dup := pieces[p.Seq]; !dup {
					pieces[p.Seq] = bytes.Clone(p.Data)
				}
			}
		}
		if a.Pending() != len(open) || a.Pending() > lim.PendingTotal {
			t.Fatalf("after %v: %d pending, %d open in the model, limit %d", p.Key, a.Pending(), len(open), lim.PendingTotal)
		}
		perClient := map[netip.AddrPort]int{}
		for k := range open {
			if perClient[k.Client]++; perClient[k.Client] > lim.PendingPerClient {
				t.Fatalf("%s has more than %d messages pending", k.Client, lim.PendingPerClient)
			}
		}
	}
	a.Flush()
	if a.Pending() != 0 || len(open) != 0 || emitted != starts {
		t.Fatalf("after Flush: %d pending, %d open, %d messages started, %d emitted", a.Pending(), len(open), starts, emitted)
	}
}

// FuzzAssembler feeds hostile piece headers to an Assembler.
func FuzzAssembler(f *testing.F) {
	for _, s := range assemblerSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim, ps := parseAssembler(data)
		checkAssembler(t, lim, ps)
		checkLentReread(t, lim, ps)
	})
}

// checkLentReread feeds the pieces to an Assembler as they are and to one
// that lends its messages and keeps no copy of the pieces it can reread
// (every piece but each third has a Ref; the caller's buffer is cleared
// after each piece): every outcome and every message must be the same,
// the bytes of a message given by its Refs those of the other's.
func checkLentReread(t *testing.T, lim reassemble.Limits, ps []reassemble.Piece) {
	type result struct {
		outcomes []reassemble.Outcome
		msgs     []reassemble.Message
	}
	run := func(lend bool) result {
		var r result
		a := reassemble.New(lim, func(m *reassemble.Message) {
			c := *m
			c.Compressed, c.Missing, c.Refs = bytes.Clone(m.Compressed), slices.Clone(m.Missing), slices.Clone(m.Refs)
			r.msgs = append(r.msgs, c)
		})
		if lend {
			a.LendMessages()
			a.RereadRefs(func(ref int64) ([]byte, error) { return bytes.Clone(ps[ref-1].Data), nil })
		}
		buf := make([]byte, 0, 256)
		for i, p := range ps {
			if lend {
				if i%3 != 2 {
					p.Ref = int64(i + 1)
				}
				buf = append(buf[:0], p.Data...)
				p.Data = buf
			}
			r.outcomes = append(r.outcomes, a.Add(p))
			clear(buf)
		}
		a.Flush()
		return r
	}
	given, lent := run(false), run(true)
	if !slices.Equal(given.outcomes, lent.outcomes) {
		t.Fatalf("outcomes %v, lent and reread %v", given.outcomes, lent.outcomes)
	}
	if len(given.msgs) != len(lent.msgs) {
		t.Fatalf("%d messages, lent and reread %d", len(given.msgs), len(lent.msgs))
	}
	for i, g := range given.msgs {
		l := lent.msgs[i]
		if l.Refs != nil {
			var b []byte
			for _, ref := range l.Refs {
				b = append(b, ps[ref-1].Data...)
			}
			l.Compressed, l.Refs = b, nil
		}
		if fmt.Sprint(g.Err) != fmt.Sprint(l.Err) {
			t.Fatalf("message %d: error %v, lent and reread %v", i, g.Err, l.Err)
		}
		g.Err, l.Err = nil, nil
		if g.Compressed == nil {
			g.Compressed = []byte{}
		}
		if l.Compressed == nil {
			l.Compressed = []byte{}
		}
		if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", l) {
			t.Fatalf("message %d:\n%+v\nlent and reread:\n%+v", i, g, l)
		}
	}
}

// FuzzInflate inflates any bytes with the modern state size and with the
// size unknown, and checks the outcome against reading the stream whole.
func FuzzInflate(f *testing.F) {
	for _, s := range inflateSeeds(f) {
		f.Add(s)
	}
	// The Inflater and buffers are reused, as a Builder's chain does.
	var (
		inf reassemble.Inflater
		dst []byte
		ref bytes.Buffer
	)
	f.Fuzz(func(t *testing.T, z []byte) {
		for _, size := range []int{stateSize, 0} {
			bound := size
			if size == 0 {
				bound = reassemble.MaxState
			}
			got, err := inf.Inflate(dst, z, size)
			dst = got[:0]
			if len(got) > bound || size > 0 && err == nil && len(got) != size || err != nil && len(got) != 0 {
				t.Fatalf("size %d: %d bytes, error %v", size, len(got), err)
			}
			// The reference: the whole stream, up to one byte past the bound.
			ref.Reset()
			zr, rerr := zlib.NewReader(bytes.NewReader(z))
			if rerr == nil {
				_, rerr = ref.ReadFrom(io.LimitReader(zr, int64(bound)+1))
			}
			want := ref.Bytes()
			ok := rerr == nil && len(want) <= bound && (size == 0 || len(want) == size)
			if ok != (err == nil) || ok && !bytes.Equal(got, want) {
				t.Fatalf("size %d: Inflate gave %d bytes, %v; reading it whole gave %d bytes, %v", size, len(got), err, len(want), rerr)
			}
		}
	})
}

// assemblerSeeds are FuzzAssembler's seed inputs, by name.
func assemblerSeeds() map[string][]byte {
	data := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	// A 3-piece dif of 450 bytes in 200-byte pieces (MaxCompressed is
	// small in the fuzz harness, so pieces are too).
	whole := []fuzzPiece{
		{client: 0, src: 1, dst: 2, seq: 0, count: 3, start: 0, data: data(200, 1)},
		{client: 0, src: 1, dst: 2, seq: 1, count: 3, start: 200, data: data(200, 2)},
		{client: 0, src: 1, dst: 2, seq: 2, count: 3, start: 400, data: data(50, 3), advance: 1},
	}
	shuffled := []fuzzPiece{whole[2], whole[0], whole[0], whole[1], whole[1]}
	emptyLast := []fuzzPiece{
		{client: 1, dst: 3, seq: 1, count: 2, start: 200, advance: 1},
		{client: 1, dst: 3, seq: 0, count: 2, start: 0, data: data(200, 9)},
	}
	var hostile []fuzzPiece
	for i := range 64 {
		hostile = append(hostile, fuzzPiece{client: i & 3, slsn: i >> 2 & 1, src: i >> 3 & 3, dst: i >> 5, seq: i & 1, count: 2, start: (i & 1) * 10, data: data(10, byte(i))})
	}
	corrupt := []fuzzPiece{
		{dst: 1, seq: 0, count: 2, start: 0, data: data(10, 1)},
		{dst: 1, seq: 0, count: 2, start: 0, data: data(10, 2)}, // conflicting duplicate
		{dst: 2, seq: 0, count: 0},                              // count 0
		{dst: 3, seq: 0, count: 3, data: data(10, 1)},
		{dst: 3, seq: 1, count: 4, start: 10, data: data(10, 1)}, // count mismatch
		{dst: 4, seq: 5, count: 3},                               // seq >= count
		{dst: 5, seq: 1, count: 2, start: 3995, data: data(10, 1)},
		{dst: 6, seq: 1, count: 2, start: -100, data: data(10, 1)},
		{dst: 7, seq: 0, count: 2, data: data(10, 1)},
		{dst: 7, seq: 1, count: 2, start: 20, data: data(10, 1)}, // hole
		{src: 1, dst: 7, seq: 0, count: 2, data: data(10, 1)},
		{src: 1, dst: 7, seq: 1, count: 2, start: 5, data: data(10, 1)}, // overlap
		{dst: 1, seq: 1, count: 2, start: 10, data: data(10, 1)},        // late
	}
	stale := []fuzzPiece{
		{client: 2, dst: 1, seq: 0, count: 2, data: data(10, 1)},
		{client: 2, dst: 2, seq: 0, count: 2, data: data(10, 1), advance: 5},
		{client: 2, dst: 1, seq: 1, count: 2, start: 10, data: data(10, 1), advance: 9},
		{client: 2, dst: 3, seq: 0, count: 255, data: data(10, 1), advance: 2},
		{client: 2, dst: 2, seq: 1, count: 2, start: 10, data: data(10, 1), advance: 20}, // late
	}
	return map[string][]byte{
		"empty":      {},
		"whole":      frameAssembler(0x7f, whole...),
		"shuffled":   frameAssembler(0x7f, shuffled...),
		"empty-last": frameAssembler(0x7f, emptyLast...),
		"hostile":    frameAssembler(0x1a, hostile...), // 3 per client, 4 in all
		"corrupt":    frameAssembler(0x7f, corrupt...),
		"stale":      frameAssembler(0x7f, stale...),
	}
}

// inflateSeeds are FuzzInflate's seed inputs, by name.
func inflateSeeds(t testing.TB) map[string][]byte {
	_, z := realisticDif(t, 1)
	badSum := bytes.Clone(z)
	badSum[len(badSum)-1] ^= 1
	small := deflate(t, []byte("a short dif"), 6)
	return map[string][]byte{
		"dif":          z,
		"stored":       deflate(t, make([]byte, 5000), zlib.NoCompression),
		"short":        small,
		"empty":        deflate(t, nil, 6),
		"truncated":    z[:len(z)/2],
		"no-checksum":  z[:len(z)-4],
		"bad-checksum": badSum,
		"bomb":         bomb(t, 1<<20),
		"dictionary":   {0x78, 0xbb, 0, 0, 0, 1, 3, 0},
		"garbage":      []byte("stdf\x00\x00\x00\x00"),
	}
}

// TestFuzzSeeds runs the fuzz targets' checks on their seeds (so a plain
// go test covers them even without the corpus files) and checks the seeds
// do what their names say.
func TestFuzzSeeds(t *testing.T) {
	for name, s := range assemblerSeeds() {
		t.Run(name, func(t *testing.T) {
			lim, ps := parseAssembler(s)
			checkAssembler(t, lim, ps)
		})
	}
	// The whole message of the "whole" seed parses back to itself.
	_, ps := parseAssembler(assemblerSeeds()["whole"])
	if len(ps) != 3 || ps[2].Seq != 2 || ps[2].Start != 400 || len(ps[2].Data) != 50 || ps[2].Key.Dst != 2 || ps[2].Key.Src != 1 {
		t.Errorf("whole seed parses to %+v", ps)
	}
	var got []reassemble.Status
	a := reassemble.New(fuzzLimits(0x7f), func(m *reassemble.Message) { got = append(got, m.Status) })
	for _, p := range ps {
		a.Add(p)
	}
	if !slices.Equal(got, []reassemble.Status{reassemble.Complete}) {
		t.Errorf("whole seed: %v", got)
	}
	if s := fmt.Sprint(fuzzLimits(0x1a)); s != "{4000 3 4 1s 0 false}" {
		t.Errorf("hostile seed limits %s", s)
	}
}
