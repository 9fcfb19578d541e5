package synth

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// TestWorldState checks that the state looks like the game's: the era's
// size, players with plausible positions where the layout puts them, and
// little change from one frame to the next.
func TestWorldState(t *testing.T) {
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			lay := layoutFor(era)
			w := newWorld(lay, rand.New(rand.NewPCG(3, 4)), 1)
			w.join(0, 8, 3)
			w.join(1, 5, 2)
			w.players[1].move = ctlRight | ctlJump
			if len(w.st) != StateSize(era) {
				t.Fatalf("state is %d bytes", len(w.st))
			}
			prev := bytes.Clone(w.st)
			changed := 0
			for f := 0; f < 40; f++ {
				w.step()
				n := 0
				for i := range w.st {
					if w.st[i] != prev[i] {
						n++
					}
				}
				changed += n
				copy(prev, w.st)
			}
			if avg := changed / 40; avg < 20 || avg > 1500 {
				t.Errorf("%d bytes change per frame on average", avg)
			}
			pos := func(field int) float64 {
				off := lay.players + lay.playerSize + 4*field
				v := binary.LittleEndian.Uint32(w.st[off:])
				if lay.fixed {
					return float64(int32(v)) / 65536
				}
				return float64(math.Float32frombits(v))
			}
			x, y := pos(lay.pf.x), pos(lay.pf.y)
			if x < 20 || x > 1980 || y < 20 || y > 1980 {
				t.Errorf("player 1 at (%v, %v), outside the level", x, y)
			}
			if x == float64((10+11)*blockPx) {
				t.Errorf("player 1 did not move right from its spawn point")
			}
			if a := binary.LittleEndian.Uint32(w.st[lay.players+lay.playerSize:]); a != 1 {
				t.Errorf("player 1 active = %d", a)
			}
		})
	}
}

// TestBoundedMemory runs a long lossy game and checks that the server holds
// at most statedif.History states per client and that the per-client and
// game-move buffers stay small.
func TestBoundedMemory(t *testing.T) {
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			cfg := Config{Era: era, Players: 4, Duration: 40 * time.Second, Loss: 0.1, Seed: 1}
			var maxSnaps, maxMoves, maxPend, maxInbox int
			w := &probe{}
			g, err := newGen(cfg, w, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.check = func() {
				maxSnaps = max(maxSnaps, len(g.srv.snaps.m))
				maxMoves = max(maxMoves, len(g.srv.moves))
				maxInbox = max(maxInbox, len(g.srv.ib.q))
				for _, c := range g.clients {
					maxPend = max(maxPend, len(c.pend))
					if len(c.held) > statedif.History {
						t.Fatalf("client holds %d states", len(c.held))
					}
				}
				for _, c := range g.srv.clients {
					if c.bases.Len() > statedif.History {
						t.Fatalf("server history of %d states", c.bases.Len())
					}
				}
			}
			if err := g.run(); err != nil {
				t.Fatal(err)
			}
			if maxSnaps > statedif.History*cfg.Players {
				t.Errorf("server held %d states for %d clients", maxSnaps, cfg.Players)
			}
			if maxMoves > 2000 || maxPend > maxPending || maxInbox > 500 {
				t.Errorf("buffers grew: %d game moves, %d pending difs, %d in the server's inbox", maxMoves, maxPend, maxInbox)
			}
			if len(g.srv.snaps.free) > statedif.History*cfg.Players+1 {
				t.Errorf("%d free state buffers", len(g.srv.snaps.free))
			}
		})
	}
}

type probe struct{ check func() }

func (p *probe) WriteDatagram(time.Time, netip.AddrPort, netip.AddrPort, []byte) error {
	if p.check != nil {
		p.check()
	}
	return nil
}

// TestCaptureFrames checks the Ethernet, IPv4 and UDP headers the capture
// writer builds, checksums included, in both formats.
func TestCaptureFrames(t *testing.T) {
	src := netip.MustParseAddrPort("10.0.0.3:24785")
	dst := netip.MustParseAddrPort("10.0.0.1:40000")
	ts := time.Date(2026, 1, 1, 0, 0, 1, 123456789, time.UTC)
	for _, f := range []Format{Pcap, Pcapng} {
		t.Run(f.String(), func(t *testing.T) {
			var buf bytes.Buffer
			cw, err := NewCaptureWriter(&buf, f)
			if err != nil {
				t.Fatal(err)
			}
			payloads := [][]byte{[]byte("1234"), []byte("stak\x01\x00\x00\x00\x05"), bytes.Repeat([]byte{0xab}, 1023)}
			for _, p := range payloads {
				if err := cw.WriteDatagram(ts, src, dst, p); err != nil {
					t.Fatal(err)
				}
			}
			if err := cw.Flush(); err != nil {
				t.Fatal(err)
			}
			var read func() ([]byte, gopacket.CaptureInfo, error)
			if f == Pcapng {
				r, err := pcapgo.NewNgReader(&buf, pcapgo.DefaultNgReaderOptions)
				if err != nil {
					t.Fatal(err)
				}
				read = r.ReadPacketData
			} else {
				r, err := pcapgo.NewReader(&buf)
				if err != nil {
					t.Fatal(err)
				}
				if r.LinkType() != layers.LinkTypeEthernet {
					t.Fatalf("link type %v", r.LinkType())
				}
				read = r.ReadPacketData
			}
			for i, want := range payloads {
				data, ci, err := read()
				if err != nil {
					t.Fatal(err)
				}
				wantTS := ts
				if f == Pcap {
					wantTS = ts.Truncate(time.Microsecond)
				}
				if !ci.Timestamp.Equal(wantTS) {
					t.Errorf("time stamp %v, want %v", ci.Timestamp, wantTS)
				}
				pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
				ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
				udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
				if ip == nil || udp == nil {
					t.Fatalf("frame %d: no IPv4/UDP: %v", i, pkt)
				}
				if !ip.SrcIP.Equal(src.Addr().AsSlice()) || !ip.DstIP.Equal(dst.Addr().AsSlice()) ||
					uint16(udp.SrcPort) != src.Port() || uint16(udp.DstPort) != dst.Port() {
					t.Errorf("frame %d: %v:%d → %v:%d", i, ip.SrcIP, udp.SrcPort, ip.DstIP, udp.DstPort)
				}
				if !bytes.Equal(udp.Payload, want) || int(udp.Length) != 8+len(want) || int(ip.Length) != 28+len(want) {
					t.Errorf("frame %d: payload or lengths wrong", i)
				}
				if checksum(data[ethHeaderLen:ethHeaderLen+ipHeaderLen], 0) != 0 {
					t.Errorf("frame %d: bad IPv4 checksum", i)
				}
				pseudo := sum(data[ethHeaderLen+12:ethHeaderLen+20], 0) + uint32(layers.IPProtocolUDP) + uint32(udp.Length)
				if checksum(data[ethHeaderLen+ipHeaderLen:], pseudo) != 0 {
					t.Errorf("frame %d: bad UDP checksum", i)
				}
			}
			if _, _, err := read(); err != io.EOF {
				t.Errorf("after the last frame: %v", err)
			}
		})
	}
}

// ApplyDif rebuilds a state in place the way a client does: state = state −
// dif, bytewise. For a keyframe state must be all zeros.
func ApplyDif(state, dif []byte) {
	for i := range state {
		state[i] -= dif[i]
	}
}
