//go:build unix

package source

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// mappedPcap is a FrameSource over a pcap file mapped into memory: the
// fastest way through a large capture, with no read calls and no copy by
// the kernel. It gives the same frames, time stamps and errors as pcapgo's
// reader over the same bytes.
//
// Its frames are slices of the mapping. Should the file shrink while it is
// read, touching its lost pages faults: OpenMapped's Reader must be used
// through Prefetch, which copies every frame in a goroutine that turns such
// a fault into an error. The bytes lost within the last page read as zeros
// instead: the records there are checked against the file's size.
type mappedPcap struct {
	pcapHeader
	file     *os.File
	data     []byte
	pos      int   // where the next record starts
	offset   int64 // where the last record returned started
	lastPage int   // where the file's last page starts: records there are checked against the file's size
	size     int64
	released int          // bytes from the start given back to the system (see release)
	done     atomic.Int64 // bytes read, as of the last 64 KiB step (Progress runs on other goroutines)
}

// minMapped is the smallest file worth mapping; smaller ones are read.
var minMapped int64 = 1 << 20

// OpenMapped opens a pcap file for reading through a memory mapping, when
// it is an uncompressed pcap file on a system that maps files; ok is false
// otherwise (and f is left as it was), for the caller to read it as a
// stream. The Reader owns f once ok: Close unmaps and closes it. Use the
// Reader through Prefetch (see mappedPcap).
func OpenMapped(f *os.File, name string) (r *Reader, ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < max(minMapped, 24) || int64(int(st.Size())) != st.Size() {
		return nil, false
	}
	var hdr [24]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, false
	}
	if _, ok := parsePcapHeader(hdr[:]); !ok {
		return nil, false // pcapng, gzip or not a capture: the stream reader says which
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL) // a hint: read ahead, and drop pages read
	r, ok = newMappedReader(data, name)
	if !ok { // the file changed between the two reads of its header
		unix.Munmap(data)
		return nil, false
	}
	r.src.(*mappedPcap).file = f
	return r, true
}

// newMappedReader reads the pcap capture in data as a mapped file.
func newMappedReader(data []byte, name string) (*Reader, bool) {
	h, ok := parsePcapHeader(data)
	if !ok {
		return nil, false
	}
	m := &mappedPcap{pcapHeader: h, data: data, pos: 24, size: int64(len(data))}
	m.lastPage = len(data) / os.Getpagesize() * os.Getpagesize()
	r := NewFrameReader(m, name)
	r.format, r.digits = "pcap", m
	return r, true
}

// ReadFrame implements FrameSource, as pcapgo's Reader over the same bytes
// would (with its snap length capped at MaxRecord, as NewReader does).
func (m *mappedPcap) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	var ci gopacket.CaptureInfo
	rest := len(m.data) - m.pos
	switch {
	case rest == 0:
		if err := m.unchanged(); err != nil {
			return nil, ci, 0, err
		}
		return nil, ci, 0, io.EOF
	case rest < 16:
		m.pos = len(m.data)
		return nil, ci, 0, io.ErrUnexpectedEOF
	}
	h := m.data[m.pos : m.pos+16]
	ci.Timestamp = time.Unix(int64(m.order.Uint32(h[0:4])), int64(m.order.Uint32(h[4:8])*m.nsf)).UTC()
	caplen, length := m.order.Uint32(h[8:12]), m.order.Uint32(h[12:16])
	ci.CaptureLength, ci.Length = int(caplen), int(length)
	m.offset = int64(m.pos)
	if caplen > MaxRecord { // unsigned: on 32 bits a huge length is no negative int
		m.pos = len(m.data)
		return nil, ci, 0, tooLong(m.offset, uint64(caplen))
	}
	if caplen > length {
		m.pos = len(m.data)
		return nil, ci, 0, fmt.Errorf("capture length exceeds original packet length: %d > %d", caplen, length)
	}
	start := m.pos + 16
	switch {
	case rest-16 >= ci.CaptureLength:
	default: // a record cut short, if only after its header
		m.pos = len(m.data)
		return nil, ci, 0, io.ErrUnexpectedEOF
	}
	if start+ci.CaptureLength > m.lastPage {
		// The bytes of a file cut within its last page read as zeros,
		// without a fault: the file's size tells.
		if err := m.unchanged(); err != nil {
			m.pos = len(m.data)
			return nil, ci, 0, err
		}
	}
	m.pos = start + ci.CaptureLength
	if m.pos-int(m.done.Load()) >= 1<<16 || m.pos == len(m.data) {
		m.done.Store(int64(m.pos))
	}
	if m.pos-m.released >= releaseStep+releaseKeep {
		m.release()
	}
	return m.data[start:m.pos:m.pos], ci, m.lt, nil
}

// Pages read are given back as the reading goes on, so that the capture's
// pages do not pile up in the process (as resident memory) however large
// the file: every releaseStep bytes, all but the last releaseKeep bytes
// read (more than a record, which stays valid until the next ReadFrame).
const (
	releaseStep = 4 << 20
	releaseKeep = 1 << 20
)

// release drops the pages of the mapping before the last releaseKeep bytes
// read. The file's pages stay in the system's cache; touching them again
// would read them again.
func (m *mappedPcap) release() {
	if m.file == nil {
		return // bytes in memory (tests), not a mapping
	}
	page := os.Getpagesize()
	end := (m.pos - releaseKeep) / page * page
	if end <= m.released {
		return
	}
	if err := unix.Madvise(m.data[m.released:end], unix.MADV_DONTNEED); err == nil {
		m.released = end
	}
}

// unchanged checks that the file is still as long as when it was mapped.
func (m *mappedPcap) unchanged() error {
	if m.file == nil {
		return nil // bytes in memory (tests)
	}
	st, err := m.file.Stat()
	if err != nil {
		return err
	}
	if st.Size() < m.size {
		return fmt.Errorf("%w: it was %d bytes and is now %d", ErrChanged, m.size, st.Size())
	}
	return nil
}

// Interface implements FrameSource: a pcap file has one interface.
func (m *mappedPcap) Interface(i int) Interface {
	if i != 0 {
		return Interface{}
	}
	return Interface{LinkType: m.lt, SnapLen: m.snaplen}
}

// RecordOffset implements RecordOffsetter.
func (m *mappedPcap) RecordOffset() int64 { return m.offset }

// Progress implements Progresser.
func (m *mappedPcap) Progress() (int64, int64) { return m.done.Load(), m.size }

// Buffered reports whether a record is left: a mapped file never waits.
func (m *mappedPcap) Buffered() bool { return m.pos < len(m.data) }

func (m *mappedPcap) digits(int) int {
	if m.nsf == 1 {
		return 9
	}
	return 6
}

// Close unmaps the file and closes it.
func (m *mappedPcap) Close() error {
	if m.file == nil {
		return nil // bytes in memory (tests)
	}
	err := unix.Munmap(m.data)
	m.data = nil
	if cerr := m.file.Close(); err == nil {
		err = cerr
	}
	m.file = nil
	return err
}

// holds reports whether address a is in the mapping.
func (m *mappedPcap) holds(a uintptr) bool {
	if len(m.data) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(&m.data[0]))
	return a >= start && a < start+uintptr(len(m.data))
}
