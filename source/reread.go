package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"

	"github.com/gopacket/gopacket/layers"
)

// Rereader reads single records of a capture file again, by the offsets
// the Reader gave them (Datagram.Offset): a viewer can decode any packet
// again without keeping its bytes. It reads uncompressed pcap and pcapng
// files; its Datagram gives the addresses and payload of the record's UDP
// datagram. It is safe for concurrent use.
type Rereader struct {
	mu     sync.Mutex
	f      *os.File
	name   string
	size   int64
	pcapng bool
	order  binary.ByteOrder // pcap's; pcapng's blocks are read in their own order
	win    []byte           // bytes of the file from winAt: records read in a row are read once
	winAt  int64
	last   int64 // the offset read last, -1 before any
	parse  linkParser
}

// rereadWindow is how much of the file the Rereader reads at once in a
// scan; lookupRead how much for a record looked up on its own (most
// records fit).
const (
	rereadWindow = 1 << 20
	lookupRead   = 4096
	// scanGap is how far past the last record read the next may start
	// and still be taken for a scan (packets of other traffic between).
	scanGap = 64 << 10
)

// OpenRereader opens the capture file name, which r reads, to read its
// records again; same is the file r reads, and the one opened must be it.
// ok is false when r's capture cannot be read again by offset (a stream, a
// compressed file, a live capture) or the file is no longer the one r
// reads.
func OpenRereader(name string, r *Reader, same os.FileInfo) (*Rereader, bool) {
	if r.Compressed() || (r.Format() != "pcap" && r.Format() != "pcapng") || name == "-" {
		return nil, false
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || same == nil || !os.SameFile(st, same) {
		f.Close()
		return nil, false
	}
	x := &Rereader{f: f, name: name, size: st.Size(), pcapng: r.Format() == "pcapng", last: -1}
	if !x.pcapng {
		var hdr [24]byte
		if _, err := f.ReadAt(hdr[:], 0); err != nil {
			f.Close()
			return nil, false
		}
		h, ok := parsePcapHeader(hdr[:])
		if !ok {
			f.Close()
			return nil, false
		}
		x.order = h.order
	}
	x.parse.init()
	return x, true
}

// ErrReread is wrapped by the errors of a record that cannot be read again.
var ErrReread = errors.New("record cannot be read again")

// Datagram reads the record at offset again and parses its frame as link
// type lt into d: its Src, Dst, Length, Payload and Frame (d's own copy),
// LinkType and Offset; the other fields are zero. It fails, wrapping
// ErrReread, when the record there does not carry a whole UDP datagram
// (the file changed since it was read, or the offset is wrong).
func (x *Rereader) Datagram(offset int64, lt layers.LinkType, d *Datagram) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	frame, err := x.record(offset)
	if err != nil {
		return fmt.Errorf("%s: record at byte %d: %w", x.name, offset, err)
	}
	kind, err := x.parse.frame(lt, frame)
	if err != nil || kind != frameUDP || x.parse.fragment {
		return fmt.Errorf("%s: record at byte %d carries no whole UDP datagram now: %w", x.name, offset, ErrReread)
	}
	p := &x.parse
	// Where the payload starts and ends in the frame (a short frame may
	// be padded after it).
	at := cap(frame) - cap(p.udp.Payload)
	end := at + len(p.udp.Payload)
	frame = append([]byte(nil), frame...) // the window is reused
	*d = Datagram{
		Src:      netip.AddrPortFrom(p.srcIP, uint16(p.udp.SrcPort)),
		Dst:      netip.AddrPortFrom(p.dstIP, uint16(p.udp.DstPort)),
		Frame:    frame,
		LinkType: lt,
		Offset:   offset,
		Length:   int(p.udp.Length) - 8,
	}
	d.Payload = frame[at:end:end]
	return nil
}

// errShort is the error of a record the file ends within.
var errShort = fmt.Errorf("the file ends within the record: %w", ErrReread)

// record returns the frame of the record at offset, from the window.
func (x *Rereader) record(offset int64) ([]byte, error) {
	if offset < 0 || offset >= x.size {
		return nil, fmt.Errorf("offset beyond the file's %d bytes: %w", x.size, ErrReread)
	}
	// Records read in a row (a scan) come from a large window of the file
	// read ahead; any other is read afresh, so a packet looked at again
	// shows the file as it is now.
	scan := offset > x.last && offset-x.last <= scanGap
	x.last = offset
	head, err := x.bytes(offset, 28, false, scan)
	if err != nil {
		return nil, err
	}
	var at, n int
	if !x.pcapng {
		if len(head) < 16 {
			return nil, errShort
		}
		at, n = 16, int(x.order.Uint32(head[8:]))
	} else {
		if len(head) < 12 {
			return nil, errShort
		}
		var order binary.ByteOrder = binary.LittleEndian
		if binary.LittleEndian.Uint32(head) > 0xffff {
			order = binary.BigEndian
		}
		total := int(order.Uint32(head[4:]))
		switch order.Uint32(head) {
		case 2, 6: // packet, enhanced packet
			if len(head) < 28 {
				return nil, errShort
			}
			at, n = 28, int(order.Uint32(head[20:]))
		case 3: // simple packet: the original length, within the block
			at, n = 12, min(int(order.Uint32(head[8:])), total-16)
		default:
			return nil, fmt.Errorf("no packet block there: %w", ErrReread)
		}
		if n > total-at {
			return nil, fmt.Errorf("packet longer than its block: %w", ErrReread)
		}
	}
	if n < 0 || n > MaxRecord {
		return nil, fmt.Errorf("record of %d bytes: %w", n, ErrReread)
	}
	b, err := x.bytes(offset, at+n, true, true) // within what the header read
	if err != nil {
		return nil, err
	}
	return b[at:], nil
}

// bytes returns n bytes of the file from offset; fewer when the file ends
// first, which is an error when exact. With cached, bytes already in the
// window serve; else the file is read again, a large window of it for a
// scan, a small one otherwise.
func (x *Rereader) bytes(offset int64, n int, exact, cached bool) ([]byte, error) {
	if !cached || offset < x.winAt || offset+int64(n) > x.winAt+int64(len(x.win)) {
		size := max(lookupRead, n)
		if cached {
			size = max(rereadWindow, n)
		}
		if cap(x.win) < size {
			x.win = make([]byte, size)
		}
		x.win = x.win[:size]
		m, err := x.f.ReadAt(x.win, offset)
		if err != nil && err != io.EOF {
			x.win = x.win[:0]
			return nil, err
		}
		x.win, x.winAt = x.win[:m], offset
	}
	b := x.win[offset-x.winAt:]
	if len(b) < n {
		if exact {
			return nil, errShort
		}
		return b, nil
	}
	return b[:n], nil
}

// Close closes the file.
func (x *Rereader) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.f.Close()
}
