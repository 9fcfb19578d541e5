package replay_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// chainOf returns n states, each a small mutation of the one before.
func chainOf(seed uint64, n, size int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 3))
	s := [][]byte{firstState(r, size)}
	for len(s) < n {
		s = append(s, mutate(r, s[len(s)-1]))
	}
	return s
}

// TestBuilder rebuilds one client's states from keyframes and chained difs
// and checks each state's outcome and bytes.
func TestBuilder(t *testing.T) {
	st := chainOf(1, 8, stateSize)
	m := func(src, dst int32) *reassemble.Message {
		var base []byte
		if src != 0 {
			base = st[src]
		}
		return msg(t, client1, 0, src, dst, base, st[dst])
	}
	type want struct {
		status replay.Status
		state  int // index in st (OK)
		err    string
	}
	tests := []struct {
		name string
		msgs []*reassemble.Message
		want []want
	}{
		{"keyframe", []*reassemble.Message{m(0, 1)}, []want{{replay.OK, 1, ""}}},
		{"chain", []*reassemble.Message{m(0, 1), m(1, 2), m(2, 3), m(3, 4)},
			[]want{{replay.OK, 1, ""}, {replay.OK, 2, ""}, {replay.OK, 3, ""}, {replay.OK, 4, ""}}},
		{"older base", []*reassemble.Message{m(0, 1), m(1, 2), m(1, 3), m(2, 4)},
			[]want{{replay.OK, 1, ""}, {replay.OK, 2, ""}, {replay.OK, 3, ""}, {replay.OK, 4, ""}}},
		{"base reset mid-chain", []*reassemble.Message{m(0, 1), m(1, 2), m(0, 5), m(5, 6)},
			[]want{{replay.OK, 1, ""}, {replay.OK, 2, ""}, {replay.OK, 5, ""}, {replay.OK, 6, ""}}},
		{"missing base", []*reassemble.Message{m(2, 3), m(3, 4), m(0, 5), m(5, 6)},
			[]want{{replay.MissingBase, 0, "base state 2"}, {replay.MissingBase, 0, "base state 3"}, {replay.OK, 5, ""}, {replay.OK, 6, ""}}},
		{"base ends later", []*reassemble.Message{m(0, 1), m(2, 3), m(3, 4), m(1, 2)},
			[]want{{replay.OK, 1, ""}, {replay.OK, 3, ""}, {replay.OK, 4, ""}, {replay.OK, 2, ""}}},
		{"lost base", []*reassemble.Message{m(0, 1), failed(client1, 0, 1, 2, reassemble.Incomplete), m(2, 3), m(1, 4)},
			[]want{{replay.OK, 1, ""}, {replay.Incomplete, 0, errFailed.Error()}, {replay.MissingBase, 0, "base state 2"}, {replay.OK, 4, ""}}},
		{"corrupt passes through", []*reassemble.Message{failed(client1, 0, 0, 1, reassemble.Corrupt), m(0, 2)},
			[]want{{replay.Corrupt, 0, errFailed.Error()}, {replay.OK, 2, ""}}},
		{"base from another level sequence", []*reassemble.Message{m(0, 1), msg(t, client1, 1, 1, 2, st[1], st[2])},
			[]want{{replay.OK, 1, ""}, {replay.MissingBase, 0, "base state 1 (slsn 1)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := rebuild(replay.Options{Keep: true}, tt.msgs...)
			if len(out) != len(tt.want) {
				t.Fatalf("%d states, want %d", len(out), len(tt.want))
			}
			for i, s := range out {
				w, m := tt.want[i], tt.msgs[i]
				if s.Seq != i || s.Client != m.Client || s.Src != m.Src || s.Dst != m.Dst || s.SLSN != m.SLSN || s.Player != -1 {
					t.Errorf("state %d: seq %d %s slsn %d %d→%d player %d, want the message's", i, s.Seq, s.Client, s.SLSN, s.Src, s.Dst, s.Player)
				}
				if s.TS != m.Last || s.N != m.LastN || s.Compressed != len(m.Compressed) || s.Pieces != m.Pieces || s.Count != m.Count {
					t.Errorf("state %d: capture details %v %d %d %d/%d, want the message's", i, s.TS, s.N, s.Compressed, s.Pieces, s.Count)
				}
				if s.Status != w.status {
					t.Errorf("state %d (%d→%d): %v (%v), want %v", i, s.Src, s.Dst, s.Status, s.Err, w.status)
					continue
				}
				if w.status != replay.OK {
					if s.Err == nil || !strings.Contains(s.Err.Error(), w.err) || s.Data != nil || s.Sum != [32]byte{} {
						t.Errorf("state %d: error %v, %d bytes, want %q and no state", i, s.Err, len(s.Data), w.err)
					}
					continue
				}
				if s.Err != nil || !bytes.Equal(s.Data, st[w.state]) || s.Sum != sha256.Sum256(st[w.state]) || s.Hash != statedif.HashOf(st[w.state]) || s.Size != stateSize {
					t.Errorf("state %d: error %v, size %d, bytes equal %v, sum equal %v, hash equal %v", i, s.Err, s.Size, bytes.Equal(s.Data, st[w.state]), s.Sum == sha256.Sum256(st[w.state]), s.Hash == statedif.HashOf(st[w.state]))
				}
				if !bytes.Equal(s.Dif, m.Compressed) || s.Keyframe() != (m.Src == 0) {
					t.Errorf("state %d: dif not the message's, or keyframe %v", i, s.Keyframe())
				}
			}
		})
	}
}

// TestBuilderInflateFailures checks that a whole dif that does not inflate
// to a state is Corrupt, and that the first dif's size becomes the state
// size unless Options.StateSize sets it.
func TestBuilderInflateFailures(t *testing.T) {
	st := chainOf(2, 3, stateSize)
	good := msg(t, client1, 0, 0, 1, nil, st[1])
	short := msg(t, client1, 0, 1, 2, st[1][:1000], st[2][:1000])
	cut := msg(t, client1, 0, 1, 2, st[1], st[2])
	cut.Compressed = cut.Compressed[:len(cut.Compressed)-5]
	tests := []struct {
		name string
		opt  replay.Options
		msgs []*reassemble.Message
		want []replay.Status
	}{
		{"size from the first dif", replay.Options{}, []*reassemble.Message{good, short}, []replay.Status{replay.OK, replay.Corrupt}},
		{"first dif short", replay.Options{}, []*reassemble.Message{short, good}, []replay.Status{replay.MissingBase, replay.Corrupt}},
		{"size given", replay.Options{StateSize: stateSize}, []*reassemble.Message{short, good}, []replay.Status{replay.Corrupt, replay.OK}},
		{"size given, wrong", replay.Options{StateSize: 1000}, []*reassemble.Message{good}, []replay.Status{replay.Corrupt}},
		{"cut stream", replay.Options{}, []*reassemble.Message{good, cut}, []replay.Status{replay.OK, replay.Corrupt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := rebuild(tt.opt, tt.msgs...)
			for i, s := range out {
				if s.Status != tt.want[i] {
					t.Errorf("state %d: %v (%v), want %v", i, s.Status, s.Err, tt.want[i])
				}
				if s.Status == replay.Corrupt && s.Err == nil {
					t.Errorf("state %d: corrupt without an error", i)
				}
			}
			if len(out) != len(tt.want) {
				t.Errorf("%d states, want %d", len(out), len(tt.want))
			}
		})
	}
	out := rebuild(replay.Options{StateSize: 1000}, good)
	if !errors.Is(out[0].Err, reassemble.ErrSize) {
		t.Errorf("wrong size: error %v, want ErrSize", out[0].Err)
	}
}

// TestBuilderOrder interleaves several clients' chains and checks that
// states come out in the order their messages went in, each correct.
func TestBuilderOrder(t *testing.T) {
	const n = 60
	clients := []netip.AddrPort{client1, client2, client3}
	chains := map[netip.AddrPort][][]byte{}
	for i, c := range clients {
		chains[c] = chainOf(uint64(10+i), n, 4096)
	}
	r := rand.New(rand.NewPCG(5, 5))
	next := map[netip.AddrPort]int{}
	var msgs []*reassemble.Message
	for len(msgs) < n*len(clients) {
		c := clients[r.IntN(len(clients))]
		i := next[c]
		if i == n {
			continue
		}
		next[c]++
		if i == 0 {
			msgs = append(msgs, msg(t, c, 0, 0, 1, nil, chains[c][0]))
		} else {
			msgs = append(msgs, msg(t, c, 0, int32(i), int32(i+1), chains[c][i-1], chains[c][i]))
		}
	}
	var out []*replay.State
	b := replay.New(replay.Options{Keep: true}, func(s *replay.State) { out = append(out, s) })
	b.SetPlayer(client2, 2)
	for _, m := range msgs {
		b.Add(m)
	}
	b.Close()
	if len(out) != len(msgs) {
		t.Fatalf("%d states for %d messages", len(out), len(msgs))
	}
	for i, s := range out {
		m := msgs[i]
		if s.Seq != i || s.Client != m.Client || s.Dst != m.Dst {
			t.Fatalf("state %d is seq %d of %s dst %d, want %s dst %d", i, s.Seq, s.Client, s.Dst, m.Client, m.Dst)
		}
		if s.Status != replay.OK || !bytes.Equal(s.Data, chains[s.Client][s.Dst-1]) {
			t.Errorf("state %d (%s dst %d): %v (%v), bytes right %v", i, s.Client, s.Dst, s.Status, s.Err, bytes.Equal(s.Data, chains[s.Client][s.Dst-1]))
		}
		wantPl := -1
		if s.Client == client2 {
			wantPl = 2
		}
		if s.Player != wantPl {
			t.Errorf("state %d of %s: player %d, want %d", i, s.Client, s.Player, wantPl)
		}
	}
}

// TestBuilderKeep checks that without Keep no state bytes are handed out,
// and that with Keep each state's bytes are its own copy.
func TestBuilderKeep(t *testing.T) {
	st := chainOf(3, 3, 2048)
	ms := []*reassemble.Message{msg(t, client1, 0, 0, 1, nil, st[1]), msg(t, client1, 0, 1, 2, st[1], st[2])}
	for _, s := range rebuild(replay.Options{}, ms...) {
		if s.Status != replay.OK || s.Data != nil {
			t.Errorf("dst %d: %v with %d bytes, want ok without bytes", s.Dst, s.Status, len(s.Data))
		}
	}
	out := rebuild(replay.Options{Keep: true}, ms...)
	if !bytes.Equal(out[0].Data, st[1]) || !bytes.Equal(out[1].Data, st[2]) {
		t.Errorf("kept states were overwritten by later ones")
	}
}

// TestBuilderLegacySLSN checks the level sequence the Builder infers for
// legacy messages (SLSN -1): it goes up when a whole keyframe restarts the
// frames far below the newest dst, and not for a keyframe that is merely
// late, nor for an abandoned or corrupt one.
func TestBuilderLegacySLSN(t *testing.T) {
	st := chainOf(4, 6, 1024)
	leg := func(src, dst int32, base, next []byte) *reassemble.Message {
		return msg(t, client1, -1, src, dst, base, next)
	}
	tests := []struct {
		name  string
		msgs  []*reassemble.Message
		slsns []int
		stats []replay.Status
	}{
		{"one level", []*reassemble.Message{leg(0, 500, nil, st[0]), leg(500, 505, st[0], st[1]), leg(505, 510, st[1], st[2])},
			[]int{0, 0, 0}, []replay.Status{replay.OK, replay.OK, replay.OK}},
		{"restart", []*reassemble.Message{leg(0, 500, nil, st[0]), leg(500, 800, st[0], st[1]), leg(0, 10, nil, st[2]), leg(10, 15, st[2], st[3])},
			[]int{0, 0, 1, 1}, []replay.Status{replay.OK, replay.OK, replay.OK, replay.OK}},
		{"old base after a restart", []*reassemble.Message{leg(0, 500, nil, st[0]), leg(0, 5, nil, st[1]), leg(500, 505, st[0], st[2])},
			[]int{0, 1, 1}, []replay.Status{replay.OK, replay.OK, replay.MissingBase}},
		{"late keyframe", []*reassemble.Message{leg(0, 500, nil, st[0]), leg(500, 600, st[0], st[1]), leg(0, 450, nil, st[2])},
			[]int{0, 0, 0}, []replay.Status{replay.OK, replay.OK, replay.OK}},
		{"abandoned old keyframe", []*reassemble.Message{leg(0, 500, nil, st[0]), failed(client1, -1, 0, 10, reassemble.Incomplete), leg(500, 505, st[0], st[1])},
			[]int{0, 0, 0}, []replay.Status{replay.OK, replay.Incomplete, replay.OK}},
		{"corrupt old keyframe", []*reassemble.Message{leg(0, 500, nil, st[0]), failed(client1, -1, 0, 10, reassemble.Corrupt), leg(500, 505, st[0], st[1])},
			[]int{0, 0, 0}, []replay.Status{replay.OK, replay.Corrupt, replay.OK}},
		{"two restarts", []*reassemble.Message{leg(0, 900, nil, st[0]), leg(0, 3, nil, st[1]), leg(3, 400, st[1], st[2]), leg(0, 8, nil, st[3]), failed(client1, -1, 8, 13, reassemble.Incomplete)},
			[]int{0, 1, 1, 2, 2}, []replay.Status{replay.OK, replay.OK, replay.OK, replay.OK, replay.Incomplete}},
		{"modern slsn kept", []*reassemble.Message{leg(0, 900, nil, st[0]), msg(t, client1, 7, 0, 3, nil, st[1]), leg(900, 905, st[0], st[2])},
			[]int{0, 7, 0}, []replay.Status{replay.OK, replay.OK, replay.OK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := rebuild(replay.Options{}, tt.msgs...)
			for i, s := range out {
				if s.SLSN != tt.slsns[i] || s.Status != tt.stats[i] {
					t.Errorf("state %d (%d→%d): slsn %d %v (%v), want %d %v", i, s.Src, s.Dst, s.SLSN, s.Status, s.Err, tt.slsns[i], tt.stats[i])
				}
			}
		})
	}
	// Chains are per client: one client's restart is not another's.
	out := rebuild(replay.Options{}, leg(0, 500, nil, st[0]), msg(t, client2, -1, 0, 5, nil, st[1]), leg(0, 5, nil, st[2]))
	if out[1].SLSN != 0 || out[2].SLSN != 1 {
		t.Errorf("slsns %d, %d; want 0 for the other client, 1 for the restart", out[1].SLSN, out[2].SLSN)
	}
}

// TestBuilderHistory checks that only the History most recent states serve
// as bases.
func TestBuilderHistory(t *testing.T) {
	st := chainOf(6, 8, 512)
	m := func(src, dst int32) *reassemble.Message {
		var base []byte
		if src != 0 {
			base = st[src]
		}
		return msg(t, client1, 0, src, dst, base, st[dst])
	}
	out := rebuild(replay.Options{History: 3, Keep: true},
		m(0, 1), m(1, 2), m(2, 3), // history: 1 2 3
		m(3, 4), // evicts 1
		m(1, 5), // gone: waits for its base, which m(5, 1) rebuilds
		m(2, 5), // evicts 2
		m(3, 6), // evicts 3, still read as the base
		m(4, 7), // evicts 4: 5 6 7 held
		m(5, 1), // 5 still held
		m(3, 2), // 3 gone
	)
	want := []replay.Status{replay.OK, replay.OK, replay.OK, replay.OK, replay.OK, replay.OK, replay.OK, replay.OK, replay.OK, replay.MissingBase}
	for i, s := range out {
		if s.Status != want[i] {
			t.Errorf("state %d (%d→%d): %v (%v), want %v", i, s.Src, s.Dst, s.Status, s.Err, want[i])
		}
		if s.Status == replay.OK && !bytes.Equal(s.Data, st[s.Dst]) {
			t.Errorf("state %d (%d→%d): wrong bytes", i, s.Src, s.Dst)
		}
	}
}

// TestBuilderCheckpoints checks that a state is checkpointed whenever it is
// CheckpointEvery difs from the nearest keyframe or checkpoint, and that a
// checkpoint inflates to the state.
func TestBuilderCheckpoints(t *testing.T) {
	st := chainOf(7, 12, 2048)
	m := func(src, dst int32) *reassemble.Message {
		var base []byte
		if src != 0 {
			base = st[src]
		}
		return msg(t, client1, 0, src, dst, base, st[dst])
	}
	tests := []struct {
		name  string
		opt   replay.Options
		msgs  []*reassemble.Message
		ckpts []int32 // dsts checkpointed
	}{
		{"none", replay.Options{}, []*reassemble.Message{m(0, 1), m(1, 2), m(2, 3), m(3, 4), m(4, 5)}, nil},
		{"every 2", replay.Options{CheckpointEvery: 2}, []*reassemble.Message{m(0, 1), m(1, 2), m(2, 3), m(3, 4), m(4, 5), m(5, 6)}, []int32{3, 5}},
		{"every 3, branching", replay.Options{CheckpointEvery: 3}, []*reassemble.Message{m(0, 1), m(1, 2), m(2, 3), m(2, 4), m(4, 5), m(3, 6), m(6, 7)}, []int32{5, 6}},
		{"keyframes restart the count", replay.Options{CheckpointEvery: 2}, []*reassemble.Message{m(0, 1), m(1, 2), m(0, 3), m(3, 4), m(4, 5)}, []int32{5}},
		// With a history of 2, the base of 2→4 is the slot 4 reuses: its
		// depth must be read before the slot is given to 4.
		{"base in the reused slot", replay.Options{CheckpointEvery: 2, History: 2}, []*reassemble.Message{m(0, 1), m(1, 2), m(2, 3), m(2, 4), m(4, 5)}, []int32{3, 4}},
		{"base in the reused slot, every 3", replay.Options{CheckpointEvery: 3, History: 2}, []*reassemble.Message{m(0, 1), m(1, 2), m(1, 3), m(3, 4), m(3, 5), m(5, 6)}, []int32{6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int32
			for _, s := range rebuild(tt.opt, tt.msgs...) {
				if s.Status != replay.OK {
					t.Fatalf("%d→%d: %v (%v)", s.Src, s.Dst, s.Status, s.Err)
				}
				if s.Checkpoint == nil {
					continue
				}
				got = append(got, s.Dst)
				if d, err := s2.Decode(nil, s.Checkpoint); err != nil || !bytes.Equal(d, st[s.Dst]) {
					t.Errorf("checkpoint of %d does not decode to the state (%v)", s.Dst, err)
				}
			}
			if len(got) != len(tt.ckpts) || len(got) > 0 && !equal32(got, tt.ckpts) {
				t.Errorf("checkpoints at %v, want %v", got, tt.ckpts)
			}
		})
	}
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStatus checks the status names: each parses back to its status.
func TestStatus(t *testing.T) {
	for st, name := range map[replay.Status]string{replay.OK: "ok", replay.MissingBase: "missing-base", replay.Incomplete: "incomplete", replay.Corrupt: "corrupt"} {
		if st.String() != name {
			t.Errorf("%d: %q, want %q", st, st.String(), name)
		}
		if got, err := parseStatus(name); err != nil || got != st {
			t.Errorf("parseStatus(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := parseStatus("fine"); err == nil {
		t.Error("parseStatus accepted \"fine\"")
	}
}

// TestBuilderEmptyDif checks a dif that inflates to nothing while the state
// size is not known yet: it must not set the size, and a later dif against
// the state it made must not be applied to a base of another size.
func TestBuilderEmptyDif(t *testing.T) {
	st := chainOf(8, 2, 128)
	empty := &reassemble.Message{Key: reassemble.Key{Client: client1, Src: 0, Dst: 10}, Status: reassemble.Complete, Compressed: deflate(t, nil)}
	out := rebuild(replay.Options{Keep: true}, empty, msg(t, client1, 0, 10, 20, make([]byte, 128), st[1]), msg(t, client1, 0, 0, 30, nil, st[0]), msg(t, client1, 0, 30, 40, st[0], st[1]))
	want := []replay.Status{replay.Corrupt, replay.MissingBase, replay.OK, replay.OK}
	for i, s := range out {
		if s.Status != want[i] {
			t.Errorf("state %d (%d→%d): %v (%v), want %v", i, s.Src, s.Dst, s.Status, s.Err, want[i])
		}
	}
	if !bytes.Equal(out[3].Data, st[1]) {
		t.Error("wrong state after the empty dif")
	}
}

// TestBuilderMaxClients checks that the clients rebuilt are bounded: the
// difs of a client beyond MaxClients end Corrupt and hold no states.
func TestBuilderMaxClients(t *testing.T) {
	st := chainOf(2, 3, 256)
	out := rebuild(replay.Options{MaxClients: 1},
		msg(t, client1, 0, 0, 1, nil, st[1]), msg(t, client2, 0, 0, 1, nil, st[1]), msg(t, client1, 0, 1, 2, st[1], st[2]))
	want := []replay.Status{replay.OK, replay.Corrupt, replay.OK}
	for i, s := range out {
		if s.Status != want[i] {
			t.Errorf("state %d of %s: %v (%v), want %v", i, s.Client, s.Status, s.Err, want[i])
		}
	}
}

// parseStatus parses a Status name as String gives it.
func parseStatus(s string) (replay.Status, error) {
	for st := replay.OK; st <= replay.Truncated; st++ {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, fmt.Errorf("unknown status %q", s)
}

// Any state can be rebuilt from at most CheckpointEvery difs, also one
// based on an old acknowledged state that has left the recent states: its
// base's depth is kept with it.
func TestCheckpointBoundOldAckedBase(t *testing.T) {
	const every = 8
	r := rngFor(9)
	st := map[int32][]byte{0: nil}
	cur := firstState(r, 4096)
	st[1] = cur
	var msgs []*reassemble.Message
	var acks []int32 // ack after the message of the same index, 0 for none
	add := func(src, dst int32, ack int32) {
		msgs = append(msgs, msg(t, client1, 0, src, dst, st[src], st[dst]))
		acks = append(acks, ack)
	}
	add(0, 1, 0)
	// A chain of every-1 difs: frame every is as deep as a state can be
	// without a checkpoint; the client acknowledges it.
	for f := int32(2); f <= every; f++ {
		st[f] = mutate(r, st[f-1])
		add(f-1, f, 0)
	}
	acks[len(acks)-1] = every
	// Keyframes push it out of the recent states; the client acknowledges
	// none of them.
	for f := int32(every + 1); f <= every+40; f++ {
		st[f] = mutate(r, st[every])
		add(0, f, 0)
	}
	// The server bases its next difs on the newest state acknowledged.
	prev := int32(every)
	for f := int32(every + 41); f <= every+60; f++ {
		st[f] = mutate(r, st[prev])
		add(prev, f, 0)
		prev = f
	}
	var out []*replay.State
	b := replay.New(replay.Options{CheckpointEvery: every, History: 16}, func(s *replay.State) { out = append(out, s) })
	for i, m := range msgs {
		b.Add(m)
		if acks[i] != 0 {
			b.Flush() // the state is rebuilt before its ack comes, as on the wire
			b.Ack(ln(client1), acks[i])
		}
	}
	b.Close()
	bySeq := map[int]*replay.State{}
	for _, s := range out {
		bySeq[s.Seq] = s
		if s.Status != replay.OK {
			t.Fatalf("state %d→%d: %v %v", s.Src, s.Dst, s.Status, s.Err)
		}
	}
	for _, s := range out {
		depth := 0
		for x := s; x.Checkpoint == nil && !x.Keyframe(); x = bySeq[x.BaseSeq] {
			depth++
		}
		if depth > every {
			t.Errorf("state of frame %d: %d difs from its checkpoint or keyframe, the bound is %d", s.Dst, depth, every)
		}
	}
}

// An acknowledged state keeps its bytes however the recent states turn
// over: while it is still in the ring, once the ring gives its slot to
// the state built on it (applied in place), and once keyframes have
// pushed it out; each state built on it has the true bytes. Two
// acknowledgements in a row both count.
func TestAckedBaseBytes(t *testing.T) {
	for _, keyframes := range []int{0, 1, 3, 10} {
		r := rngFor(11)
		st := map[int32][]byte{}
		st[1] = firstState(r, 4096)
		msgs := []*reassemble.Message{msg(t, client1, 0, 0, 1, nil, st[1])}
		for f := int32(2); f <= 3; f++ {
			st[f] = mutate(r, st[f-1])
			msgs = append(msgs, msg(t, client1, 0, f-1, f, st[f-1], st[f]))
		}
		ackAfter := len(msgs) - 1 // frame 3 is acknowledged
		f := int32(4)
		for range keyframes {
			st[f] = mutate(r, st[3])
			msgs = append(msgs, msg(t, client1, 0, 0, f, nil, st[f]))
			f++
		}
		for range 6 { // difs on the acknowledged state, then on each other
			base := int32(3)
			if f > 4+int32(keyframes) {
				base = f - 1
			}
			st[f] = mutate(r, st[base])
			msgs = append(msgs, msg(t, client1, 0, base, f, st[base], st[f]))
			f++
		}
		st[f] = mutate(r, st[2]) // and one on the first acknowledged
		msgs = append(msgs, msg(t, client1, 0, 2, f, st[2], st[f]))
		var out []*replay.State
		b := replay.New(replay.Options{Keep: true, History: 3}, func(s *replay.State) { out = append(out, s) })
		for i, m := range msgs {
			b.Add(m)
			if i == ackAfter {
				b.Flush()
				b.Ack(ln(client1), 2)
				b.Ack(ln(client1), 3)
			}
		}
		b.Close()
		if len(out) != len(msgs) {
			t.Fatalf("%d keyframes: %d states, want %d", keyframes, len(out), len(msgs))
		}
		for _, s := range out {
			if s.Status != replay.OK || !bytes.Equal(s.Data, st[s.Dst]) {
				t.Errorf("%d keyframes: state %d→%d: %v %v, bytes equal %v", keyframes, s.Src, s.Dst, s.Status, s.Err, bytes.Equal(s.Data, st[s.Dst]))
			}
		}
	}
}
