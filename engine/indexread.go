package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/internal/spill"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// Where the packet index reads a packet again: its capture file's record,
// or the spool of the packets that cannot be read again by offset.

// spoolHeader is a spooled record's addresses: 16-byte IP, 2-byte port and
// a 4-in-6 flag, for the source and the destination.
const spoolHeader = 2 * 19

func appendAddr(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr().As16()
	b = append(b, ip[:]...)
	b = binary.BigEndian.AppendUint16(b, a.Port())
	if a.Addr().Is4() {
		return append(b, 4)
	}
	return append(b, 6)
}

func readAddr(b []byte) netip.AddrPort {
	ip := netip.AddrFrom16([16]byte(b[:16]))
	if b[18] == 4 {
		ip = ip.Unmap()
	}
	return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[16:18]))
}

// reread reads entry e's packet again with rr, its input's Rereader, as
// link type lt: it sets r's addresses and returns the payload.
func reread(rr *source.Rereader, lt layers.LinkType, e *IndexEntry, r *session.Record) ([]byte, error) {
	if rr == nil {
		return nil, errors.New("no input to read it from")
	}
	var d source.Datagram
	if err := rr.Datagram(e.loc&(1<<inputShift-1), lt, &d); err != nil {
		return nil, err
	}
	// The capture's record must still hold the packet indexed (a short
	// simple packet block may add its padding).
	if len(d.Payload) < int(e.Len) || string(d.Payload[:min(4, e.Len)]) != string(e.Name[:min(4, e.Len)]) {
		return nil, fmt.Errorf("the capture file changed since it was read: %w", source.ErrReread)
	}
	r.Src, r.Dst = d.Src, d.Dst
	return d.Payload[:e.Len:e.Len], nil
}

// unspool reads entry e's packet from the spool: it sets r's addresses and
// returns the payload. Call with x.mu held.
func (x *PacketIndex) unspool(e *IndexEntry, r *session.Record) ([]byte, error) {
	if e.loc < 0 {
		return nil, errors.New("its bytes could not be kept")
	}
	raw := make([]byte, spoolHeader+int(e.Len))
	if err := x.spool.Get(raw, e.loc); err != nil {
		if errors.Is(err, spill.ErrReleased) {
			return nil, fmt.Errorf("%w (%w)", ErrDropped, err)
		}
		return nil, err
	}
	r.Src, r.Dst = readAddr(raw[:19]), readAddr(raw[19:38])
	return raw[spoolHeader:], nil
}
