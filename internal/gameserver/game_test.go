package gameserver

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"io"
	"net/netip"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

var player1 = netip.MustParseAddrPort("10.0.0.2:24785")

func cdat(frame int32, move byte) []byte {
	return decode.Encode(nil, decode.MustNew(decode.Modern, "cdat").Set("player", 1).Set("frame", int64(frame)).Set("move", int64(move)))
}

// run plays a game of one player who joins in frame 2 and whose input
// (for frame `frame`, move 0x02) the server reads in frame read; it
// returns the sha256 of the state after each frame, by frame.
func run(t *testing.T, frame, read int32) map[int32][32]byte {
	t.Helper()
	g := NewGame(decode.Modern, 5, AtFrame, func(netip.AddrPort, []byte) {})
	sums := map[int32][32]byte{}
	for n := int32(0); n < 30; n++ {
		switch n {
		case 2:
			g.Hello(player1)
			g.Receive(player1, append([]byte("cjon\x03"), make([]byte, 16)...))
		case read:
			g.Receive(player1, cdat(frame, 0x02))
		}
		if err := g.Step(); err != nil {
			t.Fatal(err)
		}
		sums[g.Frame()] = sha256.Sum256(g.State())
	}
	return sums
}

func TestRewind(t *testing.T) {
	onTime := run(t, 10, 10)
	// Read three frames late, the input is entered at its frame: the
	// states made before it was read lack it (they were provisional),
	// later ones are the same as if it had come on time.
	late := run(t, 10, 13)
	for f := int32(1); f <= 30; f++ {
		same := onTime[f] == late[f]
		if want := f <= 10 || f > 13; same != want {
			t.Errorf("frame %d: late input gives the on-time state: %v, want %v", f, same, want)
		}
	}
	// An input for a frame still to come waits for it.
	early := run(t, 10, 6)
	for f := int32(1); f <= 30; f++ {
		if early[f] != onTime[f] {
			t.Errorf("frame %d: early input changes the state", f)
		}
	}
	// And reading it in another frame than its own without a rewind is
	// another game.
	if other := run(t, 11, 11); other[12] == onTime[12] {
		t.Error("an input in frame 11 gives the state of one in frame 10")
	}
}

func TestProtocol(t *testing.T) {
	var sent []string
	var last []byte
	g := NewGame(decode.Modern, 5, AtFrame, func(_ netip.AddrPort, b []byte) { sent = append(sent, string(b[:4])); last = bytes.Clone(b) })
	rc := netip.MustParseAddrPort("10.0.0.9:5000")
	g.Hello(rc)
	g.Receive(rc, []byte("cjrc"))
	if len(sent) != 1 || sent[0] != "sjrc" {
		t.Fatalf("cjrc answered with %v", sent)
	}
	g.Step()
	var p decode.Packet
	if err := decode.Decode(&p, last, decode.Modern); err != nil || p.NameString() != "snfo" || p.Int("frame") != 0 {
		t.Fatalf("after frame 0: %v %v", p.NameString(), err)
	}
	g.Hello(player1)
	g.Receive(player1, append([]byte("cjon\x03"), make([]byte, 16)...))
	if err := decode.Decode(&p, last, decode.Modern); err != nil || p.NameString() != "sjon" || p.Int("frame") != 1 || p.Int("player") != 1 || p.Int("color") != 3 {
		t.Fatalf("join reply %v: %v", p.NameString(), err)
	}
	// Every frame: one dif (dst = frame + 1) to the player, one snfo to
	// the clock; the first dif is a keyframe.
	sent = nil
	g.Step()
	if len(sent) < 2 || sent[0] != "stdf" || sent[len(sent)-1] != "snfo" {
		t.Fatalf("frame 1 sent %v", sent)
	}
	base := bytes.Clone(g.State())
	stak := decode.MustNew(decode.Modern, "stak").Set("player", 1).Set("ack_frame", 2).Set("client_frame", 2)
	g.Receive(player1, decode.Encode(nil, stak))
	var difs []*decode.Packet
	g.send = func(_ netip.AddrPort, b []byte) {
		var q decode.Packet
		if decode.Decode(&q, b, decode.Modern) == nil && q.NameString() == "stdf" {
			difs = append(difs, &q)
		}
	}
	g.Step()
	if len(difs) != 1 || difs[0].Int("src") != 2 || difs[0].Int("dst") != 3 || difs[0].Int("count") != 1 {
		t.Fatalf("after the ack of frame 2: %d difs, src %d dst %d", len(difs), difs[0].Int("src"), difs[0].Int("dst"))
	}
	// The dif applied to the acknowledged state gives the server's state.
	zr, err := zlib.NewReader(bytes.NewReader(difs[0].Values[difs[0].Layout.Field("data")].Bytes))
	if err != nil {
		t.Fatal(err)
	}
	dif, err := io.ReadAll(zr)
	if err != nil || len(dif) != synth.ModernStateSize {
		t.Fatalf("dif of %d bytes: %v", len(dif), err)
	}
	for i := range base { // new = base − dif, bytewise, as the game's client applies it
		base[i] -= dif[i]
	}
	if !bytes.Equal(base, g.State()) {
		t.Error("the dif does not give the state of frame 3")
	}
}
