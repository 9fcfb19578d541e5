package replay_test

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// A Builder rebuilds each client's states from the reassembled difs, in
// the order the difs ended.
func ExampleBuilder() {
	client := netip.MustParseAddrPort("192.168.1.20:24785")
	compress := func(dif []byte) []byte {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(dif)
		w.Close()
		return z.Bytes()
	}
	s1 := []byte("level 1, frame 100: player at 40,80")
	s2 := []byte("level 1, frame 105: player at 41,80")
	dif12 := make([]byte, len(s1))
	for i := range dif12 {
		dif12[i] = s1[i] - s2[i]
	}
	keyframe := make([]byte, len(s1)) // against the all-zero base
	for i := range keyframe {
		keyframe[i] = -s1[i]
	}
	msgs := []*reassemble.Message{
		{Key: reassemble.Key{Client: client, SLSN: 0, Src: 0, Dst: 100}, Status: reassemble.Complete, Compressed: compress(keyframe)},
		{Key: reassemble.Key{Client: client, SLSN: 0, Src: 100, Dst: 105}, Status: reassemble.Complete, Compressed: compress(dif12)},
		{Key: reassemble.Key{Client: client, SLSN: 0, Src: 103, Dst: 110}, Status: reassemble.Complete, Compressed: compress(dif12)},
		{Key: reassemble.Key{Client: client, SLSN: 0, Src: 105, Dst: 115}, Status: reassemble.Incomplete},
	}
	b := replay.New(replay.Options{Keep: true}, func(s *replay.State) {
		fmt.Printf("%d→%d %v %q\n", s.Src, s.Dst, s.Status, s.Data)
	})
	for _, m := range msgs {
		b.Add(m)
	}
	b.Close()
	// Output:
	// 0→100 ok "level 1, frame 100: player at 40,80"
	// 100→105 ok "level 1, frame 105: player at 41,80"
	// 103→110 missing-base ""
	// 105→115 incomplete ""
}
