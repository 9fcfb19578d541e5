package source_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/source"
)

type want struct {
	n        int
	src, dst netip.AddrPort
	payload  []byte
	length   int // UDP payload length claimed; 0: len(payload)
	reasm    bool
	ts       time.Time
}

type got struct {
	n           int
	src, dst    netip.AddrPort
	payload     []byte
	length      int
	truncated   bool
	reassembled bool
	ts          time.Time
}

// readAll reads every datagram and the final error.
func readAll(t *testing.T, in []byte) ([]got, source.Counters, error) {
	t.Helper()
	r, err := source.NewReader(bytes.NewReader(in), "test")
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var out []got
	for {
		d, err := r.Next()
		if err != nil {
			// The error is sticky.
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("second Next after %v returned %v", err, err2)
			}
			return out, r.Counters(), err
		}
		out = append(out, got{d.N, d.Src, d.Dst, bytes.Clone(d.Payload), d.Length, d.Truncated(), d.Reassembled, d.TS})
	}
}

func check(t *testing.T, gs []got, ws []want) {
	t.Helper()
	if len(gs) != len(ws) {
		t.Fatalf("%d datagrams, want %d: %+v", len(gs), len(ws), gs)
	}
	for i, w := range ws {
		g := gs[i]
		length := w.length
		if length == 0 {
			length = len(w.payload)
		}
		if g.n != w.n || g.src != w.src || g.dst != w.dst || !bytes.Equal(g.payload, w.payload) ||
			g.length != length || g.reassembled != w.reasm || g.truncated != (len(w.payload) < length) {
			t.Errorf("datagram %d:\n got  N=%d %v -> %v len %d/%d trunc %v reasm %v % x\n want N=%d %v -> %v len %d/%d reasm %v % x",
				i, g.n, g.src, g.dst, len(g.payload), g.length, g.truncated, g.reassembled, head(g.payload),
				w.n, w.src, w.dst, len(w.payload), length, w.reasm, head(w.payload))
		}
		if !w.ts.IsZero() && !g.ts.Equal(w.ts) {
			t.Errorf("datagram %d: time %v, want %v", i, g.ts, w.ts)
		}
	}
}

func head(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}

type builder func(testing.TB, netip.AddrPort, netip.AddrPort, []byte) []byte

var (
	payloadA = []byte("cdat\x01\x00\x00\x01\x2c\x11")
	payloadB = []byte("SJON\x00\x04\x00\x00\x00\xc8\x00\x00\x00\x02\x28\x01\x0b\x00\x03\xed\x00")
)

func TestLinkTypes(t *testing.T) {
	tests := []struct {
		name     string
		lt       layers.LinkType
		build    builder
		cli, srv netip.AddrPort
	}{
		{"ethernet-ipv4", layers.LinkTypeEthernet, ethernet, cli4, srv4},
		{"ethernet-ipv6", layers.LinkTypeEthernet, ethernet, cli6, srv6},
		{"vlan-ipv4", layers.LinkTypeEthernet, vlan, cli4, srv4},
		{"vlan-ipv6", layers.LinkTypeEthernet, vlan, cli6, srv6},
		{"qinq-ipv4", layers.LinkTypeEthernet, qinq, cli4, srv4},
		{"padded-ipv4", layers.LinkTypeEthernet, padded, cli4, srv4},
		{"sll-ipv4", layers.LinkTypeLinuxSLL, sll, cli4, srv4},
		{"sll-ipv6", layers.LinkTypeLinuxSLL, sll, cli6, srv6},
		{"sll2-ipv4", layers.LinkTypeLinuxSLL2, sll2, cli4, srv4},
		{"sll2-ipv6", layers.LinkTypeLinuxSLL2, sll2, cli6, srv6},
		{"null-le-ipv4", layers.LinkTypeNull, null(binary.LittleEndian, 2), cli4, srv4},
		{"null-be-ipv4", layers.LinkTypeNull, null(binary.BigEndian, 2), cli4, srv4},
		{"null-le-ipv6-bsd", layers.LinkTypeNull, null(binary.LittleEndian, 24), cli6, srv6},
		{"null-le-ipv6-darwin", layers.LinkTypeNull, null(binary.LittleEndian, 30), cli6, srv6},
		{"null-be-ipv6-freebsd", layers.LinkTypeNull, null(binary.BigEndian, 28), cli6, srv6},
		{"loop-ipv4", layers.LinkTypeLoop, null(binary.BigEndian, 2), cli4, srv4},
		{"raw-ipv4", layers.LinkTypeRaw, ipPacket, cli4, srv4},
		{"raw-ipv6", layers.LinkTypeRaw, ipPacket, cli6, srv6},
		{"bsd-raw-12-ipv4", layers.LinkType(12), ipPacket, cli4, srv4},
		{"ipv4", layers.LinkTypeIPv4, ipPacket, cli4, srv4},
		{"ipv6", layers.LinkTypeIPv6, ipPacket, cli6, srv6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := []record{
				{data: tt.build(t, tt.cli, tt.srv, payloadA), ts: epoch},
				{data: tt.build(t, tt.srv, tt.cli, payloadB), ts: epoch.Add(25 * time.Millisecond)},
				{data: tt.build(t, tt.cli, tt.srv, nil), ts: epoch.Add(time.Second)}, // empty payload
			}
			ws := []want{
				{n: 1, src: tt.cli, dst: tt.srv, payload: payloadA, ts: epoch},
				{n: 2, src: tt.srv, dst: tt.cli, payload: payloadB, ts: epoch.Add(25 * time.Millisecond)},
				{n: 3, src: tt.cli, dst: tt.srv, payload: []byte{}},
			}
			for _, format := range []string{"pcap", "pcapng"} {
				var in []byte
				if format == "pcap" {
					in = writePcap(t, tt.lt, 65535, recs...)
				} else {
					in = writePcapng(t, []layers.LinkType{tt.lt}, recs...)
				}
				gs, c, err := readAll(t, in)
				if err != io.EOF {
					t.Errorf("%s: final error %v, want io.EOF", format, err)
				}
				check(t, gs, ws)
				if c.Frames != 3 || c.Datagrams != 3 || c.NonUDP != 0 || c.BadFrames != 0 || c.LinkTypes[source.LinkTypeName(tt.lt)] != 3 {
					t.Errorf("%s: counters %+v", format, c)
				}
			}
		})
	}
}

func TestFormats(t *testing.T) {
	recs := []record{
		{data: ethernet(t, cli4, srv4, payloadA), ts: epoch.Add(123456789 * time.Nanosecond)},
		{data: ethernet(t, srv4, cli4, payloadB), ts: epoch.Add(2 * time.Second)},
	}
	ws := []want{
		{n: 1, src: cli4, dst: srv4, payload: payloadA},
		{n: 2, src: srv4, dst: cli4, payload: payloadB, ts: epoch.Add(2 * time.Second)},
	}
	pcap := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	var nanos bytes.Buffer
	w := pcapgo.NewWriterNanos(&nanos)
	w.WriteFileHeader(65535, layers.LinkTypeEthernet)
	for _, r := range recs {
		w.WritePacket(ciOf(r), r.data)
	}
	ng := writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet}, recs...)
	tests := []struct {
		name, format string
		in           []byte
		ts           time.Time // of the first record
	}{
		{"pcap", "pcap", pcap, epoch.Add(123456 * time.Microsecond)},
		{"pcap-nanos", "pcap", nanos.Bytes(), epoch.Add(123456789 * time.Nanosecond)},
		{"pcapng", "pcapng", ng, epoch.Add(123456789 * time.Nanosecond)},
		{"pcap-gzip", "pcap", gz(pcap), epoch.Add(123456 * time.Microsecond)},
		{"pcapng-gzip", "pcapng", gz(ng), epoch.Add(123456789 * time.Nanosecond)},
		{"pcap-big-endian", "pcap", bigEndianPcap(t, pcap), epoch.Add(123456 * time.Microsecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := source.NewReader(bytes.NewReader(tt.in), tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != tt.format || r.Name() != tt.name {
				t.Errorf("format %q name %q", r.Format(), r.Name())
			}
			gs, _, err := readAll(t, tt.in)
			if err != io.EOF {
				t.Errorf("final error %v", err)
			}
			ws[0].ts = tt.ts
			check(t, gs, ws)
		})
	}
}

func ciOf(r record) (ci gopacket.CaptureInfo) {
	ci.Timestamp, ci.CaptureLength, ci.Length = r.ts, len(r.data), max(r.length, len(r.data))
	return ci
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// bigEndianPcap rewrites a little-endian pcap file in big-endian order.
func bigEndianPcap(t *testing.T, le []byte) []byte {
	out := make([]byte, 0, len(le))
	h := le[:24]
	out = binary.BigEndian.AppendUint32(out, binary.LittleEndian.Uint32(h[0:]))
	out = binary.BigEndian.AppendUint16(out, binary.LittleEndian.Uint16(h[4:]))
	out = binary.BigEndian.AppendUint16(out, binary.LittleEndian.Uint16(h[6:]))
	for i := 8; i < 24; i += 4 {
		out = binary.BigEndian.AppendUint32(out, binary.LittleEndian.Uint32(h[i:]))
	}
	for rest := le[24:]; len(rest) > 0; {
		for i := 0; i < 16; i += 4 {
			out = binary.BigEndian.AppendUint32(out, binary.LittleEndian.Uint32(rest[i:]))
		}
		n := int(binary.LittleEndian.Uint32(rest[8:]))
		out = append(out, rest[16:16+n]...)
		rest = rest[16+n:]
	}
	if bytes.Equal(out[:4], le[:4]) {
		t.Fatal("magic unchanged")
	}
	return out
}

func TestPcapngTwoInterfaces(t *testing.T) {
	in := writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeRaw},
		record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch, intf: 0},
		record{data: sll(t, srv4, cli4, payloadB), ts: epoch, intf: 1},
		record{data: ipPacket(t, cli6, srv6, payloadB), ts: epoch, intf: 2},
		record{data: ethernet(t, srv6, cli6, payloadA), ts: epoch, intf: 0},
	)
	gs, c, err := readAll(t, in)
	if err != io.EOF {
		t.Errorf("final error %v", err)
	}
	check(t, gs, []want{
		{n: 1, src: cli4, dst: srv4, payload: payloadA},
		{n: 2, src: srv4, dst: cli4, payload: payloadB},
		{n: 3, src: cli6, dst: srv6, payload: payloadB},
		{n: 4, src: srv6, dst: cli6, payload: payloadA},
	})
	if c.LinkTypes[source.LinkTypeName(layers.LinkTypeEthernet)] != 2 || c.LinkTypes[source.LinkTypeName(layers.LinkTypeLinuxSLL)] != 1 ||
		c.LinkTypes[source.LinkTypeName(layers.LinkTypeRaw)] != 1 {
		t.Errorf("link types %v", c.LinkTypes)
	}
}

func TestFragments(t *testing.T) {
	big := make([]byte, 3000)
	for i := range big {
		big[i] = byte(i * 31)
	}
	copy(big, "stdf")
	frags := fragments(t, srv4, cli4, big, 0x4242, 1008)
	if len(frags) != 3 {
		t.Fatalf("%d fragments", len(frags))
	}
	other := ethernet(t, cli4, srv4, payloadA)
	tests := []struct {
		name  string
		order []int // indexes into frags; -1: the other datagram
		ws    []want
	}{
		{"in order", []int{0, 1, 2, -1}, []want{
			{n: 3, src: srv4, dst: cli4, payload: big, reasm: true},
			{n: 4, src: cli4, dst: srv4, payload: payloadA}}},
		{"out of order", []int{2, 0, -1, 1}, []want{
			{n: 3, src: cli4, dst: srv4, payload: payloadA},
			{n: 4, src: srv4, dst: cli4, payload: big, reasm: true}}},
		{"last first", []int{2, 1, 0}, []want{
			{n: 3, src: srv4, dst: cli4, payload: big, reasm: true}}},
		{"one missing", []int{0, 2, -1}, []want{
			{n: 3, src: cli4, dst: srv4, payload: payloadA}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var recs []record
			nfrag := 0
			for i, k := range tt.order {
				ts := epoch.Add(time.Duration(i) * time.Millisecond)
				if k < 0 {
					recs = append(recs, record{data: other, ts: ts})
				} else {
					recs = append(recs, record{data: frags[k], ts: ts})
					nfrag++
				}
			}
			gs, c, err := readAll(t, writePcap(t, layers.LinkTypeEthernet, 65535, recs...))
			if err != io.EOF {
				t.Errorf("final error %v", err)
			}
			check(t, gs, tt.ws)
			if c.Fragments != nfrag || c.Frames != len(recs) {
				t.Errorf("counters %+v", c)
			}
		})
	}
}

func TestSnaplen(t *testing.T) {
	payload := bytes.Repeat([]byte{0xab}, 100)
	copy(payload, "stdf")
	full := ethernet(t, srv4, cli4, payload)
	small := ethernet(t, cli4, srv4, payloadA) // 14+20+8+10 = 52 bytes: fits
	const snap = 60
	in := writePcap(t, layers.LinkTypeEthernet, snap,
		record{data: full[:snap], length: len(full), ts: epoch},
		record{data: small, ts: epoch},
	)
	gs, c, err := readAll(t, in)
	if err != io.EOF {
		t.Errorf("final error %v", err)
	}
	check(t, gs, []want{
		{n: 1, src: srv4, dst: cli4, payload: payload[:snap-42], length: 100},
		{n: 2, src: cli4, dst: srv4, payload: payloadA},
	})
	if c.Truncated != 1 || c.Datagrams != 2 {
		t.Errorf("counters %+v", c)
	}
}

func TestCutRecord(t *testing.T) {
	recs := []record{
		{data: ethernet(t, cli4, srv4, payloadA), ts: epoch},
		{data: ethernet(t, srv4, cli4, payloadB), ts: epoch},
		{data: ethernet(t, cli4, srv4, payloadB), ts: epoch},
	}
	pcap := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	ng := writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet}, recs...)
	last := len(recs[2].data)
	tests := []struct {
		name string
		in   []byte
	}{
		{"pcap in record data", pcap[:len(pcap)-last/2]},
		{"pcap in record header", pcap[:len(pcap)-last-7]},
		{"pcap after record header", pcap[:len(pcap)-last]}, // a header whose data is missing: cut, not the end
		{"pcapng in packet data", ng[:len(ng)-last/2]},
		{"pcapng in block header", ng[:len(ng)-last-30]},
		{"pcapng in block trailer", ng[:len(ng)-2]},
		{"gzip pcap in record data", gz(pcap[:len(pcap)-last/2])},
		{"gzip stream cut", gz(pcap)[:len(gz(pcap))-10]},
	}
	ws := []want{
		{n: 1, src: cli4, dst: srv4, payload: payloadA},
		{n: 2, src: srv4, dst: cli4, payload: payloadB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, _, err := readAll(t, tt.in)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("final error %v, want one wrapping io.ErrUnexpectedEOF", err)
			}
			if tt.name == "gzip stream cut" {
				// Only the gzip trailer (and maybe the last bytes of the
				// deflate stream) is lost: up to all three datagrams.
				if len(gs) < 2 {
					t.Errorf("%d datagrams before the cut", len(gs))
				}
				return
			}
			check(t, gs, ws)
		})
	}
}

func TestNotACapture(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"one byte", []byte{0xd4}},
		{"three bytes of a magic", []byte{0xd4, 0xc3, 0xb2}},
		{"text", []byte("this is not a capture file\n")},
		{"gzip text", gz([]byte("this is not a capture file\n"))},
		{"gzip empty", gz(nil)},
		{"elf", []byte("\x7fELF\x02\x01\x01\x00")},
	}
	for _, tt := range tests {
		r, err := source.NewReader(bytes.NewReader(tt.in), tt.name)
		if !errors.Is(err, source.ErrFormat) || r != nil {
			t.Errorf("%s: %v, want ErrFormat", tt.name, err)
		}
	}
	// A pcap magic with a cut header is not ErrFormat but still an error.
	pcap := writePcap(t, layers.LinkTypeEthernet, 65535)
	if _, err := source.NewReader(bytes.NewReader(pcap[:10]), "cut"); err == nil {
		t.Error("a 10-byte pcap header was accepted")
	}
	// A valid header and nothing else is an empty capture.
	for _, in := range [][]byte{pcap, writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet})} {
		gs, c, err := readAll(t, in)
		if err != io.EOF || len(gs) != 0 || c.Frames != 0 {
			t.Errorf("empty capture: %d datagrams, %v", len(gs), err)
		}
	}
	if _, err := source.Open(filepath.Join(t.TempDir(), "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
}

func TestNonUDP(t *testing.T) {
	badIP := ethernet(t, cli4, srv4, payloadA)[:14+12] // IPv4 header cut
	in := writePcap(t, layers.LinkTypeEthernet, 65535,
		record{data: tcpFrame(t), ts: epoch},
		record{data: arpFrame(t), ts: epoch},
		record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch},
		record{data: badIP, ts: epoch},
		record{data: ethernet(t, cli6, srv6, payloadB), ts: epoch},
	)
	gs, c, err := readAll(t, in)
	if err != io.EOF {
		t.Errorf("final error %v", err)
	}
	check(t, gs, []want{
		{n: 3, src: cli4, dst: srv4, payload: payloadA},
		{n: 5, src: cli6, dst: srv6, payload: payloadB},
	})
	if c.Frames != 5 || c.NonUDP != 2 || c.BadFrames != 1 || c.Datagrams != 2 {
		t.Errorf("counters %+v", c)
	}
	// A link type the reader does not know is counted as non-UDP.
	in = writePcap(t, layers.LinkTypePPP, 65535, record{data: ipPacket(t, cli4, srv4, payloadA), ts: epoch})
	gs, c, _ = readAll(t, in)
	if len(gs) != 0 || c.NonUDP != 1 {
		t.Errorf("PPP capture: %d datagrams, counters %+v", len(gs), c)
	}
}

func TestFrameBase(t *testing.T) {
	in := writePcap(t, layers.LinkTypeEthernet, 65535,
		record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch},
		record{data: tcpFrame(t), ts: epoch},
		record{data: ethernet(t, cli4, srv4, payloadB), ts: epoch})
	r, err := source.NewReader(bytes.NewReader(in), "second")
	if err != nil {
		t.Fatal(err)
	}
	r.SetFrameBase(100)
	var ns []int
	for d, err := r.Next(); err == nil; d, err = r.Next() {
		ns = append(ns, d.N)
	}
	if len(ns) != 2 || ns[0] != 101 || ns[1] != 103 {
		t.Errorf("frame numbers %v, want [101 103]", ns)
	}
}

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.pcap.gz")
	if err := os.WriteFile(path, gz(writePcap(t, layers.LinkTypeEthernet, 65535,
		record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch})), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Next()
	if err != nil || !bytes.Equal(d.Payload, payloadA) {
		t.Errorf("Next: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	bad := filepath.Join(dir, "bad.pcap")
	os.WriteFile(bad, []byte("not a capture"), 0o644)
	if _, err := source.Open(bad); !errors.Is(err, source.ErrFormat) {
		t.Errorf("Open(bad): %v", err)
	}
}

// TestRealPcapAndPcapng: the legacy basic session was recorded by tcpdump
// and dumpcap at the same time; both hold the same 7332 UDP payloads in the
// same order.
func TestRealPcapAndPcapng(t *testing.T) {
	read := func(name string) ([][]byte, *source.Reader) {
		path := realcap.Path(t, "legacy/basic/"+name)
		r, err := source.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out [][]byte
		for {
			d, err := r.Next()
			if err == io.EOF {
				return out, r
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Src.Addr() != netip.MustParseAddr("127.0.0.1") || d.Truncated() || d.N != len(out)+1 {
				t.Fatalf("%s frame %d: %v -> %v truncated %v", name, d.N, d.Src, d.Dst, d.Truncated())
			}
			out = append(out, bytes.Clone(d.Payload))
		}
	}
	a, ra := read("capture.pcap")
	b, rb := read("capture.pcapng")
	if len(a) != 7332 || len(b) != 7332 {
		t.Fatalf("%d and %d datagrams, manifest says 7332", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("datagram %d differs between pcap and pcapng", i+1)
		}
	}
	if ra.Format() != "pcap" || rb.Format() != "pcapng" || ra.Counters().LinkTypes["Ethernet"] != 7332 {
		t.Errorf("formats %s %s, link types %v", ra.Format(), rb.Format(), ra.Counters().LinkTypes)
	}
}

// endless is a pcap stream of n datagrams made on the fly.
type endless struct {
	hdr, rec []byte
	n, pos   int
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.hdr) > 0 {
		k := copy(p, e.hdr)
		e.hdr = e.hdr[k:]
		return k, nil
	}
	if e.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, e.rec[e.pos:])
	if e.pos += k; e.pos == len(e.rec) {
		e.pos = 0
		e.n--
	}
	return k, nil
}

// TestConstantMemory reads a long capture from a stream: the heap does not
// grow with its length.
func TestConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	one := writePcap(t, layers.LinkTypeEthernet, 65535, record{data: ethernet(t, cli4, srv4, bytes.Repeat([]byte("stdf"), 250)), ts: epoch})
	const n = 300000
	r, err := source.NewReader(&endless{hdr: one[:24], rec: one[24:], n: n}, "endless")
	if err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var before uint64
	for i := 0; ; i++ {
		if i == 10000 {
			before = heap()
		}
		if _, err := r.Next(); err != nil {
			if err != io.EOF || i != n {
				t.Fatalf("after %d datagrams: %v", i, err)
			}
			break
		}
	}
	if after := heap(); after > before+1<<20 {
		t.Errorf("heap grew from %d to %d bytes over %d datagrams (~300 MB read)", before, after, n)
	}
}

// TestPrefetcher: the prefetching reader returns the same datagrams as the
// plain one, across batch boundaries (by count and by payload bytes), then
// the same final error and counters.
func TestPrefetcher(t *testing.T) {
	var recs []record
	for i := 0; i < 5000; i++ {
		size := 10 + i%7
		if i%3 == 0 {
			size = 1000 // about 1.7 MB of payload in all: several slabs
		}
		p := make([]byte, size)
		binary.BigEndian.PutUint32(p, uint32(i))
		recs = append(recs, record{data: ethernet(t, cli4, srv4, p), ts: epoch.Add(time.Duration(i) * time.Millisecond)})
		if i%500 == 0 {
			recs = append(recs, record{data: tcpFrame(t), ts: epoch})
		}
	}
	whole := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	for _, tt := range []struct {
		name string
		in   []byte
	}{{"whole", whole}, {"cut", whole[:len(whole)-500]}, {"empty", writePcap(t, layers.LinkTypeEthernet, 65535)}} {
		t.Run(tt.name, func(t *testing.T) {
			want, wantCounters, wantErr := readAll(t, tt.in)
			r, err := source.NewReader(bytes.NewReader(tt.in), "test") // as readAll names it
			if err != nil {
				t.Fatal(err)
			}
			p := source.Prefetch(r)
			defer p.Close()
			i := 0
			for {
				d, err := p.Next()
				if err != nil {
					if err.Error() != wantErr.Error() || errors.Is(err, io.ErrUnexpectedEOF) != errors.Is(wantErr, io.ErrUnexpectedEOF) {
						t.Errorf("final error %v, want %v", err, wantErr)
					}
					if _, err2 := p.Next(); err2 != err {
						t.Errorf("error not sticky: %v", err2)
					}
					break
				}
				if i >= len(want) {
					t.Fatalf("more than %d datagrams", len(want))
				}
				w := want[i]
				if d.N != w.n || d.Src != w.src || !bytes.Equal(d.Payload, w.payload) || !d.TS.Equal(w.ts) {
					t.Fatalf("datagram %d: N %d, %d bytes; want N %d, %d bytes", i, d.N, len(d.Payload), w.n, len(w.payload))
				}
				i++
			}
			if i != len(want) {
				t.Errorf("%d datagrams, want %d", i, len(want))
			}
			c := p.Counters()
			if c.Frames != wantCounters.Frames || c.Datagrams != wantCounters.Datagrams || c.NonUDP != wantCounters.NonUDP {
				t.Errorf("counters %+v, want %+v", c, wantCounters)
			}
		})
	}
	// Close in the middle stops the reading goroutine.
	r, _ := source.NewReader(bytes.NewReader(whole), "early")
	p := source.Prefetch(r)
	if _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p.Close()
}

// TestPrefetchPrepared: prepare sees each batch on the reading goroutine
// before Next hands it out, and Prepared gives each datagram what prepare
// made of it; a batch's aux comes back to prepare for reuse.
func TestPrefetchPrepared(t *testing.T) {
	var recs []record
	for i := 0; i < 6000; i++ {
		p := make([]byte, 8+i%900)
		binary.BigEndian.PutUint32(p, uint32(i))
		recs = append(recs, record{data: ethernet(t, cli4, srv4, p), ts: epoch.Add(time.Duration(i) * time.Millisecond)})
	}
	r, err := source.NewReader(bytes.NewReader(writePcap(t, layers.LinkTypeEthernet, 65535, recs...)), "test")
	if err != nil {
		t.Fatal(err)
	}
	batches, reused := 0, 0
	p := source.PrefetchPrepared(r, func(dgs []source.Datagram, aux *any) {
		batches++
		ns, _ := (*aux).([]uint32)
		if ns != nil {
			reused++
		}
		ns = ns[:0]
		for i := range dgs {
			ns = append(ns, binary.BigEndian.Uint32(dgs[i].Payload))
		}
		*aux = ns
	})
	defer p.Close()
	if aux, i := p.Prepared(); aux != nil || i != -1 {
		t.Errorf("Prepared before Next = %v, %d; want nil, -1", aux, i)
	}
	n := 0
	for {
		d, err := p.Next()
		if err != nil {
			break
		}
		aux, i := p.Prepared()
		ns, ok := aux.([]uint32)
		if !ok || i < 0 || i >= len(ns) {
			t.Fatalf("datagram %d: Prepared = %T, %d", n, aux, i)
		}
		if want := binary.BigEndian.Uint32(d.Payload); ns[i] != want || want != uint32(n) {
			t.Fatalf("datagram %d: prepared %d, payload %d", n, ns[i], want)
		}
		n++
	}
	if n != len(recs) {
		t.Errorf("%d datagrams, want %d", n, len(recs))
	}
	if batches < 6 || reused == 0 {
		t.Errorf("%d batches, %d with an aux to reuse; want several, some reused", batches, reused)
	}
}
