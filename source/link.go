package source

import (
	"encoding/binary"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// linkParser peels link, VLAN, IP and UDP headers off one frame with
// gopacket's DecodingLayers, reusing the same layer values for every frame.
type linkParser struct {
	eth      layers.Ethernet
	dot1q    layers.Dot1Q
	sll      layers.LinuxSLL
	sll2     layers.LinuxSLL2
	lo       layers.Loopback
	ip4      layers.IPv4
	ip6      layers.IPv6
	udp      layers.UDP
	dlc      gopacket.DecodingLayerContainer
	srcIP    netip.Addr
	dstIP    netip.Addr
	fragment bool
}

func (p *linkParser) init() {
	p.dlc = gopacket.DecodingLayerSparse(nil)
	for _, l := range []gopacket.DecodingLayer{&p.eth, &p.dot1q, &p.sll, &p.sll2, &p.lo, &p.ip4, &p.ip6, &p.udp} {
		p.dlc = p.dlc.Put(l)
	}
}

// firstLayer maps a capture link type to the layer its frames start with.
func firstLayer(lt layers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case layers.LinkTypeEthernet:
		return layers.LayerTypeEthernet, true
	case layers.LinkTypeLinuxSLL:
		return layers.LayerTypeLinuxSLL, true
	case layers.LinkTypeLinuxSLL2:
		return layers.LayerTypeLinuxSLL2, true
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		return layers.LayerTypeLoopback, true
	case layers.LinkTypeIPv4:
		return layers.LayerTypeIPv4, true
	case layers.LinkTypeIPv6:
		return layers.LayerTypeIPv6, true
	case layers.LinkTypeRaw, 12: // 12 is DLT_RAW on some BSDs
		if len(data) > 0 && data[0]>>4 == 6 {
			return layers.LayerTypeIPv6, true
		}
		return layers.LayerTypeIPv4, true
	}
	return 0, false
}

// frameKind is what a frame carries, as far as the reader cares.
type frameKind uint8

const (
	frameOther       frameKind = iota // no UDP
	frameUDP                          // UDP, or an IPv4 fragment of UDP
	frameUnsupported                  // a link type the reader cannot parse
)

// frame parses one frame. It reports whether the frame carries UDP (or an
// IPv4 fragment, flagged in p.fragment); err is set for a header that
// cannot be parsed.
func (p *linkParser) frame(lt layers.LinkType, data []byte) (frameKind, error) {
	p.fragment = false
	if lt == layers.LinkTypeEthernet && p.plainUDP(data) {
		return frameUDP, nil
	}
	return p.layers(lt, data)
}

// layers parses one frame as frame does, with gopacket's layers only.
func (p *linkParser) layers(lt layers.LinkType, data []byte) (frameKind, error) {
	p.fragment = false
	typ, ok := firstLayer(lt, data)
	if !ok {
		return frameUnsupported, nil
	}
	for {
		dec, ok := p.dlc.Decoder(typ)
		if !ok {
			return frameOther, nil
		}
		if err := dec.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return frameOther, err
		}
		switch typ {
		case layers.LayerTypeIPv4:
			p.srcIP = addr(p.ip4.SrcIP)
			p.dstIP = addr(p.ip4.DstIP)
			if p.ip4.Flags&layers.IPv4MoreFragments != 0 || p.ip4.FragOffset != 0 {
				if p.ip4.Protocol != layers.IPProtocolUDP {
					return frameOther, nil
				}
				p.fragment = true
				return frameUDP, nil
			}
		case layers.LayerTypeIPv6:
			p.srcIP = addr(p.ip6.SrcIP)
			p.dstIP = addr(p.ip6.DstIP)
		case layers.LayerTypeUDP:
			return frameUDP, nil
		}
		typ = dec.NextLayerType()
		data = dec.LayerPayload()
	}
}

// plainUDP parses the frame most captures are made of, an Ethernet frame
// of an unfragmented IPv4 datagram with no options, whole, carrying UDP,
// as gopacket's layers would (the same addresses, ports, length and
// payload), and reports whether the frame is one. Any other frame,
// including every malformed one, is left to gopacket.
func (p *linkParser) plainUDP(data []byte) bool {
	if len(data) < 14+20+8 || data[12] != 0x08 || data[13] != 0x00 || data[14] != 0x45 {
		return false // not Ethernet carrying IPv4 with a 20-byte header
	}
	ip := data[14:]
	length := int(binary.BigEndian.Uint16(ip[2:4]))
	frag := binary.BigEndian.Uint16(ip[6:8])
	if length < 20+8 || length > len(ip) || frag&0x3fff != 0 || ip[9] != byte(layers.IPProtocolUDP) {
		return false // cut short, padded oddly, fragmented or not UDP
	}
	udp := ip[20:length] // what IPv4 gives as its payload: its Length, without the frame's padding
	ulen := binary.BigEndian.Uint16(udp[4:6])
	if ulen < 8 {
		return false // a jumbogram's 0, or too small: as gopacket says
	}
	p.srcIP = netip.AddrFrom4([4]byte(ip[12:16]))
	p.dstIP = netip.AddrFrom4([4]byte(ip[16:20]))
	u := &p.udp
	u.SrcPort = layers.UDPPort(binary.BigEndian.Uint16(udp[0:2]))
	u.DstPort = layers.UDPPort(binary.BigEndian.Uint16(udp[2:4]))
	u.Length = ulen
	u.Checksum = binary.BigEndian.Uint16(udp[6:8])
	u.Contents = udp[:8]
	u.Payload = udp[8:min(int(ulen), len(udp))]
	return true
}

func addr(ip net.IP) netip.Addr {
	if v4 := ip.To4(); v4 != nil {
		return netip.AddrFrom4([4]byte(v4))
	}
	a, _ := netip.AddrFromSlice(ip)
	return a
}
