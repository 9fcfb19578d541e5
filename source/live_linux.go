//go:build linux

package source

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
)

// LiveSource captures frames from network interfaces with AF_PACKET
// sockets and a TPACKET_V3 ring shared with the kernel (pure Go, no
// libpcap), behind a kernel filter that passes only UDP. It is a
// FrameSource: NewFrameReader turns it into datagrams.
//
// Each interface has a goroutine that copies frames out of the kernel's
// ring into a batch the reader takes whole, so frames are never held back
// and the ring is released at once. When the reader falls far behind, the
// goroutines wait, the ring fills and the kernel drops frames (counted in
// KernelStats).
type LiveSource struct {
	handles []*liveHandle
	intfs   []Interface

	mu      sync.Mutex
	room    *sync.Cond // producers wait for room in pending
	pending liveBatch  // filled by the capture goroutines
	running int        // capture goroutines still running
	closed  bool
	drainTo time.Time // when closed: frames are still read until then
	drain   time.Duration
	err     error
	ready   chan struct{} // a frame or an end is waiting (capacity 1)
	npend   atomic.Int32  // frames in pending
	wg      sync.WaitGroup
	once    sync.Once

	cur liveBatch // what ReadFrame gives out
	i   int

	capsKept error // why capabilities are still held after opening, if they are
}

type liveBatch struct {
	slab   []byte
	frames []liveFrame
}

type liveFrame struct {
	start, end int
	ci         gopacket.CaptureInfo
	lt         layers.LinkType
}

// Bounds of what waits for the reader, past the kernel's ring.
const (
	livePendingFrames = 1 << 14
	livePendingBytes  = 4 << 20
)

type liveHandle struct {
	mu         sync.Mutex // guards tp against closing while stats are read
	tp         *afpacket.TPacket
	index      int
	lt         layers.LinkType
	rcv, drops uint64 // kernel counts, kept when tp is closed
}

// OpenLive starts capturing on the interfaces of o.
func OpenLive(o LiveOptions) (*LiveSource, error) {
	if len(o.Interfaces) == 0 {
		return nil, errors.New("live capture: no interface given")
	}
	ring := o.RingSize
	if ring <= 0 {
		ring = defaultRingSize
	}
	blocks := max(ring/liveBlockSize, 2)
	timeout := o.BlockTimeout
	if timeout <= 0 {
		timeout = defaultBlockTimeout
	}
	// On Close, the block the kernel is filling is handed over within the
	// block timeout: read until then, so that nothing the kernel captured
	// before Close is lost.
	l := &LiveSource{ready: make(chan struct{}, 1), drain: timeout + 30*time.Millisecond}
	l.room = sync.NewCond(&l.mu)
	for i, name := range o.Interfaces {
		h, intf, err := openHandle(name, o, blocks, timeout)
		if err != nil {
			for _, h := range l.handles {
				h.tp.Close()
			}
			return nil, err
		}
		h.index = i
		l.handles = append(l.handles, h)
		l.intfs = append(l.intfs, intf)
	}
	// The sockets are open (and in promiscuous mode if asked): the
	// capabilities that opened them are dropped before any frame is read.
	if err := dropCapabilities(); err != nil {
		if !errors.Is(err, ErrCapabilitiesKept) {
			for _, h := range l.handles {
				h.tp.Close()
			}
			return nil, fmt.Errorf("live capture: %w", err)
		}
		l.capsKept = err
	}
	l.running = len(l.handles)
	for _, h := range l.handles {
		l.wg.Add(1)
		go l.capture(h)
	}
	return l, nil
}

// CapabilitiesKept is nil when the process holds no capabilities since the
// capture sockets were opened (they are dropped then), and otherwise says
// why it still does (an error wrapping ErrCapabilitiesKept).
func (l *LiveSource) CapabilitiesKept() error { return l.capsKept }

// arphrd is the ARPHRD_* hardware type of an interface.
func arphrd(name string) int {
	b, err := os.ReadFile("/sys/class/net/" + name + "/type")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// interfaceNames lists the interfaces of this host, for an error message.
func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return "(cannot list them: " + err.Error() + ")"
	}
	var names []string
	for _, i := range ifs {
		state := "down"
		if i.Flags&net.FlagUp != 0 {
			state = "up"
		}
		names = append(names, i.Name+" ("+state+")")
	}
	return strings.Join(append(names, "any"), ", ")
}

func openHandle(name string, o LiveOptions, blocks int, timeout time.Duration) (*liveHandle, Interface, error) {
	opts := []any{
		afpacket.OptFrameSize(1 << 16),
		afpacket.OptBlockSize(liveBlockSize),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(timeout),
		afpacket.OptPollTimeout(livePollTimeout),
		afpacket.TPacketVersion3,
	}
	f := FilterOptions{Ports: o.Ports}
	intf := Interface{Name: name, SnapLen: MaxRecord}
	if name == "any" {
		if o.Promiscuous {
			return nil, intf, errors.New(`live capture: promiscuous mode needs a named interface, not "any"`)
		}
		opts = append(opts, afpacket.SocketDgram)
		intf.LinkType = layers.LinkTypeRaw
		f.Link = FilterRawIP
		if ifs, err := net.Interfaces(); err == nil {
			for _, i := range ifs {
				if i.Flags&net.FlagLoopback != 0 {
					f.DropOutgoingOn = append(f.DropOutgoingOn, i.Index)
				}
			}
		}
	} else {
		ni, err := net.InterfaceByName(name)
		if err != nil {
			return nil, intf, fmt.Errorf("live capture: %q: %w; the interfaces are: %s", name, ErrNoInterface, interfaceNames())
		}
		if ni.Flags&net.FlagUp == 0 {
			return nil, intf, fmt.Errorf("live capture: %s: %w (bring it up with: ip link set %s up)", name, ErrInterfaceDown, name)
		}
		opts = append(opts, afpacket.OptInterface(name))
		f.DropOutgoing = ni.Flags&net.FlagLoopback != 0
		switch arphrd(name) {
		case 1, 772: // ARPHRD_ETHER, ARPHRD_LOOPBACK: Ethernet headers
			opts = append(opts, afpacket.SocketRaw)
			intf.LinkType = layers.LinkTypeEthernet
			f.Link = FilterEthernet
		default: // other link layers: captured from the IP header on
			opts = append(opts, afpacket.SocketDgram)
			intf.LinkType = layers.LinkTypeRaw
			f.Link = FilterRawIP
		}
	}
	tp, err := afpacket.NewTPacket(opts...)
	if err != nil {
		return nil, intf, liveErr(name, "opening a capture socket", err)
	}
	prog, err := CaptureFilter(f)
	if err == nil {
		var raw []bpf.RawInstruction
		if raw, err = bpf.Assemble(prog); err == nil {
			err = tp.SetBPF(raw)
		}
	}
	if err != nil {
		tp.Close()
		return nil, intf, liveErr(name, "setting the capture filter", err)
	}
	if o.Promiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return nil, intf, liveErr(name, "entering promiscuous mode", err)
		}
	}
	return &liveHandle{tp: tp, lt: intf.LinkType}, intf, nil
}

// liveErr wraps an error of the capture socket, with the hint for a
// permission error.
func liveErr(name, doing string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("live capture on %s: %s: %w\n%s", name, doing, err, PermissionHint)
	}
	return fmt.Errorf("live capture on %s: %s: %w", name, doing, err)
}

// capture copies the frames of one interface into the pending batch until
// the source is closed or the socket fails.
func (l *LiveSource) capture(h *liveHandle) {
	defer l.wg.Done()
	var err error
	for {
		l.mu.Lock()
		closed, drainTo := l.closed, l.drainTo
		l.mu.Unlock()
		if closed && time.Now().After(drainTo) {
			break
		}
		var data []byte
		var ci gopacket.CaptureInfo
		data, ci, err = h.tp.ZeroCopyReadPacketData()
		if err == afpacket.ErrTimeout {
			err = nil
			if closed {
				break
			}
			continue
		}
		if err != nil {
			err = fmt.Errorf("live capture on %s: %w", l.intfs[h.index].Name, err)
			break
		}
		l.mu.Lock()
		for !l.closed && (len(l.pending.frames) >= livePendingFrames || len(l.pending.slab) >= livePendingBytes) {
			l.room.Wait()
		}
		start := len(l.pending.slab)
		l.pending.slab = append(l.pending.slab, data...)
		l.pending.frames = append(l.pending.frames, liveFrame{
			start: start, end: len(l.pending.slab), lt: h.lt,
			ci: gopacket.CaptureInfo{Timestamp: ci.Timestamp.UTC(), CaptureLength: len(data), Length: ci.Length, InterfaceIndex: h.index},
		})
		l.npend.Add(1)
		l.mu.Unlock()
		l.signal()
	}
	h.mu.Lock()
	h.stats()
	h.tp.Close()
	h.tp = nil
	h.mu.Unlock()
	l.mu.Lock()
	l.running--
	if err != nil && l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
	l.signal()
}

// stats reads the kernel's counts, with h.mu held.
func (h *liveHandle) stats() {
	if h.tp == nil {
		return
	}
	_, v3, err := h.tp.SocketStats()
	if err == nil {
		h.rcv, h.drops = uint64(v3.Packets()), uint64(v3.Drops())
	}
}

func (l *LiveSource) signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// ReadFrame implements FrameSource: it waits for the next frame. After
// Close, it gives the frames already captured, then io.EOF.
func (l *LiveSource) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	for {
		if l.i < len(l.cur.frames) {
			f := &l.cur.frames[l.i]
			l.i++
			return l.cur.slab[f.start:f.end:f.end], f.ci, f.lt, nil
		}
		l.mu.Lock()
		if len(l.pending.frames) > 0 {
			l.cur, l.pending = l.pending, liveBatch{slab: l.cur.slab[:0], frames: l.cur.frames[:0]}
			l.npend.Store(0)
			l.i = 0
			l.room.Broadcast()
			l.mu.Unlock()
			continue
		}
		if l.running == 0 {
			err := l.err
			l.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return nil, gopacket.CaptureInfo{}, 0, err
		}
		l.mu.Unlock()
		<-l.ready
	}
}

// Buffered reports whether a frame is waiting, so ReadFrame will not wait.
func (l *LiveSource) Buffered() bool { return l.i < len(l.cur.frames) || l.npend.Load() > 0 }

// Interface implements FrameSource: the interfaces in the order given.
func (l *LiveSource) Interface(i int) Interface {
	if i < 0 || i >= len(l.intfs) {
		return Interface{}
	}
	return l.intfs[i]
}

// Interfaces are the interfaces captured on.
func (l *LiveSource) Interfaces() []Interface { return append([]Interface(nil), l.intfs...) }

// KernelStats implements KernelStatser: frames the kernel passed to the
// capture (after its filter) and frames it dropped, over all interfaces,
// since the capture started.
func (l *LiveSource) KernelStats() (received, dropped uint64, err error) {
	for _, h := range l.handles {
		h.mu.Lock()
		h.stats()
		received += h.rcv
		dropped += h.drops
		h.mu.Unlock()
	}
	return received, dropped, nil
}

// Close stops the capture: the frames the kernel captured before it (also
// those in the block it was still filling) can still be read, then
// ReadFrame returns io.EOF. It waits for the capture goroutines (a tenth
// of a second or so) and may be called from any goroutine, more than once.
func (l *LiveSource) Close() error {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.drainTo = time.Now().Add(l.drain)
		l.room.Broadcast()
		l.mu.Unlock()
		l.wg.Wait()
	})
	return nil
}
