package source_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Helpers that build small captures with gopacket, for the tests and the
// fuzz seed corpus.

var (
	cli4  = netip.MustParseAddrPort("192.168.1.20:24785")
	srv4  = netip.MustParseAddrPort("192.168.1.10:51234")
	cli6  = netip.MustParseAddrPort("[fe80::20]:24785")
	srv6  = netip.MustParseAddrPort("[fe80::10]:51234")
	mac1  = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	mac2  = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
	epoch = time.Date(2022, 12, 9, 12, 0, 0, 0, time.UTC)
)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

// ipUDP returns the IP and UDP layers (and payload) of one datagram, IPv4 or
// IPv6 after the addresses.
func ipUDP(src, dst netip.AddrPort, payload []byte) []gopacket.SerializableLayer {
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	if src.Addr().Is4() {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: 0x1234, Protocol: layers.IPProtocolUDP,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		udp.SetNetworkLayerForChecksum(ip)
		return []gopacket.SerializableLayer{ip, udp, gopacket.Payload(payload)}
	}
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP,
		SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
	udp.SetNetworkLayerForChecksum(ip)
	return []gopacket.SerializableLayer{ip, udp, gopacket.Payload(payload)}
}

func etherType(a netip.Addr) layers.EthernetType {
	if a.Is4() {
		return layers.EthernetTypeIPv4
	}
	return layers.EthernetTypeIPv6
}

// ipPacket is the raw IP datagram (no link header).
func ipPacket(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	return serialize(t, ipUDP(src, dst, payload)...)
}

func ethernet(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: etherType(src.Addr())}
	return serialize(t, append([]gopacket.SerializableLayer{eth}, ipUDP(src, dst, payload)...)...)
}

func vlan(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeDot1Q}
	tag := &layers.Dot1Q{VLANIdentifier: 42, Type: etherType(src.Addr())}
	return serialize(t, append([]gopacket.SerializableLayer{eth, tag}, ipUDP(src, dst, payload)...)...)
}

// sll is a Linux cooked (v1) header: packet type, ARPHRD, address length,
// 8 address bytes, protocol.
func sll(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	h := make([]byte, 16)
	binary.BigEndian.PutUint16(h[0:], 4) // sent by us
	binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:], 6)
	copy(h[6:], mac1)
	binary.BigEndian.PutUint16(h[14:], uint16(etherType(src.Addr())))
	return append(h, ipPacket(t, src, dst, payload)...)
}

// sll2 is a Linux cooked v2 header: protocol, reserved, interface index,
// ARPHRD, packet type, address length, 8 address bytes.
func sll2(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h[0:], uint16(etherType(src.Addr())))
	binary.BigEndian.PutUint32(h[4:], 3)
	binary.BigEndian.PutUint16(h[8:], 1)
	h[10] = 0
	h[11] = 6
	copy(h[12:], mac1)
	return append(h, ipPacket(t, src, dst, payload)...)
}

// null is the BSD loopback header: the address family as a 4-byte integer
// in the capturing host's byte order.
func null(order binary.AppendByteOrder, family uint32) func(testing.TB, netip.AddrPort, netip.AddrPort, []byte) []byte {
	return func(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
		h := order.AppendUint32(nil, family)
		return append(h, ipPacket(t, src, dst, payload)...)
	}
}

type record struct {
	data   []byte
	ts     time.Time
	length int // original length, 0: len(data)
	intf   int // pcapng interface
}

// writePcap writes a classic pcap file.
func writePcap(t testing.TB, lt layers.LinkType, snaplen uint32, recs ...record) []byte {
	t.Helper()
	var b bytes.Buffer
	size := 24 // the file header, then each record's header and bytes
	for _, r := range recs {
		size += 16 + len(r.data)
	}
	b.Grow(size) // at once: growing a buffer of tens of megabytes step by step clears each new one
	w := pcapgo.NewWriter(&b)
	if err := w.WriteFileHeader(snaplen, lt); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		ci := gopacket.CaptureInfo{Timestamp: r.ts, CaptureLength: len(r.data), Length: max(r.length, len(r.data))}
		if err := w.WritePacket(ci, r.data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// writePcapng writes a pcapng file with one interface per link type.
func writePcapng(t testing.TB, lts []layers.LinkType, recs ...record) []byte {
	t.Helper()
	var b bytes.Buffer
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = lts[0]
	w, err := pcapgo.NewNgWriterInterface(&b, intf, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, lt := range lts[1:] {
		intf.LinkType = lt
		intf.Name = "intf" + string(rune('1'+i))
		if _, err := w.AddInterface(intf); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs {
		ci := gopacket.CaptureInfo{Timestamp: r.ts, CaptureLength: len(r.data), Length: max(r.length, len(r.data)), InterfaceIndex: r.intf}
		if err := w.WritePacket(ci, r.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fragments splits one UDP datagram into IPv4 fragments whose data parts
// are at most size bytes (a multiple of 8), each in an Ethernet frame.
func fragments(t testing.TB, src, dst netip.AddrPort, payload []byte, id uint16, size int) [][]byte {
	t.Helper()
	whole := ipPacket(t, src, dst, payload)
	var ip layers.IPv4
	if err := ip.DecodeFromBytes(whole, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	body := ip.Payload // UDP header + payload
	var out [][]byte
	for off := 0; off < len(body); off += size {
		end := min(off+size, len(body))
		frag := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: id, Protocol: layers.IPProtocolUDP,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice(), FragOffset: uint16(off / 8)}
		if end < len(body) {
			frag.Flags = layers.IPv4MoreFragments
		}
		eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeIPv4}
		out = append(out, serialize(t, eth, frag, gopacket.Payload(body[off:end])))
	}
	return out
}

func tcpFrame(t testing.TB) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP,
		SrcIP: net.IP{192, 168, 1, 20}, DstIP: net.IP{192, 168, 1, 10}}
	tcp := &layers.TCP{SrcPort: 40000, DstPort: 80, Seq: 1, SYN: true, Window: 1024}
	tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth, ip, tcp, gopacket.Payload("GET"))
}

func arpFrame(t testing.TB) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP}
	arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6,
		ProtAddressSize: 4, Operation: layers.ARPRequest, SourceHwAddress: mac1, SourceProtAddress: []byte{192, 168, 1, 20},
		DstHwAddress: make([]byte, 6), DstProtAddress: []byte{192, 168, 1, 10}}
	return serialize(t, eth, arp)
}

// padded is an Ethernet frame padded with zeros to the 60-byte minimum, as
// a NIC sends a short frame.
func padded(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	b := ethernet(t, src, dst, payload)
	for len(b) < 60 {
		b = append(b, 0)
	}
	return b
}

// qinq is an Ethernet frame with two VLAN tags (802.1ad outer, 802.1Q inner).
func qinq(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	eth := &layers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: layers.EthernetTypeQinQ}
	outer := &layers.Dot1Q{VLANIdentifier: 100, Type: layers.EthernetTypeDot1Q}
	inner := &layers.Dot1Q{VLANIdentifier: 42, Type: etherType(src.Addr())}
	return serialize(t, append([]gopacket.SerializableLayer{eth, outer, inner}, ipUDP(src, dst, payload)...)...)
}
