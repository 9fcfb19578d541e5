package source

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
)

// pcapHeader is what a pcap file header says.
type pcapHeader struct {
	order   binary.ByteOrder
	nsf     uint32 // nanoseconds per unit of a record's fraction field
	snaplen int
	lt      layers.LinkType
}

// parsePcapHeader reads a pcap file header; ok is false unless it is one
// of version 2.4, the only one pcapgo reads.
func parsePcapHeader(hdr []byte) (h pcapHeader, ok bool) {
	if len(hdr) < 24 {
		return h, false
	}
	switch binary.LittleEndian.Uint32(hdr) {
	case 0xa1b2c3d4:
		h.order, h.nsf = binary.LittleEndian, 1000
	case 0xa1b23c4d:
		h.order, h.nsf = binary.LittleEndian, 1
	case 0xd4c3b2a1:
		h.order, h.nsf = binary.BigEndian, 1000
	case 0x4d3cb2a1:
		h.order, h.nsf = binary.BigEndian, 1
	default:
		return h, false
	}
	if h.order.Uint16(hdr[4:]) != 2 || h.order.Uint16(hdr[6:]) != 4 {
		return h, false
	}
	h.snaplen = int(h.order.Uint32(hdr[16:]))
	h.lt = layers.LinkType(h.order.Uint32(hdr[20:]))
	return h, true
}
