package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/source"
)

// receiveUDP listens on loopback and collects datagrams until want have
// come or none came for a second.
func receiveUDP(t *testing.T) (addr string, got func(want int) [][]byte) {
	t.Helper()
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	l.SetReadBuffer(8 << 20)
	t.Cleanup(func() { l.Close() })
	ch := make(chan [][]byte, 1)
	wantc := make(chan int, 1)
	go func() {
		var rx [][]byte
		buf := make([]byte, 4096)
		want := -1
		last := time.Now()
		for want < 0 || len(rx) < want && time.Since(last) < time.Second {
			select {
			case want = <-wantc:
				continue
			default:
			}
			l.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := l.Read(buf)
			if err != nil {
				continue
			}
			last = time.Now()
			rx = append(rx, bytes.Clone(buf[:n]))
		}
		ch <- rx
	}()
	return l.LocalAddr().String(), func(want int) [][]byte { wantc <- want; return <-ch }
}

// samplePayloads returns every UDP payload of a bundled sample, in order,
// read by the source package alone.
func samplePayloads(t *testing.T, name string) [][]byte {
	t.Helper()
	data, err := captures.Sample(name)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := source.NewReader(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out [][]byte
	for {
		d, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(d.Payload))
	}
}

func TestReplayEveryPayloadInOrder(t *testing.T) {
	for _, name := range []string{"legacy", "modern"} {
		t.Run(name, func(t *testing.T) {
			want := samplePayloads(t, name)
			addr, got := receiveUDP(t)
			var out, errb bytes.Buffer
			if code := run([]string{"replay", "sample:" + name, "--to", addr, "--speed", "20"}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			rx := got(len(want))
			if len(rx) != len(want) {
				t.Fatalf("received %d datagrams, want %d", len(rx), len(want))
			}
			for i := range want {
				if !bytes.Equal(rx[i], want[i]) {
					t.Fatalf("datagram %d differs: got %q, want %q", i, rx[i][:4], want[i][:4])
				}
			}
			m := regexp.MustCompile(`send-time error: p50 (\S+), p99 (\S+), max (\S+)`).FindStringSubmatch(out.String())
			if m == nil || !strings.Contains(out.String(), fmt.Sprintf("sent %d datagrams", len(want))) {
				t.Fatalf("summary: %q", out.String())
			}
			p99, err := time.ParseDuration(m[2])
			if err != nil || p99 > 100*time.Millisecond {
				t.Errorf("send-time error p99 %s", m[2])
			}
			t.Logf("%s", strings.TrimSpace(out.String()))
		})
	}
}

func TestReplaySelects(t *testing.T) {
	tests := []struct {
		args []string
		read string // the -Y filter of pmdump read that selects the same packets
	}{
		{[]string{"--dir", "s2c"}, "s2c"},
		{[]string{"--dir", "c2s", "--conv", "2"}, "c2s and conv == 2"},
		{[]string{"-Y", "stdf and src == 0"}, "stdf and src == 0"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var listing bytes.Buffer
			if code := run([]string{"read", "-Y", tt.read, "sample:modern"}, &listing, io.Discard); code != 0 {
				t.Fatalf("read exit %d", code)
			}
			want := strings.Count(listing.String(), "\n")
			addr, got := receiveUDP(t)
			var out, errb bytes.Buffer
			args := append([]string{"replay", "sample:modern", "--to", addr, "--asap"}, tt.args...)
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if rx := got(want); len(rx) != want || want == 0 {
				t.Errorf("received %d datagrams, want %d", len(rx), want)
			}
		})
	}
}

func TestReplayUsage(t *testing.T) {
	checkExits(t, []exitCase{
		{[]string{"replay", "sample:modern"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--asap", "--pps", "10"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--speed", "0"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--dir", "up"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "-Y", "stdf and"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--conv", "9"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--loop", "-1"}, exitUsage},
		{[]string{"replay", "/nonexistent.pcap", "--to", "127.0.0.1:9"}, exitUnreadable},
	})
}
