package source_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/source"
)

// fakeFrame is one frame a fakeSource gives.
type fakeFrame struct {
	data []byte
	lt   layers.LinkType
	intf int
	wire int
}

// fakeSource is a FrameSource over a list of frames, reusing one buffer as
// a live capture does.
type fakeSource struct {
	frames []fakeFrame
	intfs  []source.Interface
	buf    []byte
	closed bool
}

func (f *fakeSource) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if len(f.frames) == 0 {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	fr := f.frames[0]
	f.frames = f.frames[1:]
	f.buf = append(f.buf[:0], fr.data...)
	ci := gopacket.CaptureInfo{Timestamp: epoch, CaptureLength: len(fr.data), Length: max(fr.wire, len(fr.data)), InterfaceIndex: fr.intf}
	return f.buf, ci, fr.lt, nil
}

func (f *fakeSource) Interface(i int) source.Interface {
	if i < 0 || i >= len(f.intfs) {
		return source.Interface{}
	}
	return f.intfs[i]
}

func (f *fakeSource) Close() error { f.closed = true; return nil }

// TestFrameSource: a Reader reads any FrameSource; each datagram carries
// its frame as captured, its link type, wire length and interface; every
// frame is counted by link type, and a link type the reader cannot parse is
// counted and warned about.
func TestFrameSource(t *testing.T) {
	eth := ethernet(t, cli4, srv4, payloadA)
	cooked := sll(t, srv6, cli6, payloadB)
	src := &fakeSource{
		intfs: []source.Interface{{Name: "eth0", LinkType: layers.LinkTypeEthernet}, {Name: "any", LinkType: layers.LinkTypeLinuxSLL}},
		frames: []fakeFrame{
			{data: eth, lt: layers.LinkTypeEthernet, wire: len(eth) + 4},
			{data: tcpFrame(t), lt: layers.LinkTypeEthernet},
			{data: []byte("\x01\x02\x03\x04 token ring"), lt: layers.LinkTypeTokenRing},
			{data: cooked, lt: layers.LinkTypeLinuxSLL, intf: 1},
		},
	}
	r := source.NewFrameReader(src, "fake")
	type frame struct {
		n        int
		frame    []byte
		lt       layers.LinkType
		wire     int
		intf     int
		intfName string
		payload  []byte
	}
	var gs []frame
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Offset != -1 {
			t.Errorf("frame %d: offset %d from a source without offsets", d.N, d.Offset)
		}
		gs = append(gs, frame{d.N, bytes.Clone(d.Frame), d.LinkType, d.WireLength, d.Interface, d.InterfaceName, bytes.Clone(d.Payload)})
	}
	want := []frame{
		{1, eth, layers.LinkTypeEthernet, len(eth) + 4, 0, "eth0", payloadA},
		{4, cooked, layers.LinkTypeLinuxSLL, len(cooked), 1, "any", payloadB},
	}
	if len(gs) != len(want) {
		t.Fatalf("%d datagrams, want %d", len(gs), len(want))
	}
	for i, w := range want {
		g := gs[i]
		if g.n != w.n || !bytes.Equal(g.frame, w.frame) || g.lt != w.lt || g.wire != w.wire || g.intf != w.intf || g.intfName != w.intfName || !bytes.Equal(g.payload, w.payload) {
			t.Errorf("datagram %d: got %+v\nwant %+v", i, g, w)
		}
	}
	c := r.Counters()
	if c.Frames != 4 || c.NonUDP != 2 || c.Unsupported != 1 || c.Datagrams != 2 {
		t.Errorf("counters %+v", c)
	}
	if c.LinkTypes["Ethernet"] != 2 || c.LinkTypes["Linux SLL"] != 1 || c.LinkTypes[source.LinkTypeName(layers.LinkTypeTokenRing)] != 1 {
		t.Errorf("link types %v: every frame counts", c.LinkTypes)
	}
	ws := c.Warnings()
	if len(ws) != 1 || !bytes.Contains([]byte(ws[0]), []byte(source.LinkTypeName(layers.LinkTypeTokenRing))) {
		t.Errorf("warnings %q, want one naming the token ring link type", ws)
	}
	if err := r.Close(); err != nil || !src.closed {
		t.Errorf("Close: %v, source closed %v", err, src.closed)
	}
}

// TestCleanCaptureNoWarnings: a capture whose frames are all readable gives
// no warnings and no truncation.
func TestCleanCaptureNoWarnings(t *testing.T) {
	in := writePcap(t, layers.LinkTypeEthernet, 65535, record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch}, record{data: tcpFrame(t), ts: epoch})
	_, c, err := readAll(t, in)
	if err != io.EOF {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) != 0 || c.Truncated != 0 {
		t.Errorf("warnings %q, %d truncated", w, c.Truncated)
	}
	if c.LinkTypes["Ethernet"] != 2 {
		t.Errorf("link types %v, want 2 Ethernet frames (the TCP one too)", c.LinkTypes)
	}
}

// recordAt checks that the record at off in capture holds frame: a pcap
// record header then the frame, or a pcapng packet block with the frame.
func recordAt(t *testing.T, capture []byte, format string, off int64, frame []byte) {
	t.Helper()
	if off < 0 || off >= int64(len(capture)) {
		t.Fatalf("offset %d outside the %d-byte capture", off, len(capture))
	}
	rec := capture[off:]
	switch format {
	case "pcap":
		if n := binary.LittleEndian.Uint32(rec[8:]); int(n) != len(frame) || !bytes.Equal(rec[16:16+n], frame) {
			t.Errorf("offset %d: record of %d bytes, not the frame of %d", off, n, len(frame))
		}
	case "pcapng":
		if typ := binary.LittleEndian.Uint32(rec); typ != 6 {
			t.Fatalf("offset %d: block type %d, want an enhanced packet block", off, typ)
		}
		if n := binary.LittleEndian.Uint32(rec[20:]); int(n) != len(frame) || !bytes.Equal(rec[28:28+n], frame) {
			t.Errorf("offset %d: packet of %d bytes, not the frame of %d", off, n, len(frame))
		}
	}
}

// TestRecordOffsets: each datagram's Offset is where its record starts in
// the capture, in pcap and in pcapng (also after interface blocks that
// come between packets, and inside a gzip stream, as an offset in the
// inflated bytes).
func TestRecordOffsets(t *testing.T) {
	recs := []record{
		{data: ethernet(t, cli4, srv4, payloadA), ts: epoch},
		{data: tcpFrame(t), ts: epoch},
		{data: ethernet(t, srv4, cli4, payloadB), ts: epoch},
		{data: ethernet(t, cli6, srv6, bytes.Repeat([]byte("x"), 1001)), ts: epoch},
	}
	pcap := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)

	// A pcapng with an interface added, and statistics written, between
	// packets, and a packet of that interface.
	var b bytes.Buffer
	w, err := pcapgo.NewNgWriter(&b, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if i == 2 {
			if _, err := w.AddInterface(pcapgo.NgInterface{Name: "lo", LinkType: layers.LinkTypeRaw}); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{PacketsReceived: 5}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: r.ts, CaptureLength: len(r.data), Length: len(r.data)}, r.data); err != nil {
			t.Fatal(err)
		}
	}
	raw := ipPacket(t, srv4, cli4, payloadA)
	if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: epoch, CaptureLength: len(raw), Length: len(raw), InterfaceIndex: 1}, raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ng := b.Bytes()

	for _, tt := range []struct {
		name, format string
		in, plain    []byte
		datagrams    int
	}{
		{"pcap", "pcap", pcap, pcap, 3},
		{"pcapng", "pcapng", ng, ng, 4},
		{"gzip-pcapng", "pcapng", gz(ng), ng, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := source.NewReader(bytes.NewReader(tt.in), tt.name)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				d, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				recordAt(t, tt.plain, tt.format, d.Offset, d.Frame)
				n++
			}
			if n != tt.datagrams {
				t.Errorf("%d datagrams, want %d", n, tt.datagrams)
			}
			if r.Compressed() != (tt.name == "gzip-pcapng") {
				t.Errorf("Compressed %v", r.Compressed())
			}
		})
	}
}

// TestProgress: a file reader reports bytes read of the file's size, all
// of it at the end; a stream has no size.
func TestProgress(t *testing.T) {
	var recs []record
	for i := 0; i < 2000; i++ {
		recs = append(recs, record{data: ethernet(t, cli4, srv4, bytes.Repeat([]byte{byte(i)}, 200)), ts: epoch})
	}
	in := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	name := filepath.Join(t.TempDir(), "p.pcap")
	if err := os.WriteFile(name, in, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done, total := r.Progress()
	if total != int64(len(in)) || done <= 0 || done >= total {
		t.Errorf("at the start: %d of %d bytes, want some of %d", done, total, len(in))
	}
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if done, total := r.Progress(); done != total {
		t.Errorf("at the end: %d of %d bytes", done, total)
	}
	s, err := source.NewReader(bytes.NewReader(in), "stream")
	if err != nil {
		t.Fatal(err)
	}
	if _, total := s.Progress(); total != -1 {
		t.Errorf("stream size %d, want -1", total)
	}
}

// unfragmented checks that the frame of a reassembled datagram is the
// link header of its last fragment, an IPv4 header without fragmentation
// with a right checksum and length, and the whole UDP datagram.
func unfragmented(t *testing.T, frame, last, payload []byte) {
	t.Helper()
	pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if ip == nil || udp == nil || pkt.ErrorLayer() != nil {
		t.Fatalf("frame of a reassembled datagram does not decode: %v", pkt)
	}
	if ip.Flags&layers.IPv4MoreFragments != 0 || ip.FragOffset != 0 || int(ip.Length) != len(frame)-14 || !bytes.Equal(udp.Payload, payload) {
		t.Errorf("reassembled frame: flags %v offset %d length %d of %d, %d payload bytes", ip.Flags, ip.FragOffset, ip.Length, len(frame)-14, len(udp.Payload))
	}
	check := append([]byte(nil), frame[14:34]...)
	check[10], check[11] = 0, 0
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(check[i])<<8 | uint32(check[i+1])
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	if ^uint16(sum) != ip.Checksum {
		t.Errorf("IPv4 checksum %#x, want %#x", ip.Checksum, ^uint16(sum))
	}
	if !bytes.Equal(frame[:14], last[:14]) || ip.Id != binary.BigEndian.Uint16(last[18:]) {
		t.Error("the link header or IPv4 identification is not the last fragment's")
	}
}

// TestPrefetcherKeepsFrames: datagrams from a Prefetcher carry their frame
// and a payload inside it, as the reader gave them.
func TestPrefetcherKeepsFrames(t *testing.T) {
	var recs []record
	for i := 0; i < 3000; i++ {
		recs = append(recs, record{data: ethernet(t, cli4, srv4, bytes.Repeat([]byte{byte(i)}, 1+i%900)), ts: epoch.Add(time.Duration(i))})
	}
	big := bytes.Repeat([]byte("stdf"), 400)
	frags := fragments(t, srv4, cli4, big, 9, 512)
	for _, f := range frags {
		recs = append(recs, record{data: f, ts: epoch})
	}
	in := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	r, err := source.NewReader(bytes.NewReader(in), "p")
	if err != nil {
		t.Fatal(err)
	}
	p := source.Prefetch(r)
	defer p.Close()
	n := 0
	for {
		d, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n < len(recs)-len(frags) {
			if !bytes.Equal(d.Frame, recs[n].data) || !bytes.Equal(d.Payload, bytes.Repeat([]byte{byte(n)}, 1+n%900)) {
				t.Fatalf("datagram %d: frame or payload differ", n)
			}
		} else {
			if !d.Reassembled || !bytes.Equal(d.Payload, big) {
				t.Fatalf("reassembled datagram: %d bytes", len(d.Payload))
			}
			unfragmented(t, d.Frame, frags[len(frags)-1], big)
		}
		n++
	}
	if n != len(recs)-len(frags)+1 {
		t.Errorf("%d datagrams", n)
	}
}
