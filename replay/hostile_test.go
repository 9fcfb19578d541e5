package replay_test

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// finishes runs f and fails the test if it has not returned within limit:
// the regressions below used to loop forever or exhaust memory.
func finishes(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("did not finish within %v", limit)
	}
}

// Many difs based on frame 100 arrive before the keyframe that makes frame
// 100: releasing them used to evict their base from the 16-state ring and
// park them again inside the release loop, forever.
func TestWaitersOutnumberTheRing(t *testing.T) {
	const n = 40
	st := chainOf(7, n+2, 4096)
	var msgs []*reassemble.Message
	for i := 1; i <= n; i++ {
		msgs = append(msgs, msg(t, client1, 0, 100, int32(100+i), st[0], st[i]))
	}
	msgs = append(msgs, msg(t, client1, 0, 0, 100, nil, st[0]))
	var out []*replay.State
	finishes(t, 10*time.Second, func() { out = rebuild(replay.Options{}, msgs...) })
	if len(out) != n+1 {
		t.Fatalf("%d states, want %d", len(out), n+1)
	}
	for i, s := range out[:n] {
		if s.Status != replay.OK || s.Sum != sha256.Sum256(st[i+1]) {
			t.Errorf("dif 100→%d: %v (%v)", s.Dst, s.Status, s.Err)
		}
	}
}

// Keyframe 0→100, then 50→100 (waits for its base), then 100→50: the
// timeline must link each state to the base its rebuild used, so every walk
// ends, and every state rebuilt from the index equals the first pass.
func TestBaseCycle(t *testing.T) {
	st := chainOf(9, 3, 4096)
	// st[0] is frame 100, st[1] frame 50 (from 100), st[2] frame 100 again
	// (from 50): a later dif to a frame already held.
	msgs := []*reassemble.Message{
		msg(t, client1, 0, 0, 100, nil, st[0]),
		msg(t, client1, 0, 50, 100, st[1], st[2]),
		msg(t, client1, 0, 100, 50, st[0], st[1]),
	}
	var out []*replay.State
	finishes(t, 10*time.Second, func() { out = rebuild(replay.Options{CheckpointEvery: 32}, msgs...) })
	want := [][]byte{st[0], st[2], st[1]}
	for i, s := range out {
		if s.Status != replay.OK || s.Sum != sha256.Sum256(want[i]) {
			t.Fatalf("state %d (%d→%d): %v %v", i, s.Src, s.Dst, s.Status, s.Err)
		}
	}
	if out[1].BaseSeq != 2 || out[2].BaseSeq != 0 {
		t.Errorf("bases used: %d and %d, want 2 and 0", out[1].BaseSeq, out[2].BaseSeq)
	}
	tl := replay.NewTimeline(1<<20, "")
	defer tl.Close()
	for _, s := range out {
		if err := tl.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	finishes(t, 10*time.Second, func() {
		for i := range out {
			got, err := tl.State(nil, ln(client1), i)
			if err != nil || !bytes.Equal(got, want[i]) {
				t.Errorf("entry %d from the index: %v", i, err)
			}
		}
	})
	// A later dif of frame 100 did not overwrite the keyframe's state: a dif
	// based on 100 still rebuilds on the first.
	st3 := mutate(rngFor(3), st[0])
	more := append(msgs, msg(t, client1, 0, 100, 110, st[0], st3))
	out = rebuild(replay.Options{}, more...)
	if s := out[3]; s.Status != replay.OK || s.Sum != sha256.Sum256(st3) {
		t.Errorf("dif 100→110 after a second state of 100: %v %v", s.Status, s.Err)
	}
}

// A dif from a frame to itself would be applied in place over its own
// base: it is corrupt, and the base stays as it was.
func TestDifToItself(t *testing.T) {
	st := chainOf(11, 3, 4096)
	out := rebuild(replay.Options{},
		msg(t, client1, 0, 0, 10, nil, st[0]),
		msg(t, client1, 0, 10, 10, st[0], st[1]),
		msg(t, client1, 0, 10, 11, st[0], st[2]),
	)
	if out[1].Status != replay.Corrupt {
		t.Errorf("dif 10→10: %v, want corrupt", out[1].Status)
	}
	if out[2].Status != replay.OK || out[2].Sum != sha256.Sum256(st[2]) {
		t.Errorf("dif 10→11 after it: %v %v, its base was overwritten", out[2].Status, out[2].Err)
	}
}

// A server bases each dif on the newest state the client acknowledged,
// however old: a client that stops acknowledging for a while gets difs on
// an old base, which must still be held.
func TestBaseOfAnyAge(t *testing.T) {
	const n = 60 // far more than the 16 recent states kept
	st := chainOf(13, n+2, 4096)
	for _, acked := range []bool{true, false} {
		var out []*replay.State
		b := replay.New(replay.Options{}, func(s *replay.State) { out = append(out, s) })
		b.Add(msg(t, client1, 0, 0, 1, nil, st[0]))
		if acked {
			b.Ack(ln(client1), 1)
		}
		for i := 1; i < n; i++ {
			b.Add(msg(t, client1, 0, int32(i), int32(i+1), st[i-1], st[i]))
		}
		b.Add(msg(t, client1, 0, 1, 500, st[0], st[n+1]))
		b.Close()
		last := out[len(out)-1]
		switch {
		case acked && (last.Status != replay.OK || last.Hash != statedif.HashOf(st[n+1])):
			t.Errorf("dif on the acknowledged frame 1 after %d others: %v %v", n, last.Status, last.Err)
		case !acked && last.Status != replay.MissingBase:
			t.Errorf("dif on a frame never acknowledged and long gone: %v, want missing-base", last.Status)
		}
	}
}

// A hostile capture of many clients whose difs inflate to large states
// must not cost each client megabytes: states are bounded in size, and the
// states kept as bases in total.
func TestStateMemoryBounded(t *testing.T) {
	big := make([]byte, replay.MaxStateSize+1)
	out := rebuild(replay.Options{}, msg(t, client1, 0, 0, 1, nil, big))
	if out[0].Status != replay.Corrupt {
		t.Errorf("a %d-byte state: %v, want corrupt", len(big), out[0].Status)
	}
	zero := make([]byte, replay.MaxStateSize)
	z := msg(t, client1, 0, 0, 1, nil, zero).Compressed
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b := replay.New(replay.Options{MaxMemory: 16 << 20}, func(*replay.State) {})
	for c := range 64 {
		for f := range 20 {
			m := &reassemble.Message{Key: reassemble.Key{Conv: c + 1, Client: client1, Src: 0, Dst: int32(f + 1)},
				Status: reassemble.Complete, Count: 1, Pieces: 1, Compressed: z}
			b.Add(m)
		}
	}
	// Every build is over (Flush waits for them): what is left is what
	// the chains keep, and the scratch buffers of the builds the gate let
	// run at once; both count in the budget.
	b.Flush()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Close()
	// The budget, and a megabyte and a half for what 64 chains need
	// besides states (queues of 64 jobs, indexes of frames: about 8 KB
	// each) and the scratch's inflaters and compressor.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20+3<<19 {
		t.Errorf("64 clients of %d-byte states hold %.1f MB, the budget is 16 MB", len(zero), float64(grew)/(1<<20))
	}
	runtime.KeepAlive(zero)
}

func rngFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 5)) }

// 20,000 inferred level sequences and 40,000 acks: each ack looks at the
// newest level sequences only (every ack scanned all of them before, which
// took minutes at this size).
func TestManyLevelsManyAcks(t *testing.T) {
	tl := replay.NewTimeline(1<<20, "")
	defer tl.Close()
	const levels = 20000
	finishes(t, 20*time.Second, func() {
		for k := range levels {
			s := &replay.State{Seq: k, Client: client1, SLSN: k, Src: 0, Dst: 10, Status: replay.OK, TS: t0.Add(time.Duration(k) * time.Millisecond), Dif: []byte{1}}
			if err := tl.Add(s); err != nil {
				t.Fatal(err)
			}
			tl.Ack(ln(client1), 10, s.TS)
			tl.Ack(ln(client1), 11, s.TS)
		}
	})
	es := tl.Entries(ln(client1))
	for i := range es {
		if !es[i].Acked() {
			t.Fatalf("entry %d not acknowledged", i)
		}
	}
}
