package statedif_test

import (
	"bytes"
	"fmt"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// Sub makes the dif a server sends (dif = base − new, bytewise with
// wrap-around) and applies it as a client does (new = base − dif).
func ExampleSub() {
	base := []byte{10, 20, 30, 0, 200, 7, 7, 7, 7, 1}
	next := []byte{11, 20, 25, 255, 100, 7, 7, 7, 8, 0}
	dif := make([]byte, len(base))
	statedif.Sub(dif, base, next)
	fmt.Println(dif)
	got := make([]byte, len(base))
	statedif.Sub(got, base, dif)
	fmt.Println(got, bytes.Equal(got, next))
	statedif.Sub(base, base, dif) // in place
	fmt.Println(base)
	statedif.Sub(dif, nil, next) // a keyframe: against zeros
	fmt.Println(dif)
	// Output:
	// [255 0 5 1 100 0 0 0 255 1]
	// [11 20 25 255 100 7 7 7 8 0] true
	// [11 20 25 255 100 7 7 7 8 0]
	// [245 236 231 1 156 249 249 249 248 0]
}

// A server sends a client each new state against the state the client
// acknowledged, kept among its bases.
func ExampleBases() {
	var bases statedif.Bases[[]byte]
	var comp statedif.Compressor
	p := decode.MustNew(decode.Modern, "stdf")
	send := func(frame int32, state []byte) {
		*bases.Add(frame) = bytes.Clone(state) // keep it first, as the game does
		src, base, _ := bases.Base()           // src 0 and nil base: zeros
		z, err := comp.Compress(base, state)
		if err != nil {
			panic(err)
		}
		statedif.EachPiece(p, statedif.Dif{Src: src, Dst: frame}, z, func(seq int, p *decode.Packet) error {
			fmt.Printf("stdf %d→%d piece %d of %d\n", p.Int("src"), p.Int("dst"), seq+1, p.Int("count"))
			return nil
		})
	}
	state := bytes.Repeat([]byte{1, 2, 3, 4}, 1000)
	send(100, state)
	bases.Ack(100) // stak 100
	state[7] = 9
	send(101, state)
	// Output:
	// stdf 0→100 piece 1 of 1
	// stdf 100→101 piece 1 of 1
}

// ApplySpans applies a dif that is zero outside its spans, touching only
// the words they cover, with the state's Hash following as with Apply.
func ExampleApplySpans() {
	base := bytes.Repeat([]byte{7}, 64)
	dif := make([]byte, 64)
	dif[3], dif[40] = 1, 0xff // new = base − dif: 6 at 3, 8 at 40
	spans := []statedif.Span{{Off: 3, End: 4}, {Off: 40, End: 41}}
	state := make([]byte, 64)
	h := statedif.ApplySpans(state, base, dif, spans, statedif.HashOf(base))
	fmt.Println(state[:5], state[40], h == statedif.HashOf(state))
	// Output:
	// [7 7 7 6 7] 8 true
}
