package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
)

// datagram is one UDP datagram for a test capture.
type datagram struct {
	src, dst string // "ip:port"
	payload  []byte
}

// writeCapture writes an Ethernet/IPv4/UDP pcap of the datagrams to a temp file.
func writeCapture(t *testing.T, dgs []datagram) string {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, d := range dgs {
		sa, _ := net.ResolveUDPAddr("udp4", d.src)
		da, _ := net.ResolveUDPAddr("udp4", d.dst)
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: sa.IP.To4(), DstIP: da.IP.To4()}
		udp := &layers.UDP{SrcPort: layers.UDPPort(sa.Port), DstPort: layers.UDPPort(da.Port)}
		udp.SetNetworkLayerForChecksum(ip)
		sb := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, udp, gopacket.Payload(d.payload)); err != nil {
			t.Fatal(err)
		}
		data := sb.Bytes()
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * 25 * time.Millisecond), CaptureLength: len(data), Length: len(data)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "test.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func enc(p *decode.Packet) []byte { return decode.Encode(nil, p) }

const (
	cli    = "10.1.1.2:24785"
	listen = "10.1.1.1:24785"
	srv    = "10.1.1.1:40001"
)

// modernGame is a short modern-era conversation with a few bad packets.
func modernGame() []datagram {
	stdf := decode.MustNew(decode.Modern, "stdf").Set("src", 0).Set("dst", 5).Set("count", 1).SetBytes("data", []byte{1, 2, 3})
	short := enc(stdf)[:20]
	lying := enc(decode.MustNew(decode.Modern, "stdf").Set("dst", 6).Set("count", 1).SetBytes("data", []byte{1, 2, 3}).Set("size", 900))
	return []datagram{
		{cli, listen, enc(decode.MustNew(decode.Modern, "1234"))},
		{srv, cli, enc(decode.MustNew(decode.Modern, "5678"))},
		{cli, srv, enc(decode.MustNew(decode.Modern, "cjon").Set("color", 8).SetBytes("hostname", []byte("box")))},
		{srv, cli, enc(decode.MustNew(decode.Modern, "sjon").Set("level", 1).Set("frame", 4).Set("player", 3).Set("color", 9))},
		{srv, cli, enc(stdf)},
		{cli, srv, enc(decode.MustNew(decode.Modern, "cdat").Set("player", 3).Set("frame", 7).Set("move", 0x21))},
		{srv, cli, short},
		{srv, cli, lying},
		{cli, srv, []byte("gulp\x01\x02\x03")},
		{"10.9.9.9:53", "10.9.9.8:5353", []byte("\x12\x34\x01\x00\x00\x01 not a game packet")},
		{cli, "10.9.9.9:9999", []byte("xxxxxxxxxxxx")},  // the client's host, other traffic
		{"10.5.5.5:1000", "10.5.5.6:9", []byte("ping")}, // a common word, no game near
	}
}

func TestReadDecodesAndReportsBadPackets(t *testing.T) {
	path := writeCapture(t, modernGame())
	out, errs, code := pmdump("read", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9 (the non-game datagram skipped):\n%s", len(lines), out)
	}
	checks := []struct {
		line int
		want []string
	}{
		{0, []string{"   1 ", "10.1.1.2:24785 → 10.1.1.1:24785", "c→s", "1234"}},
		{2, []string{"cjon", `hostname="box"`, "color=8"}},
		{3, []string{"s→c", "p3", "sjon", "player=3"}},
		{4, []string{"p3", "stdf", "src=0", "dst=5", "size=3"}},
		{5, []string{"cdat", "move=33[left|fire]"}},
		{6, []string{"    7 ", "stdf", "malformed", "shorter than its layout"}},
		{7, []string{"stdf", "malformed", "size 900 but 3 bytes follow"}},
		{8, []string{"gulp", "unknown packet", "67756c70010203"}},
	}
	for _, c := range checks {
		for _, w := range c.want {
			if !strings.Contains(lines[c.line], w) {
				t.Errorf("line %d %q does not contain %q", c.line+1, lines[c.line], w)
			}
		}
	}

	out, _, _ = pmdump("stats", "--json", path)
	var rep engine.Stats
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Malformed.Packets != 2 || rep.Unknown.Packets != 1 || rep.NonGame.Packets != 3 || rep.Game.Packets != 6 {
		t.Errorf("stats: game %d malformed %d unknown %d non-game %d; want 6 2 1 3",
			rep.Game.Packets, rep.Malformed.Packets, rep.Unknown.Packets, rep.NonGame.Packets)
	}
	if len(rep.Convs) != 1 {
		t.Fatalf("%d conversations, want 1", len(rep.Convs))
	}
	c := rep.Convs[0]
	if c.Client != cli || c.Server != srv || c.Listen != listen || c.Hostname != "box" || c.Player == nil || *c.Player != 3 || c.Era != "modern" {
		t.Errorf("conversation %+v", c)
	}

	out, _, _ = pmdump("read", "--json", path)
	var bad map[string]any
	if err := json.Unmarshal([]byte(strings.Split(out, "\n")[6]), &bad); err != nil {
		t.Fatal(err)
	}
	if bad["error"] == nil || bad["raw"] == nil || bad["num"].(float64) != 7 {
		t.Errorf("malformed packet JSON lacks error, raw or n: %v", bad)
	}
}

func TestReadFlags(t *testing.T) {
	path := writeCapture(t, modernGame())
	cases := []struct {
		name  string
		args  []string
		lines int
		want  string
	}{
		{"count", []string{"read", "-c", "3", path}, 3, "cjon"},
		{"filter name", []string{"read", "-Y", "stdf", path}, 3, "stdf"},
		{"filter field", []string{"read", "-Y", "stdf and dst == 5 and not malformed", path}, 1, "dst=5"},
		{"filter player and dir", []string{"read", "-Y", "player == 3 and c2s", path}, 2, "cdat"},
		{"filter frame range", []string{"read", "-Y", "frame in 6..7", path}, 2, "move="},
		{"filter or", []string{"read", "-Y", "unknown or malformed", path}, 3, "gulp"},
		{"filter missing field", []string{"read", "-Y", "slsn > 0", path}, 0, ""},
		{"filter type", []string{"read", "-Y", `type == "cjon"`, path}, 1, "cjon"},
		{"filter count field", []string{"read", "-Y", "count == 1 and len == 26 and not malformed", path}, 1, "dst=5"},
		{"filter frame number", []string{"read", "-Y", "num >= 9", path}, 1, "gulp"},
		{"verbose", []string{"read", "-V", "-Y", "cdat", path}, 6, "[ 9] move u8: 33[left|fire]"},
		{"hex", []string{"read", "-x", "-Y", "cdat", path}, 2, "63 64 61 74"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := pmdump(c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if n := strings.Count(out, "\n"); n != c.lines {
				t.Errorf("%d lines, want %d:\n%s", n, c.lines, out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, out)
			}
		})
	}
}

func TestExitStatus(t *testing.T) {
	good := writeCapture(t, modernGame())
	notCapture := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notCapture, []byte("these are not the packets you are looking for"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"ok", []string{"read", good}, 0, ""},
		{"no args", []string{"read"}, 1, "no capture to read"},
		{"no args stats", []string{"stats"}, 1, "no capture to read"},
		{"bad flag", []string{"read", "--bogus", good}, 1, "unknown flag"},
		{"bad filter", []string{"read", "-Y", "stdf and (", good}, 1, "filter"},
		{"bad era", []string{"read", "--era", "future", good}, 1, "unknown version"},
		{"unknown command", []string{"frobnicate"}, 1, "unknown command"},
		{"missing file", []string{"read", "/nonexistent/x.pcap"}, 2, "no such file"},
		{"not a capture", []string{"stats", notCapture}, 2, "not a pcap or pcapng"},
		{"one bad of two", []string{"read", good, notCapture}, 2, "1 of 2 inputs"},
		{"no command", []string{}, 1, "no command given"},
		{"stats -r", []string{"stats", "-r", good}, 0, ""},
		{"json with -V", []string{"read", "--json", "-V", good}, 1, "-V and -w do not go with it"},
		{"json with -w", []string{"read", "--json", "-w", filepath.Join(t.TempDir(), "x.pcap"), good}, 1, "-V and -w do not go with it"},
		{"schema without health", []string{"stats", "--schema", "x.json", good}, 1, "--schema is read only with --health"},
		{"schema without explain", []string{"states", "--schema", "x.json", good}, 1, "--schema is read only with --explain"},
		{"schema with -o", []string{"state", good, "--player", "1", "--frame", "5", "-o", "-", "--schema", "x.json"}, 1, "no effect"},
		{"player out of range", []string{"state", good, "--player", "9", "--frame", "5"}, 1, "players are numbered 0 to 7"},
		{"frame missing", []string{"state", good, "--player", "1"}, 1, "--frame N is required"},
		{"no selector", []string{"state", good, "--frame", "5"}, 1, "--player, --client or --conv is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := pmdump(c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errs)
			}
			if !strings.Contains(errs, c.msg) {
				t.Errorf("stderr %q lacks %q", errs, c.msg)
			}
		})
	}
}

func TestTruncatedCaptureGoesOn(t *testing.T) {
	path := writeCapture(t, modernGame())
	data, _ := os.ReadFile(path)
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	os.WriteFile(cut, data[:len(data)-30], 0o644) // in the middle of the last record
	out, errs, code := pmdump("read", cut, path)
	if code != exitDamaged {
		t.Fatalf("exit %d, want %d (damaged input): %s", code, exitDamaged, errs)
	}
	last := len(modernGame()) // the cut record: the last one
	if !strings.Contains(errs, "truncated in the middle of a record") || !strings.Contains(errs, fmt.Sprintf("frame %d:", last)) {
		t.Errorf("stderr does not say where the capture was cut: %q", errs)
	}
	// 9 game packets of the cut file (the last record, non-game anyway, is
	// cut), then all 9 of the second file, numbered on from the first.
	if n := strings.Count(out, "\n"); n != 18 {
		t.Errorf("%d lines, want 18:\n%s", n, out)
	}
	if !strings.Contains(out, fmt.Sprintf("\n    %2d 03:04:05.000000 ", last)) {
		t.Errorf("second file's frames are not numbered on from the first:\n%s", out)
	}
}

func TestStdinAndGzip(t *testing.T) {
	path := writeCapture(t, modernGame())
	data, _ := os.ReadFile(path)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	gzPath := path + ".gz"
	os.WriteFile(gzPath, gz.Bytes(), 0o644)
	want, _, _ := pmdump("read", path)
	got, errs, code := pmdump("read", gzPath)
	if code != 0 || got != want {
		t.Errorf("gzip: exit %d %s; output differs from the plain file:\n%s", code, errs, got)
	}

	// stdin: swap os.Stdin for the gzip file.
	f, _ := os.Open(gzPath)
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	got, errs, code = pmdump("read", "-")
	if code != 0 || got != want {
		t.Errorf("stdin: exit %d %s; output differs from the file:\n%s", code, errs, got)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"read", "stats", "synth"} {
		out, _, code := pmdump(cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "pmdump "+cmd) {
			t.Errorf("%s --help: exit %d, no examples:\n%s", cmd, code, out)
		}
	}
}

// syncBuffer is an output that can be read while pmdump writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A live stream on stdin (tcpdump -U -w - | pmdump read -) shows each
// packet when it comes, not when the stream ends, and -c ends the run
// without waiting for the stream to end.
func TestReadLiveStream(t *testing.T) {
	data, _ := os.ReadFile(writeCapture(t, modernGame()))
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	old := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = old }()
	var out syncBuffer
	done := make(chan int)
	go func() { done <- run([]string{"read", "-c", "4", "-"}, &out, io.Discard) }()
	// The file header and the first three records, then nothing more for now.
	cut := 24
	for i := 0; i < 3; i++ {
		cut += 16 + int(binary.LittleEndian.Uint32(data[cut+8:]))
	}
	pw.Write(data[:cut])
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Fatalf("%d lines shown while the stream waits, want 3:\n%s", n, out.String())
	}
	pw.Write(data[cut:])
	select {
	case code := <-done:
		if code != 0 || strings.Count(out.String(), "\n") != 4 {
			t.Errorf("exit %d, output:\n%s", code, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("-c 4 did not end the run while the stream stays open")
	}
}

// read -w writes the matching game packets to a capture that reads back
// the same.
func TestReadWrite(t *testing.T) {
	path := writeCapture(t, modernGame())
	out := filepath.Join(t.TempDir(), "out.pcapng")
	stdout, errs, code := pmdump("read", "-Y", "not malformed", "-w", out, path)
	if code != 0 || stdout != "" || !strings.Contains(errs, "7 packets written") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	want, _, _ := pmdump("read", "--json", "-Y", "not malformed", path)
	got, errs, code := pmdump("read", "--json", out)
	if code != 0 {
		t.Fatalf("reading it back: exit %d %s", code, errs)
	}
	// Same packets, addresses, times and fields; only frame numbers differ.
	strip := func(s string) string { return regexp.MustCompile(`"num":\d+,`).ReplaceAllString(s, "") }
	if strip(got) != strip(want) {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
}

// exitCase is a command line and the exit status it must end with.
type exitCase struct {
	args []string
	code int
}

// checkExits runs each command line and checks its exit status, and that
// a refusal says why on stderr.
func checkExits(t *testing.T, cases []exitCase) {
	t.Helper()
	for _, c := range cases {
		var errb bytes.Buffer
		if code := run(c.args, io.Discard, &errb); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, errb.String())
		} else if code != exitOK && !strings.HasPrefix(errb.String(), "pmdump") {
			t.Errorf("%v: no diagnostic: %q", c.args, errb.String())
		}
	}
}
