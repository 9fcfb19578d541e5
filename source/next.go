package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Next returns the next UDP datagram. The returned Datagram and its Payload
// are reused by the following call. At the end of the capture Next returns
// io.EOF; a capture that ends in the middle of a record returns an error
// wrapping io.ErrUnexpectedEOF, after which the reader is finished.
func (r *Reader) Next() (*Datagram, error) {
	if err := r.next(&r.dg); err != nil {
		return nil, err
	}
	return &r.dg, nil
}

// next reads the next UDP datagram into dg, as Next: its bytes are valid
// until the following call. Prefetch reads into its batches through it,
// without a copy of the Datagram.
func (r *Reader) next(dg *Datagram) error {
	if r.err != nil {
		return r.err
	}
	for {
		data, ci, lt, err := r.src.ReadFrame()
		if err != nil {
			r.err = r.wrapReadErr(err)
			return r.err
		}
		r.counters.Frames++
		n := r.counters.Frames
		r.countLinkType(lt)
		kind, perr := r.parse.frame(lt, data)
		switch {
		case perr != nil:
			r.counters.BadFrames++
			continue
		case kind == frameUnsupported:
			r.counters.Unsupported++
			r.counters.NonUDP++
			continue
		case kind == frameOther:
			r.counters.NonUDP++
			continue
		}
		p := &r.parse
		var ip4Header []byte // of the fragment that completed a datagram
		if p.fragment {
			r.counters.Fragments++
			// The header's bytes: the reassembler keeps only a copy.
			ip4Header = p.ip4.Contents
			if !r.reassemble(ci.Timestamp) {
				continue
			}
			r.counters.Reassembled++
		}
		*dg = Datagram{
			N:           n,
			TS:          ci.Timestamp,
			Src:         netip.AddrPortFrom(p.srcIP, uint16(p.udp.SrcPort)),
			Dst:         netip.AddrPortFrom(p.dstIP, uint16(p.udp.DstPort)),
			Payload:     p.udp.Payload,
			Length:      int(p.udp.Length) - 8,
			Reassembled: p.fragment,
			Frame:       data,
			LinkType:    lt,
			WireLength:  ci.Length,
			Interface:   ci.InterfaceIndex,
			Offset:      -1,
		}
		dg.InterfaceName = r.interfaceName(ci.InterfaceIndex)
		dg.Digits = r.digitsOf(ci.InterfaceIndex)
		dg.payloadAt = -1
		if at := cap(data) - cap(dg.Payload); !p.fragment && at >= 0 && at+len(dg.Payload) <= len(data) {
			dg.payloadAt = at
		}
		if r.offsets != nil {
			dg.Offset = r.offsets.RecordOffset()
		}
		if p.udp.Length == 0 { // jumbogram: trust what was captured
			dg.Length = len(p.udp.Payload)
		}
		if p.fragment {
			r.unfragmentedFrame(dg, data, ip4Header)
		}
		if dg.Truncated() {
			r.counters.Truncated++
		}
		r.counters.Datagrams++
		return nil
	}
}

// unfragmentedFrame makes the frame of a datagram rebuilt from IPv4
// fragments: the link header of its last fragment (data), that fragment's
// IPv4 header (hdr, a slice of data) without fragmentation and with the
// whole length, and the whole UDP datagram. Written out, it reads back as
// the datagram.
func (r *Reader) unfragmentedFrame(dg *Datagram, data, hdr []byte) {
	link := cap(data) - cap(hdr)
	udp := r.parse.udp.Contents
	if link < 0 || link+len(hdr) > len(data) || len(hdr) < 20 || len(udp) != 8 {
		return // keep the fragment's frame
	}
	b := append(r.rebuilt[:0], data[:link+len(hdr)]...)
	ip := b[link:]
	total := len(hdr) + 8 + len(dg.Payload)
	if total > 0xffff {
		return
	}
	binary.BigEndian.PutUint16(ip[2:], uint16(total))
	binary.BigEndian.PutUint16(ip[6:], 0) // no flags, no offset
	binary.BigEndian.PutUint16(ip[10:], 0)
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:len(hdr)]))
	b = append(b, udp...)
	at := len(b)
	b = append(b, dg.Payload...)
	r.rebuilt = b
	dg.Frame = b
	dg.WireLength = len(b)
	dg.Payload = b[at:len(b):len(b)]
	dg.payloadAt = at
}

// ipChecksum is the Internet checksum of an IPv4 header.
func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// Buffered reports whether the next datagram can be read from what is
// already buffered, without waiting for the input (a live stream).
func (r *Reader) Buffered() bool {
	return r.buffered != nil && r.buffered.Buffered()
}

func (r *Reader) wrapReadErr(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	n := r.counters.Frames + 1
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: frame %d: capture truncated in the middle of a record: %w", r.name, n, err)
	}
	return fmt.Errorf("%s: frame %d: unreadable record, stopping this input: %w", r.name, n, err)
}

// reassemble feeds the current IPv4 fragment to the reassembler and, when
// the datagram is complete, parses its UDP header. It reports whether a
// complete UDP datagram is now in r.parse.udp.
func (r *Reader) reassemble(ts time.Time) bool {
	p := &r.parse
	full := r.frags.add(&p.ip4, ts, &r.counters)
	if full == nil || full.Protocol != layers.IPProtocolUDP {
		return false
	}
	if err := p.udp.DecodeFromBytes(full.Payload, gopacket.NilDecodeFeedback); err != nil {
		return false
	}
	return true
}
