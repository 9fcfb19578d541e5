package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/source"
)

// TestReadWriteStdout: read -w - writes the capture to standard output, as
// tcpdump does, holding every game packet read prints.
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
	n := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if want := strings.Count(lines.String(), "\n"); n != want || n == 0 {
		t.Errorf("%d datagrams written to stdout, read prints %d packets", n, want)
	}
}
