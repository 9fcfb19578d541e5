// Package source is the capture layer: it reads captured frames and yields
// the UDP datagrams they carry, one at a time, with constant memory; and it
// writes frames as they were captured.
//
// Frames come from any FrameSource: pcap and pcapng files (plain or
// gzip-compressed, from a file or a stream; NewReader, Open), a live
// capture on Linux network interfaces (OpenLive: AF_PACKET with a
// TPACKET_V3 ring and a kernel filter, no libpcap), or anything else
// (NewFrameReader). A Reader understands the link types a Purple Martians
// LAN capture is likely to have (Ethernet, Linux cooked SLL and SLL2, BSD
// loopback/null, raw IPv4/IPv6), 802.1Q VLAN tags, IPv4 and IPv6, and it
// reassembles fragmented IPv4 datagrams, within bounds. Everything else is
// counted and skipped; hostile captures (records claiming gigabytes, floods
// of fragments) cost little and are reported.
//
// A large pcap file is read by large positioned reads (OpenPcapFile), and
// any Reader can read ahead on a core of its own (Prefetch); any record
// of an uncompressed pcap or pcapng file read again by its offset
// (Rereader).
//
// CaptureWriter writes frames to pcap or pcapng as they were captured, and
// Tee writes every frame a source gives while it is read.
package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"time"

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

	// The frame as captured, for writing it out again: its bytes (the
	// whole link-layer frame, valid until the next call to Next; for a
	// datagram rebuilt from IPv4 fragments, the frame it would have been
	// unfragmented: the link and IPv4 headers of the fragment that
	// completed it, without fragmentation, and the whole UDP datagram), its
	// link type, its length on the wire, and the interface it was captured
	// on (an index for FrameSource.Interface, and its name when known).
	Frame         []byte
	LinkType      layers.LinkType
	WireLength    int
	Interface     int
	InterfaceName string
	// Offset is the byte offset of the frame's record in the capture
	// stream (the file for a plain capture file; the inflated stream for a
	// gzip-compressed one, see Reader.Compressed); -1 when the source has
	// no offsets (a live capture) or could not find it.
	Offset int64
	// Digits is how many fraction digits of a second the capture's time
	// stamps have on the frame's interface: 6 (microseconds) or 9
	// (nanoseconds).
	Digits int

	payloadAt int // where Payload starts in Frame; -1 when it is not in Frame
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
	// FragmentsDropped counts IPv4 fragments given up: of datagrams never
	// completed within the reassembly limits (time, count, bytes), or
	// refused by the reassembler (overlapping, oversized).
	FragmentsDropped int
	// Unsupported counts frames of a link type the reader cannot parse
	// (they are in NonUDP too); Warnings names those link types.
	Unsupported int
	// LinkTypes counts every frame by the name of its link type.
	LinkTypes map[string]int
	// Live captures only: the frames the kernel received for the capture
	// (after its filter) and the frames it dropped because they were not
	// read in time. Both are 0 for files.
	KernelReceived, KernelDropped uint64
	unsupported                   []string
}

// Warnings are sentences about what the reader could not read, for a front
// end to print: link types it does not support, fragments it gave up,
// frames the kernel dropped. None for a clean capture.
func (c Counters) Warnings() []string {
	var w []string
	for _, name := range c.unsupported {
		w = append(w, fmt.Sprintf("%d frames of link type %s, which pmdump cannot read, were skipped", c.LinkTypes[name], name))
	}
	if c.FragmentsDropped > 0 {
		w = append(w, fmt.Sprintf("%d IPv4 fragments of datagrams that could not be reassembled were dropped", c.FragmentsDropped))
	}
	if c.KernelDropped > 0 {
		w = append(w, fmt.Sprintf("the kernel dropped %d of %d frames: pmdump did not read them in time (a bigger --ring may help)", c.KernelDropped, c.KernelReceived))
	}
	return w
}

// Add adds the counts of o to c, as for several inputs read as one
// capture.
func (c *Counters) Add(o Counters) {
	c.Frames += o.Frames
	c.NonUDP += o.NonUDP
	c.Fragments += o.Fragments
	c.Reassembled += o.Reassembled
	c.BadFrames += o.BadFrames
	c.Truncated += o.Truncated
	c.Datagrams += o.Datagrams
	c.FragmentsDropped += o.FragmentsDropped
	c.Unsupported += o.Unsupported
	c.KernelReceived += o.KernelReceived
	c.KernelDropped += o.KernelDropped
	if len(o.LinkTypes) > 0 && c.LinkTypes == nil {
		c.LinkTypes = map[string]int{}
	}
	for k, v := range o.LinkTypes {
		c.LinkTypes[k] += v
	}
	for _, u := range o.unsupported {
		if !slices.Contains(c.unsupported, u) {
			c.unsupported = append(c.unsupported, u)
		}
	}
}

// Reader yields the UDP datagrams of one capture file or stream, or of any
// FrameSource.
type Reader struct {
	name       string
	closer     io.Closer
	src        FrameSource
	file       *fileSource // when src reads a file or stream
	digits     digitser    // what src says of its time stamps' precision, when it does
	offsets    RecordOffsetter
	buffered   interface{ Buffered() bool }
	format     string
	compressed bool
	counters   Counters
	dg         Datagram
	parse      linkParser
	frags      fragments
	err        error
	linkTypes  []linkTypeCount
	ifNames    []string // interface names by index, looked up once
	ifDigits   []int    // time stamp digits by interface index, looked up once
	rebuilt    []byte   // the frame of a reassembled datagram
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
	st, statErr := f.Stat()
	if statErr == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a capture file", name)
	}
	r, err := NewReader(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	if statErr == nil && st.Mode().IsRegular() {
		r.file.size = st.Size()
	}
	r.closer = f
	return r, nil
}

// NewReader reads a capture from a stream. The stream may be gzip-compressed.
func NewReader(in io.Reader, name string) (*Reader, error) {
	raw := &countingReader{r: in}
	br := bufio.NewReaderSize(raw, 1<<16)
	magic, err := br.Peek(4)
	if err != nil {
		if len(magic) == 0 {
			return nil, fmt.Errorf("%s: empty input: %w", name, ErrFormat)
		}
		return nil, fmt.Errorf("%s: too short for a capture header: %w", name, ErrFormat)
	}
	f := &fileSource{name: name, raw: raw, count: raw, br: br, size: -1}
	compressed := false
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		f.count = &countingReader{r: zr}
		f.br = bufio.NewReaderSize(f.count, 1<<16)
		if magic, err = f.br.Peek(4); err != nil {
			return nil, fmt.Errorf("%s: gzip content too short for a capture header: %w", name, ErrFormat)
		}
		compressed = true
	}
	var format string
	switch {
	case bytes.Equal(magic, []byte{0x0a, 0x0d, 0x0d, 0x0a}):
		f.ngPacketOffset() // learns the byte order of the first section
		ng, err := pcapgo.NewNgReader(f.br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return nil, fmt.Errorf("%s: pcapng: %w", name, err)
		}
		f.ng, format = ng, "pcapng"
	case isPcapMagic(magic):
		pr, err := pcapgo.NewReader(f.br)
		if err != nil {
			return nil, fmt.Errorf("%s: pcap: %w", name, err)
		}
		f.snaplen = int(pr.Snaplen())
		if pr.Snaplen() > MaxRecord {
			pr.SetSnaplen(MaxRecord) // pcapgo then refuses records over MaxRecord
		}
		f.pcap, format = pr, "pcap"
	default:
		return nil, fmt.Errorf("%s: magic %x: %w", name, magic, ErrFormat)
	}
	r := NewFrameReader(f, name)
	r.file, r.format, r.compressed, r.digits = f, format, compressed, f
	return r, nil
}

// NewFrameReader reads the UDP datagrams of the frames of any frame source
// (a live capture, a test fake). Close closes src when it is an io.Closer.
func NewFrameReader(src FrameSource, name string) *Reader {
	r := &Reader{name: name, src: src, format: "frames"}
	r.offsets, _ = src.(RecordOffsetter)
	r.buffered, _ = src.(interface{ Buffered() bool })
	r.closer, _ = src.(io.Closer)
	r.frags.init()
	r.parse.init()
	return r
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

// Format is "pcap" or "pcapng" for a capture file or stream, "frames" for
// another frame source.
func (r *Reader) Format() string { return r.format }

// Compressed reports whether the capture was gzip-compressed: record
// offsets are then offsets in the inflated stream, not in the file.
func (r *Reader) Compressed() bool { return r.compressed }

// Source is the frame source the reader reads.
func (r *Reader) Source() FrameSource { return r.src }

// Progress reports how many bytes of its input the reader has read and
// the input's total size (-1 when unknown: a stream, a live capture).
func (r *Reader) Progress() (done, total int64) {
	if p, ok := r.src.(Progresser); ok {
		return p.Progress()
	}
	return 0, -1
}

// Counters returns what the reader has counted so far.
func (r *Reader) Counters() Counters {
	c := r.counters
	c.LinkTypes = make(map[string]int, len(r.linkTypes))
	c.unsupported = nil
	for _, l := range r.linkTypes {
		name := LinkTypeName(l.lt)
		c.LinkTypes[name] += l.n
		if _, ok := firstLayer(l.lt, nil); !ok && !slices.Contains(c.unsupported, name) {
			c.unsupported = append(c.unsupported, name)
		}
	}
	if k, ok := r.src.(KernelStatser); ok {
		if rcv, drop, err := k.KernelStats(); err == nil {
			c.KernelReceived, c.KernelDropped = rcv, drop
		}
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

// Close closes the underlying file or frame source, if the reader opened
// one or was given one that can be closed.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// SetFrameBase makes frame numbers continue after base, so several files read
// one after the other are numbered as one capture.
func (r *Reader) SetFrameBase(base int) { r.counters.Frames = base }

// interfaceName names interface i of the source, looked up once.
func (r *Reader) interfaceName(i int) string {
	if i < 0 || i > 1<<16 {
		return ""
	}
	for len(r.ifNames) <= i {
		r.ifNames = append(r.ifNames, r.src.Interface(len(r.ifNames)).Name)
	}
	return r.ifNames[i]
}
