package replay_test

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// syntheticCapture returns messages for two clients, about 100 states for
// the first, with what every OK state must rebuild to (by message index).
// The first client's difs mostly use the state before as base, sometimes
// one a few states older (a client slow to ack), with a base reset
// (keyframe) midway, a lost dif, a dif whose base was lost, and a level
// change; the second client's chain is short and interleaved.
func syntheticCapture(t testing.TB) (msgs []*reassemble.Message, want map[int][]byte) {
	r := rand.New(rand.NewPCG(42, 42))
	want = map[int][]byte{}
	type held struct {
		frame int32
		state []byte
	}
	chains := map[netip.AddrPort][]held{}
	add := func(c netip.AddrPort, slsn int, src int32, base []byte, dst int32, next []byte) {
		msgs = append(msgs, msg(t, c, slsn, src, dst, base, next))
		want[len(msgs)-1] = next
		chains[c] = append(chains[c], held{dst, next})
	}
	slsn := 0
	frame := int32(1)
	add(client1, slsn, 0, nil, frame, firstState(r, stateSize))
	add(client2, 0, 0, nil, frame, firstState(r, stateSize))
	for i := range 100 {
		frame++
		h := chains[client1]
		switch {
		case i == 30: // lost: its state is never held
			msgs = append(msgs, failed(client1, slsn, h[len(h)-1].frame, frame, reassemble.Incomplete))
			lost := mutate(r, h[len(h)-1].state)
			frame++
			msgs = append(msgs, msg(t, client1, slsn, frame-1, frame, lost, mutate(r, lost))) // MissingBase
		case i == 50: // base reset
			add(client1, slsn, 0, nil, frame, mutate(r, h[len(h)-1].state))
		case i == 70: // level change: frames restart
			slsn, frame = 1, 1
			add(client1, slsn, 0, nil, frame, firstState(r, stateSize))
		case r.IntN(5) == 0 && len(h) > 3: // an older base
			b := h[len(h)-1-r.IntN(3)]
			add(client1, slsn, b.frame, b.state, frame, mutate(r, b.state))
		default:
			b := h[len(h)-1]
			add(client1, slsn, b.frame, b.state, frame, mutate(r, b.state))
		}
		if i%7 == 0 {
			h := chains[client2]
			b := h[len(h)-1]
			add(client2, 0, b.frame, b.state, b.frame+3, mutate(r, b.state))
		}
	}
	return msgs, want
}

// TestTimeline builds a timeline from a synthetic capture and rebuilds
// every state from it, with the store in memory and spilled to a file.
func TestTimeline(t *testing.T) {
	msgs, want := syntheticCapture(t)
	const every = 4
	// Each state's distance (in difs) from the nearest keyframe or
	// checkpoint, from what the Builder emits.
	states := rebuild(replay.Options{CheckpointEvery: every}, msgs...)
	depth := map[netip.AddrPort]map[replay.Frame]int{client1: {}, client2: {}}
	checkpoints := 0
	for _, s := range states {
		if s.Status != replay.OK {
			continue
		}
		d := 0
		if s.Checkpoint != nil {
			checkpoints++
		} else if !s.Keyframe() {
			d = depth[s.Client][replay.Frame{SLSN: s.SLSN, N: s.Src}] + 1
		}
		if d >= every {
			t.Errorf("%s %d→%d is %d difs from a keyframe or checkpoint (CheckpointEvery %d)", s.Client, s.Src, s.Dst, d, every)
		}
		depth[s.Client][replay.Frame{SLSN: s.SLSN, N: s.Dst}] = d
	}
	if checkpoints < 20 {
		t.Errorf("only %d checkpoints", checkpoints)
	}
	for _, budget := range []int{64 << 20, 0, 40000} {
		tl := replay.NewTimeline(budget, t.TempDir())
		index := map[netip.AddrPort][]int{} // message index of each entry
		for _, s := range states {
			if err := tl.Add(s); err != nil {
				t.Fatalf("budget %d: Add(%s %d→%d): %v", budget, s.Client, s.Src, s.Dst, err)
			}
			index[s.Client] = append(index[s.Client], s.Seq)
		}
		if got := tl.Lines(); !slices.Equal(got, []reassemble.Chain{ln(client1), ln(client2)}) {
			t.Errorf("clients %v", got)
		}
		var dst []byte
		ok := 0
		for _, c := range tl.Lines() {
			entries := tl.Entries(c)
			if len(entries) != len(index[c.Client]) {
				t.Fatalf("budget %d: %s has %d entries, %d states added", budget, c, len(entries), len(index[c.Client]))
			}
			for i, e := range entries {
				s := states[index[c.Client][i]]
				if e.Frame != (replay.Frame{SLSN: s.SLSN, N: s.Dst}) || e.Src != s.Src || e.Status != s.Status || !e.Time().Equal(s.TS) || int(e.Size) != s.Size || e.Acked() {
					t.Errorf("entry %d of %s: %+v does not match its state", i, c, e)
				}
				if h, err := tl.Hash(c, i); s.Status == replay.OK && (err != nil || h != s.Hash) {
					t.Errorf("entry %d of %s: hash %x, %v; its state's %x", i, c, h, err, s.Hash)
				}
				var err error
				dst, err = tl.State(dst, c, i)
				if e.Status != replay.OK {
					if err == nil {
						t.Errorf("budget %d: %s entry %d (%v) rebuilt", budget, c, i, e.Status)
					}
					continue
				}
				ok++
				if err != nil || !bytes.Equal(dst, want[index[c.Client][i]]) {
					t.Fatalf("budget %d: %s entry %d (%v %d→%d): %v, bytes equal %v", budget, c, i, e.SLSN, e.Src, e.N, err, bytes.Equal(dst, want[index[c.Client][i]]))
				}
			}
		}
		if ok != len(want) {
			t.Errorf("budget %d: %d states rebuilt, want %d", budget, ok, len(want))
		}
		if _, err := tl.State(nil, ln(client3), 0); err == nil {
			t.Error("a state of an unknown client")
		}
		if _, err := tl.State(nil, ln(client1), len(tl.Entries(ln(client1)))); err == nil {
			t.Error("a state past the last entry")
		}
		if _, err := tl.State(nil, ln(client1), -1); err == nil {
			t.Error("state -1")
		}
		if err := tl.Close(); err != nil {
			t.Errorf("budget %d: Close: %v", budget, err)
		}
	}
}

// TestTimelineForwardBase checks a state whose base comes later (its dif
// waited in the Builder for the base's dif, which ended after it): it cannot
// be rebuilt until its base is added, and then it can.
func TestTimelineForwardBase(t *testing.T) {
	st := chainOf(9, 3, 4096)
	out := rebuild(replay.Options{CheckpointEvery: 4},
		msg(t, client1, 0, 1, 2, st[1], st[2]), // needs 1, rebuilt next
		msg(t, client1, 0, 0, 1, nil, st[1]),
	)
	if out[0].Status != replay.OK || out[1].Status != replay.OK {
		t.Fatalf("statuses %v (%v), %v (%v); want ok, ok", out[0].Status, out[0].Err, out[1].Status, out[1].Err)
	}
	tl := replay.NewTimeline(1<<20, "")
	defer tl.Close()
	if err := tl.Add(out[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.State(nil, ln(client1), 0); err == nil {
		t.Error("a state was rebuilt before its base was added")
	}
	if err := tl.Add(out[1]); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]byte{st[2], st[1]} {
		if got, err := tl.State(nil, ln(client1), i); err != nil || !bytes.Equal(got, want) {
			t.Errorf("entry %d: %v, bytes equal %v", i, err, bytes.Equal(got, want))
		}
	}
	// Not OK states need no base.
	if err := tl.Add(&replay.State{Client: client1, Src: 7, Dst: 9, Status: replay.MissingBase}); err != nil {
		t.Error(err)
	}
}

// ackTimeline is a client1 timeline over two level sequences:
//
//	entry  slsn  src→dst  status        dif ended
//	0      0     0→10     ok            1 s
//	1      0     10→15    ok            2 s
//	2      0     15→20    incomplete    3 s
//	3      0     15→25    ok            4 s
//	4      1     0→5      ok            5 s
//	5      1     5→10     ok            6 s
//	6      1     10→15    missing-base  7 s
func ackTimeline(t *testing.T) *replay.Timeline {
	tl := replay.NewTimeline(1<<20, "")
	t.Cleanup(func() { tl.Close() })
	for i, e := range []struct {
		slsn     int
		src, dst int32
		st       replay.Status
	}{
		{0, 0, 10, replay.OK}, {0, 10, 15, replay.OK}, {0, 15, 20, replay.Incomplete}, {0, 15, 25, replay.OK},
		{1, 0, 5, replay.OK}, {1, 5, 10, replay.OK}, {1, 10, 15, replay.MissingBase},
	} {
		s := &replay.State{Client: client1, SLSN: e.slsn, Src: e.src, Dst: e.dst, Status: e.st, TS: t0.Add(time.Duration(i+1) * time.Second)}
		if e.st == replay.OK {
			s.Dif = []byte{byte(i)}
		}
		if err := tl.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return tl
}

// TestTimelineAck checks which entry an ack marks: the frame's newest OK
// state whose dif ended before the ack, in whichever level sequence.
func TestTimelineAck(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name  string
		frame int32
		ts    time.Time
		acked int // entry marked, -1 none
	}{
		{"plain", 15, at(2.5), 1},
		{"before the dif ended", 25, at(3.5), -1},
		{"at the dif's end", 25, at(4), 3},
		{"frame in two level sequences, the later", 10, at(6.5), 5},
		{"frame in two level sequences, the earlier", 10, at(5.5), 0},
		{"not ok", 20, at(9), -1},
		{"not ok in one sequence", 15, at(9), 1},
		{"no such frame", 99, at(9), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := ackTimeline(t)
			tl.Ack(ln(client1), tt.frame, tt.ts)
			tl.Ack(ln(client2), tt.frame, tt.ts) // unknown client: nothing
			for i, e := range tl.Entries(ln(client1)) {
				if e.Acked() != (i == tt.acked) {
					t.Errorf("entry %d acked %v", i, e.Acked())
				}
				if i == tt.acked && !e.AckTime().Equal(tt.ts) {
					t.Errorf("entry %d acked at %v, want %v", i, e.AckTime(), tt.ts)
				}
			}
		})
	}
	// The first ack counts.
	tl := ackTimeline(t)
	tl.Ack(ln(client1), 15, at(2.5))
	tl.Ack(ln(client1), 15, at(3))
	if e := tl.Entries(ln(client1))[1]; !e.AckTime().Equal(at(2.5)) {
		t.Errorf("acked at %v after two acks, want the first, %v", e.AckTime(), at(2.5))
	}
}

// TestTimelineFind checks Find with and without held.
func TestTimelineFind(t *testing.T) {
	tl := ackTimeline(t)
	tl.Ack(ln(client1), 15, t0.Add(3*time.Second)) // entry 1
	tl.Ack(ln(client1), 5, t0.Add(9*time.Second))  // entry 4
	tests := []struct {
		client netip.AddrPort
		slsn   int
		n      int32
		held   bool
		want   int
	}{
		{client1, 0, 25, false, 3},
		{client1, 0, 24, false, 1}, // 20 is incomplete
		{client1, 0, 15, false, 1},
		{client1, 0, 9, false, -1},
		{client1, 0, 1000, false, 3},
		{client1, 1, 1000, false, 5}, // 15 has no base
		{client1, 1, 7, false, 4},
		{client1, 2, 1000, false, -1},
		{client2, 0, 1000, false, -1},
		{client1, 0, 1000, true, 1},
		{client1, 0, 14, true, -1},
		{client1, 1, 1000, true, 4},
	}
	for _, tt := range tests {
		if got := tl.Find(ln(tt.client), tt.slsn, tt.n, tt.held); got != tt.want {
			t.Errorf("Find(%s, slsn %d, %d, held %v) = %d, want %d", tt.client, tt.slsn, tt.n, tt.held, got, tt.want)
		}
	}
}

// TestTimelineFindNewest checks that of two OK states of one frame, Find
// returns the later.
func TestTimelineFindNewest(t *testing.T) {
	tl := replay.NewTimeline(1<<20, "")
	defer tl.Close()
	for _, s := range []*replay.State{
		{Client: client1, Src: 0, Dst: 10, Status: replay.OK, Dif: []byte{1}},
		{Client: client1, Src: 0, Dst: 12, Status: replay.OK, Dif: []byte{2}},
		{Client: client1, Src: 10, Dst: 12, Status: replay.OK, Dif: []byte{3}},
		{Client: client1, Src: 0, Dst: 11, Status: replay.OK, Dif: []byte{4}},
	} {
		if err := tl.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := tl.Find(ln(client1), 0, 20, false); got != 2 {
		t.Errorf("Find = %d, want 2", got)
	}
}

// TestTimelineSLSNs checks which level sequences span a frame.
func TestTimelineSLSNs(t *testing.T) {
	tl := ackTimeline(t)
	for _, tt := range []struct {
		n    int32
		want []int
	}{
		{10, []int{0, 1}}, {5, []int{1}}, {12, []int{0}}, {25, []int{0}}, {15, []int{0}}, {4, nil}, {26, []int{0}}, // past the end: the sequence that ended last
	} {
		if got := tl.SLSNs(ln(client1), tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("SLSNs(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	if got := tl.SLSNs(ln(client2), 10); got != nil {
		t.Errorf("unknown client: %v", got)
	}
}

// TestEntrySize holds the timeline's entries to their size: a one-hour
// game has a million of them.
func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(replay.Entry{}); n > 72 {
		t.Errorf("an Entry takes %d bytes, more than 72", n)
	}
}

// Expect gives a line's entries room for the states to come, before its
// first state or after; the entries are the same.
func TestTimelineExpect(t *testing.T) {
	msgs, _ := syntheticCapture(t)
	states := rebuild(replay.Options{CheckpointEvery: 4}, msgs...)
	count := map[reassemble.Chain]int{}
	for _, s := range states {
		count[s.Line()]++
	}
	plain, tl := replay.NewTimeline(1<<20, ""), replay.NewTimeline(1<<20, "")
	defer plain.Close()
	defer tl.Close()
	expected := map[reassemble.Chain]bool{}
	for i, s := range states {
		k := s.Line()
		if i == 0 { // the first line: before its first state
			tl.Expect(k, count[k])
			expected[k] = true
		}
		if err := plain.Add(s); err != nil {
			t.Fatal(err)
		}
		if err := tl.Add(s); err != nil {
			t.Fatal(err)
		}
		if !expected[k] { // the other: after its first
			tl.Expect(k, count[k])
			expected[k] = true
		}
	}
	if len(count) != 2 {
		t.Fatalf("%d lines, want 2", len(count))
	}
	for k, n := range count {
		got := tl.Entries(k)
		if !slices.Equal(got, plain.Entries(k)) || cap(got) != n || !expected[k] {
			t.Errorf("%s: %d entries in room for %d (expected %v), want %d entries as without Expect in room for them", k, len(got), cap(got), expected[k], n)
		}
	}
}

// The entries take their share of the memory budget first (they never
// spill): the difs of a line whose entries take it all go to the file,
// and those of a line whose entries leave room stay in memory; either way
// every state is rebuilt the same.
func TestTimelineEntriesInBudget(t *testing.T) {
	msgs, want := syntheticCapture(t)
	states := rebuild(replay.Options{CheckpointEvery: 4}, msgs...)
	entryBytes := int(unsafe.Sizeof(replay.Entry{}))
	for _, c := range []struct {
		name     string
		expect   int // entries expected per line
		inMemory bool
	}{
		{"room left", 0, true},
		{"entries take it all", 1 << 20 / entryBytes, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := replay.NewTimeline(1<<20, "")
			defer tl.Close()
			for _, s := range states {
				if c.expect > 0 {
					tl.Expect(s.Line(), c.expect)
				}
				if err := tl.Add(s); err != nil {
					t.Fatal(err)
				}
			}
			mem, file := tl.StoreBytes()
			if (mem > 0) != c.inMemory || (file > 0) == c.inMemory {
				t.Errorf("%d bytes of difs in memory and %d in the file, want them all in memory: %v", mem, file, c.inMemory)
			}
			ok := 0
			var dst []byte
			for _, l := range tl.Lines() {
				for i, e := range tl.Entries(l) {
					if e.Status != replay.OK {
						continue
					}
					var err error
					if dst, err = tl.State(dst, l, i); err != nil || !bytes.Equal(dst, want[int(e.Seq)]) {
						t.Fatalf("%s entry %d: %v, bytes equal %v", l, i, err, bytes.Equal(dst, want[int(e.Seq)]))
					}
					ok++
				}
			}
			if ok == 0 {
				t.Error("no state rebuilt")
			}
		})
	}
}
