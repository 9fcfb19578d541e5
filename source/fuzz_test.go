package source_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
//
// Every datagram read from an uncompressed capture is read again by its
// offset with a Rereader, to the same addresses and payload.
//
// A pcap is also read as a pcap file is, with a window of 64 bytes and of
// a megabyte, which must give exactly what the stream reader gives.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, window := range []int{64, 1 << 20} {
			if m, ok := source.NewPcapAt(data, "in", window); ok {
				want, _ := streamTrace(t, data)
				if got := trace(t, m); got != want {
					t.Fatalf("pcap file, window %d:\n%s\nstream:\n%s", window, got, want)
				}
			}
		}
		checkPrefetchCounters(t, data)
		r, err := source.NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			if r != nil {
				t.Fatalf("NewReader returned a reader and %v", err)
			}
			return
		}
		last := 0
		var kept []source.Datagram // what a Rereader must find again
		defer func() { checkReread(t, data, r, kept) }()
		for i := 0; i < 10000; i++ {
			d, err := r.Next()
			if err == nil && d.Offset >= 0 && !d.Reassembled && len(kept) < 64 {
				k := *d
				k.Payload = bytes.Clone(d.Payload)
				kept = append(kept, k)
			}
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

// checkPrefetchCounters reads data through a Prefetcher and a plain
// Reader in step: at each datagram the Prefetcher's counters have as many
// datagrams as the reader's, at least as many frames, and link types that
// count every frame; at the end they are the reader's.
func checkPrefetchCounters(t *testing.T, data []byte) {
	plain, err := source.NewReader(bytes.NewReader(data), "fuzz")
	if err != nil {
		return
	}
	r, _ := source.NewReader(bytes.NewReader(data), "fuzz")
	pf := source.Prefetch(r)
	defer pf.Close()
	for i := 0; i < 10000; i++ {
		_, err1 := pf.Next()
		_, err2 := plain.Next()
		got, want := pf.Counters(), plain.Counters()
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("datagram %d: prefetched %v, plain %v", i+1, err1, err2)
		}
		if err1 != nil {
			if got.Frames != want.Frames || got.Datagrams != want.Datagrams {
				t.Fatalf("at the end: prefetched counters %+v, the reader's %+v", got, want)
			}
			return
		}
		sum := 0
		for _, n := range got.LinkTypes {
			sum += n
		}
		if got.Datagrams != want.Datagrams || got.Frames < want.Frames || sum != got.Frames {
			t.Fatalf("datagram %d: prefetched counters %d datagrams, %d frames, link types %v; the reader's %d, %d", i+1, got.Datagrams, got.Frames, got.LinkTypes, want.Datagrams, want.Frames)
		}
	}
}

// trace is everything a Reader gives for a capture, as text: each
// datagram's fields and bytes, then the error that ended it.
func trace(t testing.TB, r *source.Reader) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < 100000; i++ {
		d, err := r.Next()
		if err != nil {
			fmt.Fprintf(&b, "end: %v\ncounters: %+v\n", err, r.Counters())
			return b.String()
		}
		b.WriteString(traceLine(d))
	}
	t.Fatal("more than 100000 datagrams")
	return ""
}

// traceLine is one datagram in a trace.
func traceLine(d *source.Datagram) string {
	return fmt.Sprintf("%d %s %v>%v len=%d/%d wire=%d lt=%v if=%d off=%d reasm=%v digits=%d frame=%x payload=%x\n",
		d.N, d.TS.Format("15:04:05.000000000"), d.Src, d.Dst, len(d.Payload), d.Length, d.WireLength, d.LinkType,
		d.Interface, d.Offset, d.Reassembled, d.Digits, d.Frame, d.Payload)
}

// sameTraces reports where two readers' traces first differ ("" when they
// do not), a datagram at a time: a large capture's trace is never whole
// in memory.
func sameTraces(a, b *source.Reader) string {
	for {
		da, errA := a.Next()
		db, errB := b.Next()
		if errA != nil || errB != nil {
			if errA == nil || errB == nil || errA.Error() != errB.Error() || fmt.Sprintf("%+v", a.Counters()) != fmt.Sprintf("%+v", b.Counters()) {
				return fmt.Sprintf("end: %v and %v, counters %+v and %+v", errA, errB, a.Counters(), b.Counters())
			}
			return ""
		}
		if la, lb := traceLine(da), traceLine(db); la != lb {
			return fmt.Sprintf("datagram %d:\n%s%s", da.N, la, lb)
		}
	}
}

// streamTrace reads data with the stream reader.
func streamTrace(t testing.TB, data []byte) (string, bool) {
	r, err := source.NewReader(bytes.NewReader(data), "in")
	if err != nil {
		return "", false
	}
	return trace(t, r), true
}

// checkReread reads the kept datagrams of capture data again by offset.
func checkReread(t *testing.T, data []byte, r *source.Reader, kept []source.Datagram) {
	if len(kept) == 0 || r.Compressed() {
		return
	}
	path := filepath.Join(t.TempDir(), "c")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rr, ok := source.OpenRereader(path, r, st)
	if !ok {
		t.Fatalf("a %s capture cannot be read again", r.Format())
	}
	defer rr.Close()
	for _, k := range kept {
		var d source.Datagram
		if err := rr.Datagram(k.Offset, k.LinkType, &d); err != nil {
			t.Fatalf("frame %d at byte %d: %v", k.N, k.Offset, err)
		}
		if d.Src != k.Src || d.Dst != k.Dst || len(d.Payload) < len(k.Payload) || !bytes.Equal(d.Payload[:len(k.Payload)], k.Payload) {
			t.Fatalf("frame %d at byte %d read again as %v>%v %x, was %v>%v %x", k.N, k.Offset, d.Src, d.Dst, d.Payload, k.Src, k.Dst, k.Payload)
		}
	}
}
