package decode_test

import (
	"errors"
	"fmt"

	"github.com/pmdump/pmdump/decode"
)

// Decode a legacy SJON join reply, the example of the legacy manifest.
func ExampleDecode() {
	payload := []byte{'S', 'J', 'O', 'N',
		0x00, 0x04, // level
		0x00, 0x00, 0x00, 0xc8, // server frame
		0x00, 0x00, 0x00, 0x02, // game-move entry pos
		0x28, 0x01, 0x0b, 0x00, // fps, player, color, dm bullets
		0x03, 0xed, // damage + 1000
		0x00, // suicide bullets
	}
	var p decode.Packet
	if err := decode.Decode(&p, payload, decode.Legacy); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.NameString(), p.Dir(), p.Version)
	fmt.Println("level", p.Int("level"), "frame", p.Int("frame"), "player", p.Int("player"))
	f := p.Layout.Fields[p.Layout.Field("dm_damage")]
	meant, _ := f.Meant(p.Int("dm_damage"))
	fmt.Println("damage raw", p.Int("dm_damage"), "meant", meant)

	// A piece whose size field promises more bytes than follow.
	err := decode.Decode(&p, []byte("stdf\x00\x00\x00\x00\x00\x00\x00\xc8\x00\x01\x00\x00\x00\x00\x00\x00\x00\x10"), decode.Legacy)
	fmt.Println(errors.Is(err, decode.ErrOverrun))
	// Output:
	// SJON s2c legacy
	// level 4 frame 200 player 1
	// damage raw 1005 meant 5
	// true
}

// Build a modern state-dif piece and encode it.
func ExampleNew() {
	p := decode.MustNew(decode.Modern, "stdf").
		Set("src", 0).Set("dst", 128).
		Set("seq", 3).Set("count", 4).Set("slsn", 0).
		Set("start", 3000).
		SetBytes("data", []byte{0xde, 0xad}) // also sets size
	b := decode.Encode(nil, p)
	fmt.Printf("% x\n", b)
	fmt.Println(len(b), p.Int("size"))
	// Output:
	// 73 74 64 66 00 00 00 00 80 00 00 00 03 04 00 b8 0b 00 00 02 00 00 00 de ad
	// 25 2
}

// The one-line summary shows the key fields, the meant value of a legacy
// negative number with its raw value, and control bits by name.
func ExamplePacket_AppendSummary() {
	serr := decode.MustNew(decode.Legacy, "serr").Set("err_type", 1).Set("frame", 4000).
		Set("c_sync", int64(decode.EncodeNegative(-3))).Set("late_total", 12)
	cdat := decode.MustNew(decode.Modern, "cdat").Set("player", 2).Set("frame", 1500).Set("move", 0x12)

	var p decode.Packet
	for _, q := range []struct {
		pk  *decode.Packet
		era decode.Version
	}{{serr, decode.Legacy}, {cdat, decode.Modern}} {
		decode.Decode(&p, decode.Encode(nil, q.pk), q.era)
		fmt.Printf("%s %s\n", p.NameString(), p.AppendSummary(nil))
	}
	// Output:
	// serr err_type=1 frame=4000 c_sync=-3(raw 253) late_total=12
	// cdat player=2 frame=1500 move=18[right|jump]
}

// A Ref resolves a field once by name; reading it is an index lookup.
func ExampleMustRef() {
	frame := decode.MustRef("frame", "cdat") // in both eras
	payload := decode.Encode(nil, decode.MustNew(decode.Legacy, "cdat").Set("player", 2).Set("frame", 1319))
	var p decode.Packet
	decode.Decode(&p, payload, decode.Legacy)
	n, ok := frame.Int(&p)
	fmt.Println(n, ok)
	// Straight from the payload, without decoding it:
	n, ok = frame.Peek(p.Layout, payload)
	fmt.Println(n, ok)
	// Output:
	// 1319 true
	// 1319 true
}
