package synth

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/pmdump/pmdump/source"
)

// PacketWriter receives the datagrams Generate puts on the wire, in time
// order. The payload is only valid during the call.
type PacketWriter interface {
	WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error
}

// Format is a capture file format: the capture layer's.
type Format = source.Format

// The formats (see source.Format).
const (
	Pcap   = source.Pcap
	Pcapng = source.Pcapng
)

// FormatFor returns Pcapng for a file name ending in .pcapng and Pcap
// otherwise.
func FormatFor(path string) Format { return source.FormatFor(path) }

// CaptureWriter writes datagrams as Ethernet / IPv4 / UDP frames to a pcap
// or pcapng stream, the way tcpdump on the LAN would record them. Flush
// must be called at the end.
type CaptureWriter struct {
	bw    *bufio.Writer
	pcap  *pcapgo.Writer
	ng    *pcapgo.NgWriter
	frame []byte
	ipID  map[netip.Addr]uint16
	n     int
}

const (
	ethHeaderLen = 14
	ipHeaderLen  = 20
	udpHeaderLen = 8
	snapLen      = 65535
)

// NewCaptureWriter starts a capture in format f on w.
func NewCaptureWriter(w io.Writer, f Format) (*CaptureWriter, error) {
	c := &CaptureWriter{bw: bufio.NewWriterSize(w, 1<<16), ipID: map[netip.Addr]uint16{}}
	switch f {
	case Pcapng:
		intf := pcapgo.NgInterface{
			Name:                "lan0",
			Description:         "synthetic Purple Martians LAN game",
			LinkType:            layers.LinkTypeEthernet,
			TimestampResolution: 9,
			SnapLength:          snapLen,
		}
		opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "pmdump synth"}}
		ng, err := pcapgo.NewNgWriterInterface(c.bw, intf, opts)
		if err != nil {
			return nil, fmt.Errorf("pcapng header: %w", err)
		}
		c.ng = ng
	default:
		c.pcap = pcapgo.NewWriter(c.bw)
		if err := c.pcap.WriteFileHeader(snapLen, layers.LinkTypeEthernet); err != nil {
			return nil, fmt.Errorf("pcap header: %w", err)
		}
	}
	return c, nil
}

// Packets returns how many frames have been written.
func (c *CaptureWriter) Packets() int { return c.n }

// WriteDatagram writes one UDP datagram as an Ethernet frame. Only IPv4
// addresses are supported.
func (c *CaptureWriter) WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error {
	if !src.Addr().Is4() || !dst.Addr().Is4() {
		return fmt.Errorf("capture: %v → %v: only IPv4 is supported", src, dst)
	}
	udpLen := udpHeaderLen + len(payload)
	ipLen := ipHeaderLen + udpLen
	if ipLen > 0xffff {
		return fmt.Errorf("capture: %d-byte payload is too long for one datagram", len(payload))
	}
	b := c.frame[:0]
	// Ethernet: locally administered MACs 02:00:a.b.c.d made from the IPs.
	sa, da := src.Addr().As4(), dst.Addr().As4()
	b = append(b, 0x02, 0x00, da[0], da[1], da[2], da[3])
	b = append(b, 0x02, 0x00, sa[0], sa[1], sa[2], sa[3])
	b = binary.BigEndian.AppendUint16(b, uint16(layers.EthernetTypeIPv4))
	// IPv4 header with don't-fragment set and a per-host identification.
	ip := len(b)
	id := c.ipID[src.Addr()]
	c.ipID[src.Addr()] = id + 1
	b = append(b, 0x45, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(ipLen))
	b = binary.BigEndian.AppendUint16(b, id)
	b = binary.BigEndian.AppendUint16(b, 0x4000)
	b = append(b, 64, byte(layers.IPProtocolUDP), 0, 0)
	b = append(b, sa[:]...)
	b = append(b, da[:]...)
	binary.BigEndian.PutUint16(b[ip+10:], checksum(b[ip:ip+ipHeaderLen], 0))
	// UDP header and payload; the checksum covers the pseudo header.
	udp := len(b)
	b = binary.BigEndian.AppendUint16(b, src.Port())
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
	b = append(b, 0, 0)
	b = append(b, payload...)
	pseudo := sum(sa[:], 0)
	pseudo = sum(da[:], pseudo)
	pseudo += uint32(layers.IPProtocolUDP) + uint32(udpLen)
	cs := checksum(b[udp:], pseudo)
	if cs == 0 {
		cs = 0xffff
	}
	binary.BigEndian.PutUint16(b[udp+6:], cs)
	c.frame = b

	ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b)}
	var err error
	if c.ng != nil {
		err = c.ng.WritePacket(ci, b)
	} else {
		err = c.pcap.WritePacket(ci, b)
	}
	if err != nil {
		return fmt.Errorf("capture: writing frame %d: %w", c.n+1, err)
	}
	c.n++
	return nil
}

// Flush writes out buffered frames.
func (c *CaptureWriter) Flush() error {
	if c.ng != nil {
		if err := c.ng.Flush(); err != nil {
			return fmt.Errorf("capture: %w", err)
		}
	}
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

// sum adds b as big-endian 16-bit words to s (one's complement sum, not yet
// folded).
func sum(b []byte, s uint32) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// checksum is the Internet checksum of b plus an initial sum.
func checksum(b []byte, initial uint32) uint16 {
	s := sum(b, initial)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
