package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/captures"
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
