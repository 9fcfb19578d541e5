package source

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// plainFrame is an Ethernet frame of an IPv4 UDP datagram with payload,
// built by hand (the fast path must agree with gopacket on it, not be
// built by it).
func plainFrame(payload []byte) []byte {
	f := make([]byte, 14+20+8, 14+20+8+len(payload))
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	f[12], f[13] = 0x08, 0x00
	ip := f[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+len(payload)))
	ip[6] = 0x40 // don't fragment
	ip[8], ip[9] = 64, byte(layers.IPProtocolUDP)
	copy(ip[12:16], []byte{10, 0, 0, 1})
	copy(ip[16:20], []byte{10, 0, 0, 2})
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], 24785)
	binary.BigEndian.PutUint16(udp[2:], 51234)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	return append(f, payload...)
}

// sameAsLayers checks that the fast path, when it takes a frame, parses it
// as gopacket's layers do.
func sameAsLayers(t *testing.T, frame []byte) (taken bool) {
	t.Helper()
	var fast, slow linkParser
	fast.init()
	slow.init()
	if !fast.plainUDP(frame) {
		return false
	}
	kind, err := slow.layers(layers.LinkTypeEthernet, frame)
	switch {
	case err != nil || kind != frameUDP || slow.fragment:
		t.Errorf("frame %x: the fast path took it, gopacket gives kind %d, fragment %v, error %v", frame, kind, slow.fragment, err)
	case fast.srcIP != slow.srcIP || fast.dstIP != slow.dstIP:
		t.Errorf("frame %x: addresses %v %v, gopacket's %v %v", frame, fast.srcIP, fast.dstIP, slow.srcIP, slow.dstIP)
	case fast.udp.SrcPort != slow.udp.SrcPort || fast.udp.DstPort != slow.udp.DstPort || fast.udp.Length != slow.udp.Length:
		t.Errorf("frame %x: ports %d %d length %d, gopacket's %d %d %d", frame, fast.udp.SrcPort, fast.udp.DstPort, fast.udp.Length, slow.udp.SrcPort, slow.udp.DstPort, slow.udp.Length)
	case !sameSlice(fast.udp.Payload, slow.udp.Payload) || !sameSlice(fast.udp.Contents, slow.udp.Contents):
		t.Errorf("frame %x: payload %x, gopacket's %x", frame, fast.udp.Payload, slow.udp.Payload)
	}
	return true
}

// sameSlice reports whether a and b are the same bytes of the same array.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && cap(a) == cap(b) && (len(a) == 0 || &a[0] == &b[0])
}

// TestPlainUDPAsLayers: on a plain frame and on every change of one byte of
// its headers to a few telling values, cut short or padded, the fast path
// either leaves the frame to gopacket or parses it exactly as gopacket does;
// and it takes the plain frames.
func TestPlainUDPAsLayers(t *testing.T) {
	base := plainFrame([]byte("cdat\x01\x02\x03\x04"))
	if !sameAsLayers(t, base) {
		t.Fatalf("the fast path does not take a plain frame")
	}
	if !sameAsLayers(t, append(plainFrame(nil), make([]byte, 18)...)) { // padded to Ethernet's 60 bytes
		t.Errorf("the fast path does not take a padded frame")
	}
	taken, left := 0, 0
	for i := 0; i < 14+20+8; i++ {
		for _, v := range []byte{0, 1, 7, 8, 0x20, 0x40, 0x45, 0x46, 0x80, 0xff, base[i] + 1, base[i] - 1} {
			f := bytes.Clone(base)
			f[i] = v
			for _, g := range [][]byte{f, f[:len(f)-1], f[:14+20+8], f[:14+20+7], append(bytes.Clone(f), 0, 0, 0)} {
				if sameAsLayers(t, g) {
					taken++
				} else {
					left++
				}
			}
		}
	}
	t.Logf("%d variants taken by the fast path, %d left to gopacket", taken, left)
}

// FuzzPlainUDP: on any frame, the fast path agrees with gopacket's layers
// or leaves the frame to them.
func FuzzPlainUDP(f *testing.F) {
	f.Add(plainFrame([]byte("stak\x01\x00\x00\x00")))
	f.Add(append(plainFrame(nil), make([]byte, 18)...))
	f.Add(plainFrame(nil)[:40])
	f.Fuzz(func(t *testing.T, frame []byte) {
		sameAsLayers(t, frame)
	})
}
