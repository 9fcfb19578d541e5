package engine

import (
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// Datagram gives packet i as a frame to write to a capture: the frame as
// it was captured (its link layer and time stamp) when
// its record can be read again from the capture file; otherwise (a packet
// of standard input, a compressed file, a sample or a live interface,
// whose payload the index spooled) a frame rebuilt from its addresses and
// payload, Ethernet with IPv4 or IPv6 and UDP, which Rebuilt says.
func (x *PacketIndex) Datagram(i int, d *source.Datagram) (rebuilt bool, err error) {
	x.mu.RLock()
	if i < 0 || i >= x.n {
		x.mu.RUnlock()
		return false, fmt.Errorf("packet %d: the index has %d packets", i, x.n)
	}
	if i < x.first {
		x.mu.RUnlock()
		return false, fmt.Errorf("packet %d: %w", i, ErrDropped)
	}
	e := x.entry(i)
	if k := int(e.loc >> inputShift); k > 0 && k <= len(x.rereaders) && int(e.link) < len(x.links) {
		rr, lt := x.rereaders[k-1], x.links[e.link]
		x.mu.RUnlock()
		if err := rr.Datagram(e.loc&(1<<inputShift-1), lt, d); err != nil {
			return false, fmt.Errorf("packet %d (frame %d): %w", i, e.N, err)
		}
		d.N, d.TS, d.WireLength = int(e.N), e.Time(), len(d.Frame)
		return false, nil
	}
	var r session.Record
	payload, err := x.unspool(&e, &r)
	x.mu.RUnlock()
	if err != nil {
		return false, fmt.Errorf("packet %d (frame %d): %w", i, e.N, err)
	}
	frame, err := udpFrame(r.Src.Addr().AsSlice(), r.Dst.Addr().AsSlice(), r.Src.Port(), r.Dst.Port(), payload)
	if err != nil {
		return false, fmt.Errorf("packet %d (frame %d): %w", i, e.N, err)
	}
	*d = source.Datagram{N: int(e.N), TS: e.Time(), Src: r.Src, Dst: r.Dst, Frame: frame, LinkType: layers.LinkTypeEthernet,
		WireLength: len(frame), Length: len(payload)}
	d.Payload = frame[len(frame)-len(payload):]
	return true, nil
}

// udpFrame builds an Ethernet frame of a UDP datagram (IPv4 or IPv6 by the
// addresses' length).
func udpFrame(src, dst net.IP, sport, dport uint16, payload []byte) ([]byte, error) {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	var ip gopacket.SerializableLayer
	if len(src) == net.IPv4len {
		eth.EthernetType = layers.EthernetTypeIPv4
		ip4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src, DstIP: dst}
		udp.SetNetworkLayerForChecksum(ip4)
		ip = ip4
	} else {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: src, DstIP: dst}
		udp.SetNetworkLayerForChecksum(ip6)
		ip = ip6
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(payload)); err != nil {
		return nil, fmt.Errorf("rebuilding its frame: %w", err)
	}
	return buf.Bytes(), nil
}
