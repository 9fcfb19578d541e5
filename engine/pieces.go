package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unsafe"

	"github.com/pmdump/pmdump/source"
)

// A piece reference (reassemble.Piece.Ref) says where an stdf piece's
// bytes are in a pcap capture file, so that the rebuild behind the fast
// pass reads them back from the file instead of the backlog keeping them:
// the input's number among the engine's piece files in the top bits, the
// piece's size in the middle ones, the byte offset of its first byte in
// the file in the low ones. 0 is no reference.
const (
	refOffsetBits = 40 // 1 TiB
	refSizeBits   = 18 // 256 KiB, more than the largest dif
	refInputShift = refOffsetBits + refSizeBits
	maxRefInputs  = 1<<(63-refInputShift) - 1
)

func mkPieceRef(input int, off int64, size int) int64 {
	return int64(input)<<refInputShift | int64(size)<<refOffsetBits | off
}

func splitPieceRef(ref int64) (input int, off int64, size int) {
	return int(ref >> refInputShift), ref & (1<<refOffsetBits - 1), int(ref >> refOffsetBits & (1<<refSizeBits - 1))
}

// pcapRecordHeader is the size of a pcap record's header: the frame starts
// right after it.
const pcapRecordHeader = 16

// pieceRef returns the reference of an stdf piece's data, a slice of
// datagram d's payload, in pcap input number input; 0 when d's frame is not
// where its record says (a datagram rebuilt from fragments) or the piece
// cannot be referred to.
func pieceRef(input int, d *source.Datagram, data []byte) int64 {
	if d.Reassembled || d.Offset < 0 || len(data) == 0 || len(data) >= 1<<refSizeBits {
		return 0
	}
	at, ok := within(d.Frame, data)
	if !ok {
		return 0
	}
	off := d.Offset + pcapRecordHeader + int64(at)
	if off >= 1<<refOffsetBits {
		return 0
	}
	return mkPieceRef(input, off, len(data))
}

// within returns where inner starts in outer, false when it is not a part
// of it.
func within(outer, inner []byte) (int, bool) {
	if len(outer) == 0 || len(inner) == 0 {
		return 0, false
	}
	o, i := uintptr(unsafe.Pointer(unsafe.SliceData(outer))), uintptr(unsafe.Pointer(unsafe.SliceData(inner)))
	if i < o || i+uintptr(len(inner)) > o+uintptr(len(outer)) {
		return 0, false
	}
	return int(i - o), true
}

// pieceFiles are the pcap capture files the rebuild reads pieces back
// from, by reference. The fast pass adds them, the rebuild reads them.
type pieceFiles struct {
	mu    sync.Mutex
	files []*os.File // by input number - 1
	win   []byte     // bytes of file winIn from winAt: the pieces of the difs that follow are mostly there
	winIn int
	winAt int64
}

// pieceWindow is how much of a file the rebuild reads at once: the pieces
// of the difs that end one after the other lie close together.
const pieceWindow = 1 << 20

// add opens capture file path, which must be the file same describes, and
// returns its input number for piece references; 0 when it cannot be.
func (p *pieceFiles) add(path string, same os.FileInfo) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.files) >= maxRefInputs || same == nil {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	if st, err := f.Stat(); err != nil || !os.SameFile(st, same) {
		f.Close()
		return 0
	}
	p.files = append(p.files, f)
	return len(p.files)
}

// read returns the bytes of the pieces refs refers to, one after the
// other, in a buffer of get's (of at least the size asked).
func (p *pieceFiles) read(refs []int64, get func(n int) []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := 0
	for _, r := range refs {
		_, _, n := splitPieceRef(r)
		total += n
	}
	out := get(total)[:0]
	for _, r := range refs {
		in, off, n := splitPieceRef(r)
		b, err := p.bytes(in, off, n)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// bytes returns n bytes of input in from offset off, from the window.
func (p *pieceFiles) bytes(in int, off int64, n int) ([]byte, error) {
	if in < 1 || in > len(p.files) || p.files[in-1] == nil {
		return nil, fmt.Errorf("piece of input %d: no such file", in)
	}
	if in != p.winIn || off < p.winAt || off+int64(n) > p.winAt+int64(len(p.win)) {
		// The next difs' pieces may start a little before this one.
		at := max(off-pieceWindow/8, 0)
		size := max(pieceWindow, int(off-at)+n)
		if cap(p.win) < size {
			p.win = make([]byte, size)
		}
		p.win = p.win[:size]
		got, err := p.files[in-1].ReadAt(p.win, at)
		if err != nil && !errors.Is(err, io.EOF) {
			p.win, p.winIn = p.win[:0], 0
			return nil, fmt.Errorf("reading a piece again: %w", err)
		}
		p.win, p.winIn, p.winAt = p.win[:got], in, at
		if off+int64(n) > at+int64(got) {
			return nil, fmt.Errorf("reading a piece again: the capture file ends before byte %d", off+int64(n))
		}
	}
	return p.win[off-p.winAt : off-p.winAt+int64(n)], nil
}

// close closes the files.
func (p *pieceFiles) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.files {
		f.Close()
	}
	p.files, p.win = nil, nil
}
