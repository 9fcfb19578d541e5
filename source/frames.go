package source

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// FrameSource yields link-layer frames as they were captured: from a pcap
// or pcapng file, from a live interface, or from anything else that can
// give frames (a test fake). A Reader turns the frames of any FrameSource
// into UDP datagrams.
//
// Besides the two methods, a FrameSource may implement the optional
// interfaces RecordOffsetter, Progresser, KernelStatser, io.Closer and
// Buffered() bool (whether the next frame can be had without waiting); a
// Reader uses them when they are there.
type FrameSource interface {
	// ReadFrame returns the next frame: its bytes, valid until the next
	// call; its capture info (time stamp, captured and original lengths,
	// and in ci.InterfaceIndex the index of the interface it was captured
	// on, for Interface); and its link type. At the end of the frames it
	// returns io.EOF; any other error ends the source.
	ReadFrame() (data []byte, ci gopacket.CaptureInfo, lt layers.LinkType, err error)
	// Interface describes the capture interface of index i, as given in
	// ci.InterfaceIndex. An index the source does not know gives a zero
	// Interface.
	Interface(i int) Interface
}

// Interface describes one capture interface of a FrameSource: a pcapng
// interface description block, the single interface of a pcap file, or a
// network interface captured live.
type Interface struct {
	Name     string          // the interface's name; empty when the capture does not say
	LinkType layers.LinkType // the link type of its frames
	SnapLen  int             // the longest frame it captures; 0 when unknown or unlimited
}

// RecordOffsetter is implemented by frame sources that read a byte stream:
// RecordOffset is the byte offset, in that stream, of the record of the
// frame ReadFrame returned last.
type RecordOffsetter interface {
	RecordOffset() int64
}

// Progresser is implemented by frame sources that know how far they are
// through their input: done bytes of total read so far (total is -1 when
// the size is unknown, as on a pipe).
type Progresser interface {
	Progress() (done, total int64)
}

// KernelStatser is implemented by live frame sources: the number of frames
// the kernel received for the capture (after its filter) and the number it
// dropped because the capture did not read them in time.
type KernelStatser interface {
	KernelStats() (received, dropped uint64, err error)
}

// MaxRecord is the largest capture record a file source accepts, as
// tcpdump and libpcap (MAXIMUM_SNAPLEN): a record claiming more is taken as
// a damaged or hostile capture, and the input stops there without
// allocating the claimed size.
const MaxRecord = 262144

// recordBudget is how many bytes one ReadFrame of a file source may take
// from its input: a record of MaxRecord bytes, its options, the blocks
// before it and what the buffer reads ahead fit well within it. It bounds
// the memory a hostile capture can make the reader use, whatever the
// lengths it claims.
const recordBudget = MaxRecord + 1<<20

// errBudget ends a read that went past recordBudget.
var errBudget = errors.New("record or block too long")

// countingReader counts the bytes read through it, and refuses to read
// past limit when limit is set.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64 // 0: none
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.limit > 0 {
		if c.n >= c.limit {
			return 0, errBudget
		}
		if rest := c.limit - c.n; int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// fileSource reads the frames of a pcap or pcapng stream with pcapgo.
//
// Offsets: pcapgo's readers read from the bufio.Reader given to them (they
// keep a *bufio.Reader as it is), and countingReader below that buffer
// counts every byte it takes in. The position of pcapgo in the (inflated)
// stream is therefore counted - buffered. A pcap record starts where the
// previous one ended; a pcapng packet block starts after any other blocks
// (interface descriptions, statistics...) that precede it, which are
// walked in the buffer without consuming them.
type fileSource struct {
	name    string
	pcap    *pcapgo.Reader
	ng      *pcapgo.NgReader
	br      *bufio.Reader   // what pcapgo reads
	count   *countingReader // below br: the inflated stream
	raw     *countingReader // the bytes of the input itself (compressed or not)
	size    int64           // the input's size, -1 when unknown
	offset  int64           // of the last record returned
	start   int64           // where the last ReadFrame started
	order   binary.ByteOrder
	snaplen int // pcap header's snap length
}

func (f *fileSource) pos() int64 { return f.count.n - int64(f.br.Buffered()) }

// ReadFrame implements FrameSource.
func (f *fileSource) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	f.start = f.pos()
	f.count.limit = f.count.n + recordBudget
	if f.ng != nil {
		var err error
		if f.offset, err = f.ngPacketOffset(); err != nil {
			return nil, gopacket.CaptureInfo{}, 0, err
		}
		data, ci, err := f.ng.ZeroCopyReadPacketData()
		if err != nil {
			return nil, ci, 0, f.recordErr(err, ci)
		}
		lt := f.ng.LinkType()
		if len(ci.AncillaryData) > 0 {
			if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
				lt = l
			}
		}
		return data, ci, lt, nil
	}
	f.offset = f.pos()
	data, ci, err := f.pcap.ZeroCopyReadPacketData()
	if err != nil {
		return nil, ci, 0, f.recordErr(err, ci)
	}
	return data, ci, f.pcap.LinkType(), nil
}

// recordErr explains a record that claims more than MaxRecord bytes, and
// a record cut right after its header.
func (f *fileSource) recordErr(err error, ci gopacket.CaptureInfo) error {
	if err == io.EOF && f.pcap != nil && ci.CaptureLength > 0 {
		// pcapgo reads a record's data with io.ReadFull: a record header
		// with nothing after it is a capture cut short, not its end.
		return io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		return err
	}
	if uint(ci.CaptureLength) > MaxRecord {
		return tooLong(f.offset, uint64(uint32(ci.CaptureLength)))
	}
	if f.count.limit > 0 && f.count.n >= f.count.limit {
		return fmt.Errorf("at byte %d: more than %d bytes without a whole record (damaged or hostile capture): %w", f.start, recordBudget, errBudget)
	}
	return err
}

// ErrRecordTooLong is wrapped by the error that stops a capture at a record
// claiming more than MaxRecord bytes.
var ErrRecordTooLong = errors.New("capture record too long")

func tooLong(offset int64, n uint64) error {
	return fmt.Errorf("record at byte %d claims %d bytes, more than the %d a capture record may hold (damaged or hostile capture): %w",
		offset, n, MaxRecord, ErrRecordTooLong)
}

// ngPacketOffset finds where the next packet block starts, walking the
// non-packet blocks that come first in what is buffered, and refuses a
// packet block that claims more than MaxRecord bytes. The offset is -1
// when the blocks before the packet do not fit in the buffer or cannot be
// walked (the reader then meets whatever is wrong with them).
func (f *fileSource) ngPacketOffset() (int64, error) {
	at := 0
	for i := 0; i < 64 && at+24 <= f.br.Size(); i++ {
		b, _ := f.br.Peek(at + 24)
		if len(b) < at+12 {
			return f.pos() + int64(at), nil // the end, or a cut block: the reader says which
		}
		b = b[at:]
		if binary.LittleEndian.Uint32(b) == 0x0a0d0d0a { // section header: its byte-order magic sets the order
			switch binary.LittleEndian.Uint32(b[8:]) {
			case 0x1a2b3c4d:
				f.order = binary.LittleEndian
			case 0x4d3c2b1a:
				f.order = binary.BigEndian
			default:
				return -1, nil
			}
		}
		if f.order == nil {
			return -1, nil
		}
		off := f.pos() + int64(at)
		switch f.order.Uint32(b) {
		case 3: // simple packet: the original length, cut to the snap length
			n := uint64(f.order.Uint32(b[8:]))
			if snap := uint64(f.Interface(0).SnapLen); snap > 0 && snap < n {
				n = snap
			}
			if n > MaxRecord {
				return off, tooLong(off, n)
			}
			return off, nil
		case 2, 6: // packet, enhanced packet: the captured length
			if len(b) < 24 {
				return off, nil
			}
			if n := f.order.Uint32(b[20:]); n > MaxRecord {
				return off, tooLong(off, uint64(n))
			}
			return off, nil
		}
		n := int(f.order.Uint32(b[4:]))
		if n < 12 || at+n > f.br.Size() {
			return -1, nil
		}
		at += n
	}
	return -1, nil
}

// RecordOffset implements RecordOffsetter: the offset of the last record
// in the capture stream (after inflating a gzip-compressed input); -1 when
// it could not be found.
func (f *fileSource) RecordOffset() int64 { return f.offset }

// Progress implements Progresser: bytes of the input read (compressed
// bytes for a compressed input) and the input's size (-1 when unknown).
func (f *fileSource) Progress() (int64, int64) {
	return f.raw.n, f.size
}

// Interface implements FrameSource.
func (f *fileSource) Interface(i int) Interface {
	if f.ng != nil {
		intf, err := f.ng.Interface(i)
		if err != nil {
			return Interface{}
		}
		return Interface{Name: intf.Name, LinkType: intf.LinkType, SnapLen: int(intf.SnapLength)}
	}
	if i != 0 || f.pcap == nil {
		return Interface{}
	}
	return Interface{LinkType: f.pcap.LinkType(), SnapLen: f.snaplen}
}

// Buffered reports whether bytes of the next record are already buffered.
func (f *fileSource) Buffered() bool { return f.br.Buffered() > 0 }

// digits is how many fraction digits of a second the time stamps of a
// capture's interface have: 6 for microseconds, 9 for nanoseconds.
func (f *fileSource) digits(iface int) int {
	if f.pcap != nil {
		return resolutionDigits(f.pcap.Resolution())
	}
	if in, err := f.ng.Interface(iface); err == nil {
		return resolutionDigits(in.Resolution())
	}
	return 6
}

func resolutionDigits(r gopacket.TimestampResolution) int {
	if r.Base == 10 && r.Exponent < 0 {
		return min(-r.Exponent, 9)
	}
	return 9
}

// digitser is a file source that knows the precision of its time stamps:
// digits is how many fraction digits of a second interface iface has.
type digitser interface{ digits(iface int) int }

// digitsOf is how many fraction digits of a second the time stamps of
// interface iface have (at least 6; 9 for a live capture).
func (r *Reader) digitsOf(iface int) int {
	if r.digits == nil {
		return 9
	}
	if iface < 0 || iface >= 1024 {
		return 6
	}
	for len(r.ifDigits) <= iface {
		r.ifDigits = append(r.ifDigits, 0)
	}
	if r.ifDigits[iface] == 0 {
		r.ifDigits[iface] = max(r.digits.digits(iface), 6)
	}
	return r.ifDigits[iface]
}
