package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Format is a capture file format.
type Format uint8

const (
	// Pcap is the classic libpcap format, with nanosecond time stamps
	// (microsecond ones with WriterOptions.Micro) and one link type for
	// the whole file.
	Pcap Format = iota
	// Pcapng keeps each frame's interface and link type.
	Pcapng
)

// String returns "pcap" or "pcapng".
func (f Format) String() string {
	if f == Pcapng {
		return "pcapng"
	}
	return "pcap"
}

// FormatFor returns Pcapng for a file name ending in .pcapng (in any case)
// and Pcap otherwise.
func FormatFor(path string) Format {
	if strings.EqualFold(filepath.Ext(path), ".pcapng") {
		return Pcapng
	}
	return Pcap
}

// WriterOptions configure a CaptureWriter.
type WriterOptions struct {
	// Format of the capture.
	Format Format
	// Interfaces are written at the start: a pcap file takes its link
	// type (and snap length) from the first; a pcapng file describes each.
	// Frames of other interfaces may come later (pcapng adds them as they
	// come; pcap refuses other link types). None: Ethernet.
	Interfaces []Interface
	// FlushInterval: 0 writes every frame out at once; a positive interval
	// writes frames out at most that long after they were written.
	// Either way only whole records reach the output, so a capture cut
	// short by a crash or a kill still reads up to its last frame.
	FlushInterval time.Duration
	// Application names the writer in a pcapng section header.
	Application string
	// Micro writes a pcap with microsecond time stamps (the classic
	// magic a1b2c3d4), as a capture of microsecond time stamps was read:
	// the fraction past the microsecond is dropped. A pcapng always has
	// nanosecond time stamps, which hold microsecond ones exactly.
	Micro bool
}

// ErrLinkType is wrapped by the error for a frame whose link type a pcap
// file, which has a single link type, cannot hold.
var ErrLinkType = errors.New("a pcap file holds frames of one link type (write a .pcapng for several)")

// CaptureWriter writes frames as they were captured to a pcap or pcapng
// stream that Wireshark, tcpdump and pmdump read. It is safe for use by
// several goroutines.
type CaptureWriter struct {
	mu       sync.Mutex
	out      io.Writer
	closer   io.Closer
	pending  []byte // whole records not yet written out
	pcap     *pcapgo.Writer
	ng       *pcapgo.NgWriter
	linkType layers.LinkType // pcap
	ids      map[Interface]int
	interval time.Duration
	timer    *time.Timer
	err      error // sticky output error
	frames   int
	refused  int
}

// maxPending is how many bytes of whole records wait before they are
// written out, whatever the flush interval.
const maxPending = 1 << 16

// recordBuffer collects what pcapgo writes, so that the output only ever
// gets whole records.
type recordBuffer struct{ c *CaptureWriter }

func (b recordBuffer) Write(p []byte) (int, error) {
	b.c.pending = append(b.c.pending, p...)
	return len(p), nil
}

// NewCaptureWriter starts a capture on w with its file header (and the
// interface descriptions of a pcapng), written out at once.
func NewCaptureWriter(w io.Writer, o WriterOptions) (*CaptureWriter, error) {
	c := &CaptureWriter{out: w, ids: map[Interface]int{}, interval: o.FlushInterval}
	intfs := o.Interfaces
	if len(intfs) == 0 {
		intfs = []Interface{{LinkType: layers.LinkTypeEthernet}}
	}
	buf := recordBuffer{c}
	switch o.Format {
	case Pcapng:
		app := o.Application
		if app == "" {
			app = "pmdump"
		}
		ng, err := pcapgo.NewNgWriterInterface(buf, ngInterface(intfs[0]), pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: app}})
		if err != nil {
			return nil, fmt.Errorf("pcapng header: %w", err)
		}
		c.ng = ng
		c.ids[intfs[0]] = 0
		for _, intf := range intfs[1:] {
			if _, err := c.addInterface(intf); err != nil {
				return nil, err
			}
		}
		if err := ng.Flush(); err != nil {
			return nil, fmt.Errorf("pcapng header: %w", err)
		}
	default:
		c.linkType = intfs[0].LinkType
		for _, intf := range intfs[1:] {
			if intf.LinkType != c.linkType {
				return nil, fmt.Errorf("interfaces %s (%s) and %s (%s): %w", intfs[0].Name, LinkTypeName(c.linkType), intf.Name, LinkTypeName(intf.LinkType), ErrLinkType)
			}
		}
		snap := intfs[0].SnapLen
		if snap <= 0 || snap > MaxRecord {
			snap = MaxRecord
		}
		if o.Micro {
			c.pcap = pcapgo.NewWriter(buf)
		} else {
			c.pcap = pcapgo.NewWriterNanos(buf)
		}
		if err := c.pcap.WriteFileHeader(uint32(snap), c.linkType); err != nil {
			return nil, fmt.Errorf("pcap header: %w", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.writeOut(); err != nil {
		return nil, err
	}
	return c, nil
}

// CreateCapture creates a capture file, "-" being standard output; the
// format is chosen by the name's extension unless o.Format is Pcapng.
// Close closes the file.
func CreateCapture(name string, o WriterOptions) (*CaptureWriter, error) {
	if FormatFor(name) == Pcapng {
		o.Format = Pcapng
	}
	if name == "-" {
		return NewCaptureWriter(os.Stdout, o)
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	c, err := NewCaptureWriter(f, o)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.closer = f
	return c, nil
}

func ngInterface(intf Interface) pcapgo.NgInterface {
	snap := intf.SnapLen
	if snap < 0 || snap > MaxRecord {
		snap = 0
	}
	return pcapgo.NgInterface{
		Name:                intf.Name,
		LinkType:            intf.LinkType,
		SnapLength:          uint32(snap),
		TimestampResolution: 9,
	}
}

func (c *CaptureWriter) addInterface(intf Interface) (int, error) {
	id, err := c.ng.AddInterface(ngInterface(intf))
	if err != nil {
		return 0, fmt.Errorf("pcapng interface %s: %w", intf.Name, err)
	}
	c.ids[intf] = id
	return id, nil
}

// WriteFrame writes one frame as captured: its bytes, time stamp and
// original length from ci, its link type, and the interface it came from
// (in pcapng; intf.LinkType is taken to be lt). A pcap file refuses a
// frame of another link type than its own with an error wrapping
// ErrLinkType (counted in Refused) and goes on.
func (c *CaptureWriter) WriteFrame(data []byte, ci gopacket.CaptureInfo, lt layers.LinkType, intf Interface) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if len(data) > MaxRecord {
		data = data[:MaxRecord]
	}
	ci.CaptureLength = len(data)
	if ci.Length < len(data) {
		ci.Length = len(data)
	}
	ci.AncillaryData = nil
	if c.ng != nil {
		intf.LinkType = lt
		id, ok := c.ids[intf]
		if !ok {
			var err error
			if id, err = c.addInterface(intf); err != nil {
				c.err = err
				return err
			}
		}
		ci.InterfaceIndex = id
		if err := c.ng.WritePacket(ci, data); err != nil {
			c.err = fmt.Errorf("capture: frame %d: %w", c.frames+1, err)
			return c.err
		}
		if err := c.ng.Flush(); err != nil { // into pending: whole records only
			c.err = fmt.Errorf("capture: %w", err)
			return c.err
		}
	} else {
		if lt != c.linkType {
			c.refused++
			return fmt.Errorf("frame of link type %s in a %s capture: %w", LinkTypeName(lt), LinkTypeName(c.linkType), ErrLinkType)
		}
		if err := c.pcap.WritePacket(ci, data); err != nil {
			c.err = fmt.Errorf("capture: frame %d: %w", c.frames+1, err)
			return c.err
		}
	}
	c.frames++
	switch {
	case c.interval <= 0 || len(c.pending) >= maxPending:
		return c.writeOut()
	case c.timer == nil:
		c.timer = time.AfterFunc(c.interval, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.timer = nil
			c.writeOut()
		})
	}
	return nil
}

// WriteDatagram writes the frame a datagram came in, as captured.
func (c *CaptureWriter) WriteDatagram(d *Datagram) error {
	ci := gopacket.CaptureInfo{Timestamp: d.TS, CaptureLength: len(d.Frame), Length: d.WireLength}
	return c.WriteFrame(d.Frame, ci, d.LinkType, Interface{Name: d.InterfaceName, LinkType: d.LinkType})
}

// writeOut writes the pending records to the output, with c.mu held.
func (c *CaptureWriter) writeOut() error {
	if c.err != nil || len(c.pending) == 0 {
		return c.err
	}
	_, err := c.out.Write(c.pending)
	c.pending = c.pending[:0]
	if err != nil {
		c.err = fmt.Errorf("capture: %w", err)
	}
	return c.err
}

// Frames is how many frames have been written.
func (c *CaptureWriter) Frames() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames
}

// Refused is how many frames a pcap capture refused for their link type.
func (c *CaptureWriter) Refused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// Flush writes out every frame written so far.
func (c *CaptureWriter) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeOut()
}

// Close flushes the capture and closes the file CreateCapture created.
func (c *CaptureWriter) Close() error {
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	err := c.writeOut()
	c.mu.Unlock()
	if c.closer != nil {
		if cerr := c.closer.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("capture: %w", cerr)
		}
		c.closer = nil
	}
	return err
}

// Tee returns a frame source that gives the frames of src and writes each
// one, as captured, to w: every frame, whether or not it carries a
// datagram. A frame w refuses for its link type is not an error of the
// source (see CaptureWriter.Refused); a failing output is.
func Tee(src FrameSource, w *CaptureWriter) FrameSource {
	return &tee{src: src, w: w}
}

type tee struct {
	src FrameSource
	w   *CaptureWriter
	ifs []Interface
}

func (t *tee) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	data, ci, lt, err := t.src.ReadFrame()
	if err != nil {
		return data, ci, lt, err
	}
	if werr := t.w.WriteFrame(data, ci, lt, t.intf(ci.InterfaceIndex)); werr != nil && !errors.Is(werr, ErrLinkType) {
		return nil, ci, lt, werr
	}
	return data, ci, lt, nil
}

func (t *tee) intf(i int) Interface {
	if i < 0 || i > 1<<16 {
		return Interface{}
	}
	for len(t.ifs) <= i {
		t.ifs = append(t.ifs, t.src.Interface(len(t.ifs)))
	}
	return t.ifs[i]
}

func (t *tee) Interface(i int) Interface { return t.src.Interface(i) }

// The optional interfaces of the source pass through.

func (t *tee) RecordOffset() int64 {
	if o, ok := t.src.(RecordOffsetter); ok {
		return o.RecordOffset()
	}
	return -1
}

func (t *tee) Progress() (int64, int64) {
	if p, ok := t.src.(Progresser); ok {
		return p.Progress()
	}
	return 0, -1
}

func (t *tee) KernelStats() (uint64, uint64, error) {
	if k, ok := t.src.(KernelStatser); ok {
		return k.KernelStats()
	}
	return 0, 0, errors.New("not a live capture")
}

func (t *tee) Buffered() bool {
	b, ok := t.src.(interface{ Buffered() bool })
	return ok && b.Buffered()
}

func (t *tee) Close() error {
	if c, ok := t.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
