package source_test

import (
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"

	"github.com/pmdump/pmdump/source"
)

// ip4Options is an Ethernet/IPv4/UDP frame whose IPv4 header carries 4
// bytes of options, so the UDP header is at 38, not 34.
func ip4Options(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice(),
		Options: []layers.IPv4Option{{OptionType: 148, OptionLength: 4, OptionData: []byte{0, 0}}}}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	udp.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth, ip, udp, gopacket.Payload(payload))
}

func ip6TCP(t testing.TB) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeIPv6}
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: cli6.Addr().AsSlice(), DstIP: srv6.Addr().AsSlice()}
	tcp := &layers.TCP{SrcPort: 24785, DstPort: 24785, Seq: 1, SYN: true, Window: 1024}
	tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth, ip, tcp)
}

// runFilter runs a filter program on a frame in x/net/bpf's VM. The VM has
// no kernel extensions: loads of the packet type and interface index are
// replaced by the values given.
func runFilter(t *testing.T, prog []bpf.Instruction, frame []byte, pktType, ifIndex uint32) bool {
	t.Helper()
	ins := make([]bpf.Instruction, len(prog))
	for i, in := range prog {
		ins[i] = in
		if ext, ok := in.(bpf.LoadExtension); ok {
			switch ext.Num {
			case bpf.ExtType:
				ins[i] = bpf.LoadConstant{Dst: bpf.RegA, Val: pktType}
			case bpf.ExtInterfaceIndex:
				ins[i] = bpf.LoadConstant{Dst: bpf.RegA, Val: ifIndex}
			default:
				t.Fatalf("extension %v", ext.Num)
			}
		}
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	n, err := vm.Run(frame)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n != 0 && n != source.MaxRecord {
		t.Fatalf("filter returned %d: neither reject nor the whole frame", n)
	}
	return n != 0
}

// TestCaptureFilter runs the kernel filter on crafted frames of each link
// type it handles: UDP over IPv4 and IPv6, VLAN-tagged or not, IPv4
// fragments, IPv4 options, with and without a port list; and not TCP, ARP
// or IPv6 TCP.
func TestCaptureFilter(t *testing.T) {
	game := netip.MustParseAddrPort("10.0.0.1:24785")
	other := netip.MustParseAddrPort("10.0.0.2:5353")
	high := netip.MustParseAddrPort("10.0.0.3:40000")
	game6 := netip.MustParseAddrPort("[fe80::1]:24785")
	other6 := netip.MustParseAddrPort("[fe80::2]:5353")
	frags := fragments(t, game, high, make([]byte, 300), 77, 128)
	otherFrags := fragments(t, other, high, make([]byte, 300), 78, 128)
	strip := func(b []byte) []byte { return b[14:] } // Ethernet → raw IP
	cook := func(b []byte) []byte {                  // Ethernet → Linux SLL
		h := []byte{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}
		return append(append(h, b[12:14]...), b[14:]...)
	}
	type frame struct {
		name      string
		data      []byte
		all, port bool // passes with no port list; with port 24785
	}
	eth := []frame{
		{"ipv4 to the game", ethernet(t, high, game, payloadA), true, true},
		{"ipv4 from the game", ethernet(t, game, high, payloadA), true, true},
		{"ipv4 other udp", ethernet(t, other, high, payloadA), true, false},
		{"ipv4 options to the game", ip4Options(t, high, game, payloadA), true, true},
		{"ipv4 options other", ip4Options(t, high, other, payloadA), true, false},
		{"first fragment, game", frags[0], true, true},
		{"later fragment", frags[1], true, true},
		{"last fragment", frags[len(frags)-1], true, true},
		{"first fragment, other", otherFrags[0], true, false},
		{"ipv6 to the game", ethernet(t, other6, game6, payloadB), true, true},
		{"ipv6 other udp", ethernet(t, other6, other6, payloadB), true, false},
		{"tcp", tcpFrame(t), false, false},
		{"ipv6 tcp", ip6TCP(t), false, false},
	}
	var cases []struct {
		link   source.FilterLink
		frames []frame
	}
	vlanFrames := []frame{
		{"arp", arpFrame(t), false, false},
		{"vlan game", vlan(t, high, game, payloadA), true, true},
		{"vlan other", vlan(t, high, other, payloadA), true, false},
		{"vlan ipv6 game", vlan(t, other6, game6, payloadA), true, true},
	}
	cases = append(cases, struct {
		link   source.FilterLink
		frames []frame
	}{source.FilterEthernet, append(append([]frame(nil), eth...), vlanFrames...)})
	var raw, sllFrames []frame
	for _, f := range eth {
		raw = append(raw, frame{f.name, strip(f.data), f.all, f.port})
		sllFrames = append(sllFrames, frame{f.name, cook(f.data), f.all, f.port})
	}
	cases = append(cases, struct {
		link   source.FilterLink
		frames []frame
	}{source.FilterRawIP, raw}, struct {
		link   source.FilterLink
		frames []frame
	}{source.FilterLinuxSLL, sllFrames})
	for _, c := range cases {
		all, err := source.CaptureFilter(source.FilterOptions{Link: c.link})
		if err != nil {
			t.Fatal(err)
		}
		ported, err := source.CaptureFilter(source.FilterOptions{Link: c.link, Ports: []uint16{1234, 24785}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bpf.Assemble(ported); err != nil {
			t.Fatalf("link %d: %v", c.link, err)
		}
		for _, f := range c.frames {
			if got := runFilter(t, all, f.data, 0, 1); got != f.all {
				t.Errorf("link %d, %s, all UDP: passes %v, want %v", c.link, f.name, got, f.all)
			}
			if got := runFilter(t, ported, f.data, 0, 1); got != f.port {
				t.Errorf("link %d, %s, port 24785: passes %v, want %v", c.link, f.name, got, f.port)
			}
		}
	}
	// Cut frames are rejected, not accepted by a read past their end.
	prog, _ := source.CaptureFilter(source.FilterOptions{Link: source.FilterEthernet, Ports: []uint16{24785}})
	if runFilter(t, prog, ethernet(t, high, game, payloadA)[:36], 0, 1) {
		t.Error("a frame cut inside the UDP header passes")
	}
}

// TestCaptureFilterOutgoing: on a loopback device the frame the host sent
// (packet type 4, PACKET_OUTGOING) is dropped and its received copy (type
// 0, PACKET_HOST) kept; for "any", only on the loopback interfaces named.
func TestCaptureFilterOutgoing(t *testing.T) {
	frame := ethernet(t, cli4, srv4, payloadA)
	lo, err := source.CaptureFilter(source.FilterOptions{Link: source.FilterEthernet, DropOutgoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if runFilter(t, lo, frame, 4, 1) || !runFilter(t, lo, frame, 0, 1) {
		t.Error("loopback: outgoing must be dropped, incoming kept")
	}
	anyDev, err := source.CaptureFilter(source.FilterOptions{Link: source.FilterRawIP, DropOutgoingOn: []int{1, 7}})
	if err != nil {
		t.Fatal(err)
	}
	ip := frame[14:]
	for _, c := range []struct {
		pktType, ifIndex uint32
		pass             bool
	}{{4, 1, false}, {0, 1, true}, {4, 7, false}, {4, 2, true}, {0, 2, true}} {
		if got := runFilter(t, anyDev, ip, c.pktType, c.ifIndex); got != c.pass {
			t.Errorf("any: type %d on interface %d passes %v, want %v", c.pktType, c.ifIndex, got, c.pass)
		}
	}
	if len(anyDev) == 0 {
		t.Fatal("empty program")
	}
}
