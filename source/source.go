// Package source reads captured frames from pcap and pcapng files (plain or
// gzip-compressed, from a file or a stream) and yields the UDP datagrams they
// carry, one at a time, with constant memory.
//
// It understands the link types a Purple Martians LAN capture is likely to
// have (Ethernet, Linux cooked SLL and SLL2, BSD loopback/null, raw IPv4/IPv6),
// 802.1Q VLAN tags, IPv4 and IPv6, and it reassembles fragmented IPv4
// datagrams. Everything else is counted and skipped.
package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/ip4defrag"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/klauspost/compress/gzip"
)

// Datagram is one UDP datagram found in a capture.
type Datagram struct {
	N           int       // 1-based number of the frame in the capture (as Wireshark counts)
	TS          time.Time // capture time stamp
	Src, Dst    netip.AddrPort
	Payload     []byte // the captured UDP payload; valid until the next call to Next
	Length      int    // the UDP payload length the UDP header claims
	Reassembled bool   // rebuilt from IPv4 fragments
}

// Truncated reports whether the capture holds fewer payload bytes than the
// UDP header claims (a snap length cut the frame).
func (d *Datagram) Truncated() bool { return len(d.Payload) < d.Length }

// Counters count what a Reader has seen besides the datagrams it returned.
type Counters struct {
	Frames      int // every frame read from the capture
	NonUDP      int // frames that carry no UDP (other protocols, other link types)
	Fragments   int // IPv4 fragments held for reassembly
	Reassembled int // UDP datagrams rebuilt from IPv4 fragments
	BadFrames   int // frames whose link, IP or UDP header could not be parsed
	Truncated   int // UDP datagrams cut short by the snap length
	Datagrams   int // UDP datagrams returned
	LinkTypes   map[string]int
}

// Reader yields the UDP datagrams of one capture file or stream.
type Reader struct {
	name      string
	closer    io.Closer
	pcap      *pcapgo.Reader
	ng        *pcapgo.NgReader
	format    string
	counters  Counters
	dg        Datagram
	parse     linkParser
	defrag    *ip4defrag.IPv4Defragmenter
	lastSweep time.Time
	err       error
	held      bool // Next returns dg again (see unread)
	br        *bufio.Reader
	linkTypes []linkTypeCount
}

// ErrFormat is wrapped by errors for inputs that are not pcap or pcapng.
var ErrFormat = errors.New("not a pcap or pcapng capture")

// Open opens a capture file by name; "-" is standard input. Gzip-compressed
// files are recognised by their magic number and inflated on the fly.
func Open(name string) (*Reader, error) {
	if name == "-" {
		return NewReader(os.Stdin, "stdin")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a capture file", name)
	}
	r, err := NewReader(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a capture from a stream. The stream may be gzip-compressed.
func NewReader(in io.Reader, name string) (*Reader, error) {
	br := bufio.NewReaderSize(in, 1<<16)
	magic, err := br.Peek(4)
	if err != nil {
		if len(magic) == 0 {
			return nil, fmt.Errorf("%s: empty input: %w", name, ErrFormat)
		}
		return nil, fmt.Errorf("%s: too short for a capture header: %w", name, ErrFormat)
	}
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		br = bufio.NewReaderSize(zr, 1<<16)
		if magic, err = br.Peek(4); err != nil {
			return nil, fmt.Errorf("%s: gzip content too short for a capture header: %w", name, ErrFormat)
		}
	}
	r := &Reader{name: name, defrag: ip4defrag.NewIPv4Defragmenter(), br: br}
	switch {
	case bytes.Equal(magic, []byte{0x0a, 0x0d, 0x0d, 0x0a}):
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return nil, fmt.Errorf("%s: pcapng: %w", name, err)
		}
		r.ng, r.format = ng, "pcapng"
	case isPcapMagic(magic):
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: pcap: %w", name, err)
		}
		r.pcap, r.format = pr, "pcap"
	default:
		return nil, fmt.Errorf("%s: magic %x: %w", name, magic, ErrFormat)
	}
	r.parse.init()
	return r, nil
}

func isPcapMagic(m []byte) bool {
	switch string(m) {
	case "\xa1\xb2\xc3\xd4", "\xd4\xc3\xb2\xa1", "\xa1\xb2\x3c\x4d", "\x4d\x3c\xb2\xa1":
		return true
	}
	return false
}

// Name is the name the reader was opened with.
func (r *Reader) Name() string { return r.name }

// Format is "pcap" or "pcapng".
func (r *Reader) Format() string { return r.format }

// Counters returns what the reader has counted so far.
func (r *Reader) Counters() Counters {
	c := r.counters
	c.LinkTypes = make(map[string]int, len(r.linkTypes))
	for _, l := range r.linkTypes {
		c.LinkTypes[LinkTypeName(l.lt)] += l.n
	}
	return c
}

// countLinkType counts a frame's link type. Captures have one or a few, so
// a short list beats a map on this per-frame path.
func (r *Reader) countLinkType(lt layers.LinkType) {
	for i := range r.linkTypes {
		if r.linkTypes[i].lt == lt {
			r.linkTypes[i].n++
			return
		}
	}
	r.linkTypes = append(r.linkTypes, linkTypeCount{lt, 1})
}

// LinkTypeName names a link type, including the ones gopacket does not.
func LinkTypeName(lt layers.LinkType) string {
	switch lt {
	case layers.LinkTypeIPv4:
		return "Raw IPv4"
	case layers.LinkTypeIPv6:
		return "Raw IPv6"
	case layers.LinkTypeLinuxSLL2:
		return "Linux SLL2"
	case 12:
		return "Raw IP"
	}
	return lt.String()
}

type linkTypeCount struct {
	lt layers.LinkType
	n  int
}

// Close closes the underlying file, if the reader opened one.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// SetFrameBase makes frame numbers continue after base, so several files read
// one after the other are numbered as one capture.
func (r *Reader) SetFrameBase(base int) { r.counters.Frames = base }

// Next returns the next UDP datagram. The returned Datagram and its Payload
// are reused by the following call. At the end of the capture Next returns
// io.EOF; a capture that ends in the middle of a record returns an error
// wrapping io.ErrUnexpectedEOF, after which the reader is finished.
func (r *Reader) Next() (*Datagram, error) {
	if r.held {
		r.held = false
		return &r.dg, nil
	}
	if r.err != nil {
		return nil, r.err
	}
	for {
		var (
			data []byte
			ci   gopacket.CaptureInfo
			err  error
			lt   layers.LinkType
		)
		if r.ng != nil {
			data, ci, err = r.ng.ZeroCopyReadPacketData()
			if err == nil {
				lt = r.ng.LinkType()
				if len(ci.AncillaryData) > 0 {
					if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
						lt = l
					}
				}
			}
		} else {
			data, ci, err = r.pcap.ZeroCopyReadPacketData()
			lt = r.pcap.LinkType()
		}
		if err != nil {
			r.err = r.wrapReadErr(err)
			return nil, r.err
		}
		r.counters.Frames++
		n := r.counters.Frames
		ok, perr := r.parse.frame(lt, data)
		if perr != nil {
			r.counters.BadFrames++
			continue
		}
		if !ok {
			r.counters.NonUDP++
			continue
		}
		r.countLinkType(lt)
		p := &r.parse
		if p.fragment {
			r.counters.Fragments++
			if !r.reassemble(ci.Timestamp) {
				continue
			}
			r.counters.Reassembled++
		}
		r.dg = Datagram{
			N:           n,
			TS:          ci.Timestamp,
			Src:         netip.AddrPortFrom(p.srcIP, uint16(p.udp.SrcPort)),
			Dst:         netip.AddrPortFrom(p.dstIP, uint16(p.udp.DstPort)),
			Payload:     p.udp.Payload,
			Length:      int(p.udp.Length) - 8,
			Reassembled: p.fragment,
		}
		if p.udp.Length == 0 { // jumbogram: trust what was captured
			r.dg.Length = len(p.udp.Payload)
		}
		if r.dg.Truncated() {
			r.counters.Truncated++
		}
		r.counters.Datagrams++
		return &r.dg, nil
	}
}

// Buffered reports whether the next datagram can be read from what is
// already buffered, without waiting for the input (a live stream).
func (r *Reader) Buffered() bool { return r.held || r.br.Buffered() > 0 }

// unread makes the next call to Next return the current datagram again.
func (r *Reader) unread() { r.held = true }

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

// reassemble feeds the current IPv4 fragment to the defragmenter and, when
// the datagram is complete, parses its UDP header. It reports whether a
// complete UDP datagram is now in r.parse.udp.
func (r *Reader) reassemble(ts time.Time) bool {
	p := &r.parse
	// The defragmenter keeps the fragments it is given, but our frame buffer
	// is reused: hand it a private copy.
	frag := p.ip4
	frag.Contents = append([]byte(nil), p.ip4.Contents...)
	frag.Payload = append([]byte(nil), p.ip4.Payload...)
	full, err := r.defrag.DefragIPv4WithTimestamp(&frag, ts)
	if ts.Sub(r.lastSweep) > 30*time.Second {
		r.defrag.DiscardOlderThan(ts.Add(-30 * time.Second))
		r.lastSweep = ts
	}
	if err != nil || full == nil || full.Protocol != layers.IPProtocolUDP {
		return false
	}
	if err := p.udp.DecodeFromBytes(full.Payload, gopacket.NilDecodeFeedback); err != nil {
		return false
	}
	return true
}
