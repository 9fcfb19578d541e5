package source_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/source"
)

// capturedFrame is a frame read back from a capture, at the frame level.
type capturedFrame struct {
	data []byte
	ts   time.Time
	wire int
	lt   layers.LinkType
	intf string
}

// readFrames reads every frame of a capture with pcapgo (not with the
// package under test), and the final error.
func readFrames(t *testing.T, capture []byte) ([]capturedFrame, error) {
	t.Helper()
	var out []capturedFrame
	if bytes.HasPrefix(capture, []byte{0x0a, 0x0d, 0x0d, 0x0a}) {
		r, err := pcapgo.NewNgReader(bytes.NewReader(capture), pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return nil, err
		}
		for {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				return out, err
			}
			intf, _ := r.Interface(ci.InterfaceIndex)
			out = append(out, capturedFrame{data, ci.Timestamp, ci.Length, intf.LinkType, intf.Name})
		}
	}
	r, err := pcapgo.NewReader(bytes.NewReader(capture))
	if err != nil {
		return nil, err
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			return out, err
		}
		out = append(out, capturedFrame{data, ci.Timestamp, ci.Length, r.LinkType(), ""})
	}
}

// testFrames are frames of three link types on three interfaces, with
// nanosecond time stamps, a frame cut by a snap length and a non-UDP frame.
func testFrames(t *testing.T) ([]fakeFrame, []source.Interface) {
	intfs := []source.Interface{
		{Name: "eth0", LinkType: layers.LinkTypeEthernet, SnapLen: 262144},
		{Name: "any", LinkType: layers.LinkTypeLinuxSLL, SnapLen: 262144},
		{Name: "tun0", LinkType: layers.LinkTypeRaw, SnapLen: 262144},
	}
	long := ethernet(t, srv4, cli4, bytes.Repeat([]byte("stdf"), 300))
	return []fakeFrame{
		{data: ethernet(t, cli4, srv4, payloadA), lt: layers.LinkTypeEthernet},
		{data: sll(t, srv6, cli6, payloadB), lt: layers.LinkTypeLinuxSLL, intf: 1},
		{data: long[:100], lt: layers.LinkTypeEthernet, wire: len(long)},
		{data: tcpFrame(t), lt: layers.LinkTypeEthernet},
		{data: ipPacket(t, cli4, srv4, payloadB), lt: layers.LinkTypeRaw, intf: 2},
	}, intfs
}

// TestWriteReadBack: frames written through Tee come back from the file
// as they were captured (bytes, time to the nanosecond, wire length, link
// type and, in pcapng, interface), and the source.Reader reads the same
// datagrams from the file as from the frames.
func TestWriteReadBack(t *testing.T) {
	frames, intfs := testFrames(t)
	for _, tt := range []struct {
		format  source.Format
		intfs   []source.Interface
		keep    func(fakeFrame) bool
		refused int
	}{
		{source.Pcapng, intfs, func(fakeFrame) bool { return true }, 0},
		{source.Pcap, intfs[:1], func(f fakeFrame) bool { return f.lt == layers.LinkTypeEthernet }, 2},
	} {
		t.Run(tt.format.String(), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := source.NewCaptureWriter(&buf, source.WriterOptions{Format: tt.format, Interfaces: tt.intfs})
			if err != nil {
				t.Fatal(err)
			}
			src := &fakeSource{frames: frames, intfs: intfs}
			live := source.NewFrameReader(source.Tee(src, w), "fake")
			var direct []string
			for i := 0; ; i++ {
				d, err := live.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if tt.keep(frames[d.N-1]) {
					direct = append(direct, fmt.Sprintf("%v %v %x", d.Src, d.Dst, d.Payload))
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.Refused() != tt.refused {
				t.Errorf("%d frames refused, want %d", w.Refused(), tt.refused)
			}
			got, err := readFrames(t, buf.Bytes())
			if err != io.EOF {
				t.Fatalf("reading back: %v", err)
			}
			var want []fakeFrame
			for _, f := range frames {
				if tt.keep(f) {
					want = append(want, f)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d frames read back, want %d", len(got), len(want))
			}
			for i, f := range want {
				g := got[i]
				wantName := intfs[f.intf].Name
				if tt.format == source.Pcap {
					wantName = ""
				}
				if !bytes.Equal(g.data, f.data) || !g.ts.Equal(epoch) || g.wire != max(f.wire, len(f.data)) || g.lt != f.lt || g.intf != wantName {
					t.Errorf("frame %d: %d bytes at %v, wire %d, %v on %q; want %d bytes, wire %d, %v on %q",
						i, len(g.data), g.ts, g.wire, g.lt, g.intf, len(f.data), max(f.wire, len(f.data)), f.lt, wantName)
				}
			}
			r, err := source.NewReader(bytes.NewReader(buf.Bytes()), "back")
			if err != nil {
				t.Fatal(err)
			}
			var back []string
			for {
				d, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				back = append(back, fmt.Sprintf("%v %v %x", d.Src, d.Dst, d.Payload))
			}
			if strings.Join(back, "\n") != strings.Join(direct, "\n") {
				t.Errorf("datagrams read back:\n%s\nwant:\n%s", strings.Join(back, "\n"), strings.Join(direct, "\n"))
			}
		})
	}
}

// TestWriterNanoseconds: time stamps keep their nanoseconds in both formats.
func TestWriterNanoseconds(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	frame := ethernet(t, cli4, srv4, payloadA)
	for _, f := range []source.Format{source.Pcap, source.Pcapng} {
		var buf bytes.Buffer
		w, err := source.NewCaptureWriter(&buf, source.WriterOptions{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(frame, gopacket.CaptureInfo{Timestamp: ts}, layers.LinkTypeEthernet, source.Interface{LinkType: layers.LinkTypeEthernet}); err != nil {
			t.Fatal(err)
		}
		got, err := readFrames(t, buf.Bytes())
		if err != io.EOF || len(got) != 1 || !got[0].ts.Equal(ts) {
			t.Errorf("%v: %d frames, %v; time %v want %v", f, len(got), err, got, ts)
		}
	}
}

// splitWriter records the size of every write; the writer's timer writes
// from a goroutine of its own.
type splitWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []int
}

func (s *splitWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, len(p))
	return s.buf.Write(p)
}

// bytes is a copy of what was written so far.
func (s *splitWriter) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

// TestWriterWholeRecords: with no flush interval every frame is out as
// soon as it is written; with one, within the interval; and the output
// only ever receives whole records, so a capture cut at any write reads
// back without error.
func TestWriterWholeRecords(t *testing.T) {
	for _, f := range []source.Format{source.Pcap, source.Pcapng} {
		for _, interval := range []time.Duration{0, 20 * time.Millisecond} {
			t.Run(fmt.Sprintf("%v/%v", f, interval), func(t *testing.T) {
				var out splitWriter
				w, err := source.NewCaptureWriter(&out, source.WriterOptions{Format: f, FlushInterval: interval})
				if err != nil {
					t.Fatal(err)
				}
				const n = 400
				for i := 0; i < n; i++ {
					frame := ethernet(t, cli4, srv4, bytes.Repeat([]byte{byte(i)}, 1+i*3))
					if err := w.WriteFrame(frame, gopacket.CaptureInfo{Timestamp: epoch}, layers.LinkTypeEthernet, source.Interface{LinkType: layers.LinkTypeEthernet}); err != nil {
						t.Fatal(err)
					}
					if interval == 0 {
						if got, err := readFrames(t, out.bytes()); err != io.EOF || len(got) != i+1 {
							t.Fatalf("after frame %d: %d frames out, %v", i+1, len(got), err)
						}
					}
				}
				if interval > 0 {
					time.Sleep(5 * interval)
				}
				if got, err := readFrames(t, out.bytes()); err != io.EOF || len(got) != n {
					t.Fatalf("%d frames out before Close, %v; want %d", len(got), err, n)
				}
				// Every prefix ending at a write holds whole records only.
				end := 0
				for i, size := range out.writes {
					end += size
					if got, err := readFrames(t, out.bytes()[:end]); err != io.EOF {
						t.Fatalf("capture cut after write %d (%d bytes, %d frames): %v", i, end, len(got), err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestWriterEmptyAndErrors: a capture with no frames is valid; a pcap with
// interfaces of two link types is refused at once; an output error is
// returned and sticks.
func TestWriterEmptyAndErrors(t *testing.T) {
	for _, f := range []source.Format{source.Pcap, source.Pcapng} {
		var buf bytes.Buffer
		w, err := source.NewCaptureWriter(&buf, source.WriterOptions{Format: f, Interfaces: []source.Interface{{Name: "lo", LinkType: layers.LinkTypeEthernet}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := source.NewReader(bytes.NewReader(buf.Bytes()), "empty")
		if err != nil {
			t.Fatalf("%v: empty capture unreadable: %v", f, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%v: empty capture: %v", f, err)
		}
	}
	_, err := source.NewCaptureWriter(io.Discard, source.WriterOptions{Format: source.Pcap,
		Interfaces: []source.Interface{{Name: "eth0", LinkType: layers.LinkTypeEthernet}, {Name: "tun0", LinkType: layers.LinkTypeRaw}}})
	if !errors.Is(err, source.ErrLinkType) {
		t.Errorf("pcap with two link types: %v", err)
	}
	w, err := source.NewCaptureWriter(&failAfter{n: 1}, source.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frame := ethernet(t, cli4, srv4, payloadA)
	for i := 0; i < 2; i++ {
		if err := w.WriteFrame(frame, gopacket.CaptureInfo{Timestamp: epoch}, layers.LinkTypeEthernet, source.Interface{}); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("write %d to a full disk: %v", i, err)
		}
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

// TestCreateCapture: the format follows the extension; "-" is standard
// output.
func TestCreateCapture(t *testing.T) {
	dir := t.TempDir()
	frame := ethernet(t, cli4, srv4, payloadA)
	for name, magic := range map[string][]byte{"a.pcapng": {0x0a, 0x0d, 0x0d, 0x0a}, "a.PCAPNG": {0x0a, 0x0d, 0x0d, 0x0a}, "a.pcap": {0x4d, 0x3c, 0xb2, 0xa1}, "a.cap": {0x4d, 0x3c, 0xb2, 0xa1}} {
		path := filepath.Join(dir, name)
		w, err := source.CreateCapture(path, source.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(frame, gopacket.CaptureInfo{Timestamp: epoch}, layers.LinkTypeEthernet, source.Interface{LinkType: layers.LinkTypeEthernet}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if !bytes.HasPrefix(b, magic) {
			t.Errorf("%s starts % x, want % x", name, b[:4], magic)
		}
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = pw
	w, err := source.CreateCapture("-", source.WriterOptions{})
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(frame, gopacket.CaptureInfo{Timestamp: epoch}, layers.LinkTypeEthernet, source.Interface{LinkType: layers.LinkTypeEthernet}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	b, _ := io.ReadAll(pr)
	got, err := readFrames(t, b)
	if err != io.EOF || len(got) != 1 || !bytes.Equal(got[0].data, frame) {
		t.Errorf("stdout: %d frames, %v", len(got), err)
	}
}

// TestWiresharkReads: tshark (when installed) reads what the writer wrote,
// frame for frame, with the right link types.
func TestWiresharkReads(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark is not installed")
	}
	frames, intfs := testFrames(t)
	dir := t.TempDir()
	for _, name := range []string{"w.pcapng", "w.pcap"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // tshark takes seconds to start
			path := filepath.Join(dir, name)
			o := source.WriterOptions{Interfaces: intfs}
			if name == "w.pcap" {
				o.Interfaces = intfs[:1]
			}
			w, err := source.CreateCapture(path, o)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, f := range frames {
				ci := gopacket.CaptureInfo{Timestamp: epoch, Length: max(f.wire, len(f.data))}
				if err := w.WriteFrame(f.data, ci, f.lt, intfs[f.intf]); err != nil {
					continue
				}
				port := ""
				if r, _ := source.NewFrameReader(&fakeSource{frames: []fakeFrame{f}}, "one").Next(); r != nil {
					port = strconv.Itoa(int(r.Src.Port()))
				}
				want = append(want, fmt.Sprintf("%d\t%d\t%s", len(f.data), max(f.wire, len(f.data)), port))
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.cap_len", "-e", "frame.len", "-e", "udp.srcport").Output()
			if err != nil {
				t.Fatalf("tshark -r %s: %v\n%s", name, err, out)
			}
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: tshark reads %q, want %q", name, got, want)
			}
		})
	}
}

// TestWriteDatagramReassembled: a datagram rebuilt from IPv4 fragments is
// written as one whole frame, which reads back as the same datagram.
func TestWriteDatagramReassembled(t *testing.T) {
	big := bytes.Repeat([]byte("sdat"), 500)
	var recs []record
	for _, f := range fragments(t, srv4, cli4, big, 5, 600) {
		recs = append(recs, record{data: f, ts: epoch})
	}
	r, err := source.NewReader(bytes.NewReader(writePcap(t, layers.LinkTypeEthernet, 65535, recs...)), "frags")
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Next()
	if err != nil || !d.Reassembled {
		t.Fatalf("reassembly: %v", err)
	}
	var buf bytes.Buffer
	w, err := source.NewCaptureWriter(&buf, source.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDatagram(d); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, err := source.NewReader(bytes.NewReader(buf.Bytes()), "back")
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.Next()
	if err != nil || b.Reassembled || b.Src != srv4 || b.Dst != cli4 || !bytes.Equal(b.Payload, big) || b.Truncated() {
		t.Fatalf("read back: %v %+v", err, b)
	}
}
