package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ErrChanged is wrapped by the error that ends an input whose file changed
// under the reader (it was truncated while it was read).
var ErrChanged = errors.New("capture file changed while it was read")

// pcapFile is a FrameSource over a pcap file of a known size, read by
// large positioned reads into a window of its own: the fastest way through
// a large capture. Its frames are slices of the window, valid until the
// next ReadFrame; the window is refilled in steps of window bytes. It gives
// the same frames, time stamps and errors as pcapgo's reader over the same
// bytes, and a file cut short while it is read ends with an error wrapping
// ErrChanged.
//
// A memory mapping was measured against it and lost (scripts/readcopy): on
// the 2-core virtual build machine, copying the frames of 172 MB out of a
// mapped file's pages took 131–155 ms, reading them into the window and
// copying them out of it 35–42 ms; and a file cut while mapped faults.
type pcapFile struct {
	pcapHeader
	ra     io.ReaderAt
	file   *os.File // ra when it is a file: Close closes it and unchanged stats it
	size   int64    // the file's size when opened: what is read
	buf    []byte   // the window: bytes of the file from base on
	base   int64    // the file offset of buf[0]
	pos    int      // where the next record starts in buf
	window int      // how many bytes a refill reads at least
	offset int64    // where the last record returned started
	done   atomic.Int64
}

// minPcapFile is the smallest file OpenPcapFile takes; smaller ones are
// read as streams (the window's memory is not worth it).
var minPcapFile int64 = 1 << 20

// pcapWindow is how many bytes a refill of a pcapFile's window reads: a
// megabyte takes a few hundred records in one read call.
const pcapWindow = 1 << 20

// OpenPcapFile opens an uncompressed pcap file of a megabyte or more for
// reading by positioned reads; ok is false otherwise (and f is left as it
// was), for the caller to read it as a stream. The Reader owns f once ok:
// Close closes it.
func OpenPcapFile(f *os.File, name string) (r *Reader, ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < max(minPcapFile, 24) {
		return nil, false
	}
	var hdr [24]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, false
	}
	if _, ok := parsePcapHeader(hdr[:]); !ok {
		return nil, false // pcapng, gzip or not a capture: the stream reader says which
	}
	r, ok = newPcapAt(f, st.Size(), name, pcapWindow)
	if !ok {
		return nil, false
	}
	r.src.(*pcapFile).file = f
	return r, true
}

// newPcapAt reads the pcap capture of size bytes in ra, refilling its
// window window bytes at a time.
func newPcapAt(ra io.ReaderAt, size int64, name string, window int) (*Reader, bool) {
	var hdr [24]byte
	if n, _ := ra.ReadAt(hdr[:], 0); n < len(hdr) {
		return nil, false
	}
	h, ok := parsePcapHeader(hdr[:])
	if !ok {
		return nil, false
	}
	p := &pcapFile{pcapHeader: h, ra: ra, size: size, base: 24, window: window}
	p.done.Store(24)
	r := NewFrameReader(p, name)
	r.format, r.digits = "pcap", p
	return r, true
}

// fill makes the window hold at least n bytes from pos on, or every byte
// left in the file when fewer are; it moves what is left to the start of
// the window and reads at least window bytes more.
func (p *pcapFile) fill(n int) error {
	have := len(p.buf) - p.pos
	left := p.size - p.base - int64(p.pos) // bytes of the file from pos on
	if int64(have) >= min(int64(n), left) {
		return nil
	}
	want := int(min(int64(max(n, p.window)), left))
	if cap(p.buf) < want {
		// The window grows once, to what a record can need: a refill's
		// bytes, or a record of MaxRecord bytes and its header.
		nb := make([]byte, have, max(want, p.window+MaxRecord+16))
		copy(nb, p.buf[p.pos:])
		p.buf = nb
	} else {
		p.buf = p.buf[:copy(p.buf, p.buf[p.pos:])]
	}
	p.base += int64(p.pos)
	p.pos = 0
	got, err := p.ra.ReadAt(p.buf[have:want], p.base+int64(have))
	p.buf = p.buf[:have+got]
	// A read cut short (the file was cut) still gives the records it
	// holds: the input ends at the first one it does not hold whole.
	if int64(have+got) < min(int64(n), left) {
		if cerr := p.unchanged(); cerr != nil {
			return cerr
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading at byte %d: %w", p.base+int64(have+got), err)
	}
	return nil
}

// ReadFrame implements FrameSource, as pcapgo's Reader over the same bytes
// would (with its snap length capped at MaxRecord, as NewReader does).
func (p *pcapFile) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	var ci gopacket.CaptureInfo
	at := p.base + int64(p.pos)
	rest := p.size - at
	switch {
	case rest == 0:
		if err := p.unchanged(); err != nil {
			return nil, ci, 0, err
		}
		return nil, ci, 0, io.EOF
	case rest < 16:
		p.end()
		return nil, ci, 0, io.ErrUnexpectedEOF
	}
	if err := p.fill(16); err != nil {
		p.end()
		return nil, ci, 0, err
	}
	h := p.buf[p.pos : p.pos+16]
	ci.Timestamp = time.Unix(int64(p.order.Uint32(h[0:4])), int64(p.order.Uint32(h[4:8])*p.nsf)).UTC()
	caplen, length := p.order.Uint32(h[8:12]), p.order.Uint32(h[12:16])
	ci.CaptureLength, ci.Length = int(caplen), int(length)
	p.offset = at
	if caplen > MaxRecord { // unsigned: on 32 bits a huge length is no negative int
		p.end()
		return nil, ci, 0, tooLong(p.offset, uint64(caplen))
	}
	if caplen > length {
		p.end()
		return nil, ci, 0, fmt.Errorf("capture length exceeds original packet length: %d > %d", caplen, length)
	}
	if rest-16 < int64(ci.CaptureLength) { // a record cut short, if only after its header
		p.end()
		return nil, ci, 0, io.ErrUnexpectedEOF
	}
	if err := p.fill(16 + ci.CaptureLength); err != nil {
		p.end()
		return nil, ci, 0, err
	}
	start := p.pos + 16
	p.pos = start + ci.CaptureLength
	if done := p.base + int64(p.pos); done-p.done.Load() >= 1<<16 || done == p.size {
		p.done.Store(done)
	}
	return p.buf[start:p.pos:p.pos], ci, p.lt, nil
}

// end makes the reader's next call find the end of the file: an error
// ends the input.
func (p *pcapFile) end() {
	p.base, p.pos, p.buf = p.size, 0, p.buf[:0]
}

// unchanged checks that the file is still as long as when it was opened.
func (p *pcapFile) unchanged() error {
	if p.file == nil {
		return nil // bytes in memory (tests)
	}
	st, err := p.file.Stat()
	if err != nil {
		return err
	}
	if st.Size() < p.size {
		return fmt.Errorf("%w: it was %d bytes and is now %d", ErrChanged, p.size, st.Size())
	}
	return nil
}

// Interface implements FrameSource: a pcap file has one interface.
func (p *pcapFile) Interface(i int) Interface {
	if i != 0 {
		return Interface{}
	}
	return Interface{LinkType: p.lt, SnapLen: p.snaplen}
}

// RecordOffset implements RecordOffsetter.
func (p *pcapFile) RecordOffset() int64 { return p.offset }

// Progress implements Progresser (done is as of the last 64 KiB step, as
// Progress runs on other goroutines).
func (p *pcapFile) Progress() (int64, int64) { return p.done.Load(), p.size }

// Buffered reports whether a record is left: a file never waits.
func (p *pcapFile) Buffered() bool { return p.base+int64(p.pos) < p.size }

func (p *pcapFile) digits(int) int {
	if p.nsf == 1 {
		return 9
	}
	return 6
}

// Close closes the file.
func (p *pcapFile) Close() error {
	if p.file == nil {
		return nil // bytes in memory (tests)
	}
	return p.file.Close()
}
