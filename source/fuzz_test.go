package source_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/pmdump/pmdump/source"
)

// FuzzReader reads any bytes as a capture stream: the reader never panics,
// returns datagrams whose fields are consistent, and ends with an error
// (io.EOF or another) within a bounded number of datagrams.
//
// The seed corpus in testdata/fuzz/FuzzReader holds tiny pcap, pcapng and
// gzip captures of every link type the reader knows, with fragments, VLAN
// tags, snap-length cuts and cut records.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := source.NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			if r != nil {
				t.Fatalf("NewReader returned a reader and %v", err)
			}
			return
		}
		last := 0
		for i := 0; i < 10000; i++ {
			d, err := r.Next()
			if err != nil {
				if d != nil {
					t.Fatalf("Next returned a datagram and %v", err)
				}
				if _, err2 := r.Next(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				if err != io.EOF && errors.Is(err, io.EOF) {
					t.Fatalf("io.EOF wrapped: %v", err)
				}
				return
			}
			if d.N <= last {
				t.Fatalf("frame number %d after %d", d.N, last)
			}
			last = d.N
			if len(d.Payload) > d.Length {
				t.Fatalf("%d payload bytes, UDP length %d", len(d.Payload), d.Length)
			}
			if !d.Src.IsValid() || !d.Dst.IsValid() {
				t.Fatalf("invalid address %v -> %v", d.Src, d.Dst)
			}
			c := r.Counters()
			if c.Datagrams > c.Frames || d.N > c.Frames {
				t.Fatalf("counters %+v at frame %d", c, d.N)
			}
			if len(d.Frame) > source.MaxRecord || len(d.Frame) == 0 {
				t.Fatalf("frame of %d bytes", len(d.Frame))
			}
			if !r.Compressed() && (d.Offset < -1 || d.Offset+16 > int64(len(data))) {
				t.Fatalf("record offset %d in %d bytes", d.Offset, len(data))
			}
			sum := 0
			for _, n := range c.LinkTypes {
				sum += n
			}
			if sum != c.Frames {
				t.Fatalf("link types count %d frames of %d", sum, c.Frames)
			}
		}
	})
}
