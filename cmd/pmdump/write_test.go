package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/source"
)

// TestReadWriteStdout: read -w - writes the capture to standard output, as
// tcpdump does, holding every game packet read prints, each frame as it was
// captured.
func TestReadWriteStdout(t *testing.T) {
	var capture, lines bytes.Buffer
	if code := run([]string{"read", "-w", "-", "sample:legacy"}, &capture, io.Discard); code != 0 {
		t.Fatalf("read -w -: exit status %d", code)
	}
	if code := run([]string{"read", "sample:legacy"}, &lines, io.Discard); code != 0 {
		t.Fatalf("read: exit status %d", code)
	}
	r, err := source.NewReader(bytes.NewReader(capture.Bytes()), "stdout")
	if err != nil {
		t.Fatalf("the output of read -w - is not a capture: %v", err)
	}
	data, err := captures.Sample("legacy")
	if err != nil {
		t.Fatal(err)
	}
	in, err := source.NewReader(bytes.NewReader(data), "sample")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		orig, err := in.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(d.Frame, orig.Frame) || !d.TS.Equal(orig.TS) {
			t.Fatalf("frame %d written differs from frame %d of the input", d.N, orig.N)
		}
		n++
	}
	if want := strings.Count(lines.String(), "\n"); n != want || n == 0 {
		t.Errorf("%d datagrams written to stdout, read prints %d packets", n, want)
	}
}

// read -w keeps the input's time stamp precision (as tcpdump and editcap
// do) unless --time-stamp-precision asks for another: a microsecond pcap
// stays one, and the time stamps read back the same.
func TestWriteKeepsPrecision(t *testing.T) {
	t.Parallel()
	micro := realcap.Path(t, "legacy/basic/capture.pcap")       // magic a1b2c3d4
	nano := realcap.Path(t, "modern/basic_pcapng/basic.pcapng") // nanosecond time stamps
	dir := t.TempDir()
	for _, c := range []struct {
		name, in, precision string
		magic               uint32
	}{
		{"micro.pcap", micro, "", 0xa1b2c3d4},
		{"micro-as-nano.pcap", micro, "nano", 0xa1b23c4d},
		{"nano.pcap", nano, "", 0xa1b23c4d},
		{"nano-as-micro.pcap", nano, "micro", 0xa1b2c3d4},
	} {
		out := filepath.Join(dir, c.name)
		args := []string{"read", "-Y", "stak", "-c", "20", "-w", out, c.in}
		if c.precision != "" {
			args = append(args, "--time-stamp-precision", c.precision)
		}
		if _, errs, code := pmdump(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if m := binary.LittleEndian.Uint32(b); m != c.magic {
			t.Errorf("%s: magic %08x, want %08x", c.name, m, c.magic)
		}
		// The same packets at the same times, to the written precision.
		want, _, _ := pmdump("read", "-Y", "stak", "-c", "20", "-t", "e", c.in)
		got, _, _ := pmdump("read", "-t", "e", out)
		if c.precision == "micro" {
			want = regexp.MustCompile(`(\.\d{6})\d{3} `).ReplaceAllString(want, "$1 ")
		}
		// frame numbers aside; nanoseconds of a microsecond time as six digits
		norm := func(s string) string {
			s = regexp.MustCompile(`(?m)^ *\d+ `).ReplaceAllString(s, "")
			return regexp.MustCompile(`(\.\d{6})000 `).ReplaceAllString(s, "$1 ")
		}
		if norm(got) != norm(want) || got == "" {
			t.Errorf("%s: read back\n%s\nwant\n%s", c.name, got, want)
		}
	}
	if _, errs, code := pmdump("read", "--time-stamp-precision", "pico", "-w", filepath.Join(dir, "x.pcap"), micro); code != exitUsage {
		t.Errorf("--time-stamp-precision pico: exit %d %s", code, errs)
	}
}
