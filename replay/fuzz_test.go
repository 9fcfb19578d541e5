package replay_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"testing"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// The FuzzBuilder input is one options byte, then messages, each a 4-byte
// header and its data:
//
//	options: bits 0-2 History-1, bits 3-4 CheckpointEvery, bit 5 StateSize 16 (else unknown),
//	         bit 6 no SHA256
//	0: bits 0-1 client (mod 3), bits 2-3 status (0, 1 complete, 2 incomplete,
//	   3 corrupt), bits 4-5 slsn (0: -1, legacy; else 0..2)
//	1: src / 10
//	2: dst / 10
//	3: below 0x80: the data is a dif of 16 bytes (17 with bit 6), deflated by
//	   the harness; from 0x80: the data is a raw "compressed" stream of
//	   (byte & 0x7f) bytes
//
// States are 16 bytes, so the chains are short and every path is reached.
const fuzzState = 16

var fuzzBuilderClients = [3]netip.AddrPort{client1, client2, client3}

// fuzzZW compresses the fuzz inputs' difs: a zlib writer costs about a
// megabyte to make, far more than the rest of an input.
var fuzzZW, _ = zlib.NewWriterLevel(nil, 7)

// fuzzMsg is one message of a FuzzBuilder input.
type fuzzMsg struct {
	client, status, slsn int // header bits
	src, dst             int // frames, multiples of 10
	dif                  []byte
	raw                  []byte // used when dif is nil
}

// frameBuilder packs a FuzzBuilder input.
func frameBuilder(opts byte, ms ...fuzzMsg) []byte {
	b := []byte{opts}
	for _, m := range ms {
		h3 := byte(0)
		data := m.dif
		switch {
		case m.dif == nil:
			h3, data = 0x80|byte(len(m.raw)), m.raw
		case len(m.dif) == fuzzState+1:
			h3 = 0x40
		}
		b = append(b, byte(m.client&3|(m.status&3)<<2|(m.slsn&3)<<4), byte(m.src/10), byte(m.dst/10), h3)
		b = append(b, data...)
	}
	return b
}

func parseBuilder(t testing.TB, data []byte) (replay.Options, []*reassemble.Message) {
	if len(data) == 0 {
		return replay.Options{}, nil
	}
	opt := replay.Options{History: 1 + int(data[0]&7), CheckpointEvery: int(data[0] >> 3 & 3), Keep: true, SHA256: data[0]&0x40 == 0}
	if data[0]&0x20 != 0 {
		opt.StateSize = fuzzState
	}
	var msgs []*reassemble.Message
	for rest := data[1:]; len(rest) >= 4; {
		h := rest[:4]
		rest = rest[4:]
		n := fuzzState
		if h[3]&0x40 != 0 {
			n++
		}
		if h[3]&0x80 != 0 {
			n = int(h[3] & 0x7f)
		}
		n = min(n, len(rest))
		d := rest[:n]
		rest = rest[n:]
		z := d
		if h[3]&0x80 == 0 {
			dif := make([]byte, fuzzState+int(h[3]>>6&1))
			copy(dif, d)
			var buf bytes.Buffer
			fuzzZW.Reset(&buf)
			fuzzZW.Write(dif)
			fuzzZW.Close()
			z = buf.Bytes()
		}
		slsn := -1
		if s := int(h[0] >> 4 & 3); s > 0 {
			slsn = s - 1
		}
		m := &reassemble.Message{
			Key:   reassemble.Key{Client: fuzzBuilderClients[int(h[0]&3)%3], SLSN: slsn, Src: int32(h[1]) * 10, Dst: int32(h[2]) * 10},
			Count: 1, Pieces: 1, LastN: len(msgs) + 1,
		}
		switch h[0] >> 2 & 3 {
		case 0, 1:
			m.Status, m.Compressed = reassemble.Complete, z
		case 2:
			m.Status, m.Pieces, m.Missing, m.Err = reassemble.Incomplete, 0, []int{0}, errFailed
		case 3:
			m.Status, m.Err = reassemble.Corrupt, errFailed
		}
		msgs = append(msgs, m)
	}
	return opt, msgs
}

// checkBuilder rebuilds msgs and checks every state: its fields against
// its message, and an OK state's bytes against its dif and a state of its
// base frame (which, when the dif waited for its base, may be emitted after
// it). Then it rebuilds every OK state again from a Timeline.
func checkBuilder(t *testing.T, opt replay.Options, msgs []*reassemble.Message) {
	var out []*replay.State
	b := replay.New(opt, func(s *replay.State) { out = append(out, s) })
	for _, m := range msgs {
		b.Add(m)
	}
	b.Close()
	if len(out) != len(msgs) {
		t.Fatalf("%d states for %d messages", len(out), len(msgs))
	}
	type frame struct {
		client netip.AddrPort
		replay.Frame
	}
	byFrame := map[frame][]int{} // the OK states of each frame
	for i, s := range out {
		m := msgs[i]
		if s.Seq != i || s.Client != m.Client || s.Src != m.Src || s.Dst != m.Dst || m.SLSN >= 0 && s.SLSN != m.SLSN || s.SLSN < 0 {
			t.Fatalf("state %d: seq %d %s slsn %d %d→%d for message %v", i, s.Seq, s.Client, s.SLSN, s.Src, s.Dst, m.Key)
		}
		switch {
		case m.Status == reassemble.Incomplete && s.Status != replay.Incomplete,
			m.Status == reassemble.Corrupt && s.Status != replay.Corrupt,
			m.Status == reassemble.Complete && (s.Status == replay.Incomplete):
			t.Fatalf("state %d: %v for a %v message", i, s.Status, m.Status)
		}
		if s.Status != replay.OK && (s.Err == nil || s.Data != nil) {
			t.Fatalf("state %d: %v with error %v and %d bytes", i, s.Status, s.Err, len(s.Data))
		}
		if s.Status == replay.OK {
			f := frame{s.Client, replay.Frame{SLSN: s.SLSN, N: s.Dst}}
			byFrame[f] = append(byFrame[f], i)
		}
	}
	// Each OK state's base: an OK state of frame src that the state's
	// bytes are rebuilt from (the one closest to the keyframe or a
	// checkpoint if several fit).
	var inf reassemble.Inflater
	var buf []byte
	bases := map[int][]int{}
	for i, s := range out {
		if s.Status != replay.OK {
			continue
		}
		dif, err := inf.Inflate(buf, msgs[i].Compressed, 0)
		buf = dif[:0]
		if err != nil || len(s.Data) != len(dif) || s.Size != len(dif) || opt.StateSize > 0 && s.Size != opt.StateSize {
			t.Fatalf("state %d: ok with %d bytes (size %d) from a dif of %d (%v)", i, len(s.Data), s.Size, len(dif), err)
		}
		if opt.SHA256 && s.Sum != sha256.Sum256(s.Data) || !opt.SHA256 && s.Sum != [32]byte{} {
			t.Fatalf("state %d: sum %x is not the sha256 of its bytes (asked: %v)", i, s.Sum, opt.SHA256)
		}
		if s.Hash != statedif.HashOf(s.Data) {
			t.Fatalf("state %d: Hash is not its bytes'", i)
		}
		var candidates [][]byte
		var idx []int
		if s.Src == 0 {
			candidates, idx = [][]byte{make([]byte, len(dif))}, []int{-1}
		} else {
			for _, k := range byFrame[frame{s.Client, replay.Frame{SLSN: s.SLSN, N: s.Src}}] {
				if k != i && len(out[k].Data) == len(dif) {
					candidates, idx = append(candidates, out[k].Data), append(idx, k)
				}
			}
		}
		for c, base := range candidates {
			want := make([]byte, len(dif))
			for k := range want {
				want[k] = base[k] - dif[k]
			}
			if bytes.Equal(s.Data, want) {
				bases[i] = append(bases[i], idx[c])
			}
		}
		if len(bases[i]) == 0 {
			t.Fatalf("state %d (%d→%d, slsn %d): ok, but no state of its base frame (of %d) rebuilds it", i, s.Src, s.Dst, s.SLSN, len(candidates))
		}
	}
	// Difs from the nearest keyframe or checkpoint: a lower bound, so a
	// value at or above CheckpointEvery is a real miss.
	if opt.CheckpointEvery > 0 {
		depth := map[int]int{}
		const busy = -1
		var depthOf func(i int) int
		depthOf = func(i int) int {
			if d, ok := depth[i]; ok {
				return max(d, 0)
			}
			s := out[i]
			if s.Checkpoint != nil || s.Src == 0 {
				depth[i] = 0
				return 0
			}
			depth[i] = busy
			d := -1
			for _, k := range bases[i] {
				if bd := depthOf(k); depth[k] != busy && (d < 0 || bd+1 < d) {
					d = bd + 1
				}
			}
			d = max(d, 0)
			depth[i] = d
			return d
		}
		for i, s := range out {
			if s.Status == replay.OK {
				if d := depthOf(i); d >= opt.CheckpointEvery {
					t.Fatalf("state %d: %d difs from a keyframe or checkpoint, CheckpointEvery %d", i, d, opt.CheckpointEvery)
				}
			}
		}
	}
	tl := replay.NewTimeline(64, "") // spills to a file after 64 bytes
	defer tl.Close()
	for i, s := range out {
		if err := tl.Add(s); err != nil {
			t.Fatalf("state %d: timeline: %v", i, err)
		}
	}
	for _, c := range tl.Lines() {
		var dst []byte
		for i, e := range tl.Entries(c) {
			if e.Status != replay.OK {
				continue
			}
			var err error
			if dst, err = tl.State(dst, c, i); err != nil {
				t.Fatalf("%s entry %d: %v", c, i, err)
			}
		}
	}
}

// FuzzBuilder rebuilds hostile sequences of messages.
func FuzzBuilder(f *testing.F) {
	for _, s := range builderSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opt, msgs := parseBuilder(t, data)
		checkBuilder(t, opt, msgs)
	})
}

// builderSeeds are FuzzBuilder's seed inputs, by name.
func builderSeeds() map[string][]byte {
	d := func(b ...byte) []byte {
		dif := make([]byte, fuzzState)
		copy(dif, b)
		return dif
	}
	chain := []fuzzMsg{
		{src: 0, dst: 10, dif: d(1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{src: 10, dst: 20, dif: d(0, 1)},
		{src: 20, dst: 30, dif: d(0, 0, 1)},
		{src: 20, dst: 40, dif: d(0, 0, 0, 1)},
		{src: 40, dst: 50, dif: d(9)},
		{src: 30, dst: 60, dif: d(8)},
	}
	var modern []fuzzMsg
	for _, m := range chain {
		m.slsn = 1
		modern = append(modern, m)
	}
	legacy := []fuzzMsg{
		{src: 0, dst: 2500, dif: d(1)},
		{src: 2500, dst: 2510, dif: d(2)},
		{src: 0, dst: 10, status: 2},
		{src: 0, dst: 20, dif: d(3)},
		{src: 2510, dst: 2520, dif: d(4)},
		{src: 20, dst: 30, dif: d(5)},
	}
	mixed := []fuzzMsg{
		{client: 0, slsn: 1, src: 0, dst: 10, dif: d(1)},
		{client: 1, slsn: 1, src: 0, dst: 10, dif: d(2)},
		{client: 0, slsn: 1, src: 10, dst: 20, status: 3},
		{client: 2, slsn: 2, src: 0, dst: 10, raw: []byte{0x78, 0x9c, 1, 2, 3}},
		{client: 1, slsn: 1, src: 10, dst: 20, dif: append(d(1), 0)},
		{client: 0, slsn: 1, src: 20, dst: 30, dif: d(7)},
		{client: 1, slsn: 2, src: 10, dst: 20, dif: d(7)},
	}
	// A keyframe that inflates to nothing while the size is unknown, then
	// a dif against it (this crashed the Builder once).
	emptyState := []fuzzMsg{
		{slsn: 1, src: 0, dst: 10, raw: []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}},
		{slsn: 1, src: 10, dst: 20, dif: d(1)},
		{slsn: 1, src: 0, dst: 30, dif: d(2)},
		{slsn: 1, src: 30, dst: 40, dif: d(3)},
	}
	return map[string][]byte{
		"empty":           {},
		"empty-state":     frameBuilder(0x07, emptyState...),
		"chain":           frameBuilder(0x07, chain...),
		"chain-history-2": frameBuilder(0x09, modern...), // History 2, CheckpointEvery 1
		"legacy":          frameBuilder(0x17, legacy...), // CheckpointEvery 2
		"mixed-size-16":   frameBuilder(0x3b, mixed...),  // History 4, CheckpointEvery 3, StateSize 16
		"mixed":           frameBuilder(0x1b, mixed...),
	}
}

// TestBuilderSeeds runs FuzzBuilder's check on its seeds and checks a seed
// parses as framed.
func TestBuilderSeeds(t *testing.T) {
	for name, s := range builderSeeds() {
		t.Run(name, func(t *testing.T) {
			opt, msgs := parseBuilder(t, s)
			checkBuilder(t, opt, msgs)
		})
	}
	opt, msgs := parseBuilder(t, builderSeeds()["mixed-size-16"])
	if got := fmt.Sprintf("%d %d %d %d", opt.History, opt.CheckpointEvery, opt.StateSize, len(msgs)); got != "4 3 16 7" {
		t.Errorf("options and messages: %s", got)
	}
	if m := msgs[3]; m.Client != client3 || m.SLSN != 1 || len(m.Compressed) != 5 || m.Status != reassemble.Complete {
		t.Errorf("message 3: %v %v %d bytes", m.Key, m.Status, len(m.Compressed))
	}
	if m := msgs[2]; m.Status != reassemble.Corrupt || m.Dst != 20 {
		t.Errorf("message 2: %v %v", m.Key, m.Status)
	}
}
