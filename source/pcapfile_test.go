package source_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/source"
)

// pcapCases are pcap captures that end in every way a pcap can: whole,
// cut in a record header, after a header with no data, in the data, with a
// record longer than MaxRecord or longer than its packet; in both byte
// orders and both time stamp precisions.
func pcapCases(t *testing.T) map[string][]byte {
	recs := []record{
		{data: ethernet(t, cli4, srv4, payloadA), ts: epoch},
		{data: ethernet(t, srv4, cli4, payloadB), ts: epoch.Add(1500)},
		{data: ethernet(t, cli4, srv4, payloadB), ts: epoch.Add(2e9 + 7)},
	}
	pcap := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	last := len(recs[2].data)
	header := func(b []byte, caplen, length uint32) []byte {
		b = bytes.Clone(b)
		b = binary.LittleEndian.AppendUint32(b, 1)
		b = binary.LittleEndian.AppendUint32(b, 2)
		b = binary.LittleEndian.AppendUint32(b, caplen)
		return binary.LittleEndian.AppendUint32(b, length)
	}
	cases := map[string][]byte{
		"whole":                 pcap,
		"cut in data":           pcap[:len(pcap)-last/2],
		"cut in header":         pcap[:len(pcap)-last-7],
		"header only":           pcap[:24],
		"header without data":   pcap[:len(pcap)-last],
		"record over MaxRecord": header(pcap, source.MaxRecord+1, source.MaxRecord+1),
		"record of 2 GiB":       header(pcap, 1<<31, 1<<31), // negative as an int on 32 bits
		"capture over length":   append(header(pcap, 8, 4), make([]byte, 8)...),
		"empty record":          header(pcap, 0, 0),
	}
	// The same whole capture in nanoseconds and in big-endian order.
	ns := bytes.Clone(pcap)
	binary.LittleEndian.PutUint32(ns, 0xa1b23c4d)
	cases["nanoseconds"] = ns
	be := bigEndianPcap(t, pcap)
	cases["big-endian"] = be
	return cases
}

// TestPcapFileSameAsStream: a pcap read as a pcap file is (a window
// refilled by positioned reads) gives exactly what the stream reader
// gives, datagram for datagram and error for error, whether a record is
// within one refill or across several.
func TestPcapFileSameAsStream(t *testing.T) {
	for name, data := range pcapCases(t) {
		for _, window := range []int{1, 7, 64, 1 << 20} {
			t.Run(fmt.Sprintf("%s/window %d", name, window), func(t *testing.T) {
				want, ok := streamTrace(t, data)
				if !ok {
					t.Fatal("the stream reader refuses it")
				}
				r, ok := source.NewPcapAt(data, "in", window)
				if !ok {
					t.Fatal("not read as a pcap file")
				}
				if got := trace(t, r); got != want {
					t.Errorf("pcap file:\n%s\nstream:\n%s", got, want)
				}
			})
		}
	}
	for _, c := range []string{"legacy/basic/capture.pcap", "legacy/lossy/capture.pcap", "modern/multi/multi.pcap"} {
		t.Run(c, func(t *testing.T) {
			data, err := os.ReadFile(realcap.Path(t, c))
			if err != nil {
				t.Fatal(err)
			}
			stream, err := source.NewReader(bytes.NewReader(data), "in")
			if err != nil {
				t.Fatal(err)
			}
			r, ok := source.NewPcapAt(data, "in", 4096)
			if !ok {
				t.Fatal("not read as a pcap file")
			}
			if d := sameTraces(r, stream); d != "" {
				t.Errorf("pcap file and stream readers differ on %s: %s", c, d)
			}
		})
	}
}

// TestOpenPcapFile: a pcap file is opened as one and read through
// Prefetch as the stream reader reads it; pcapng, gzip and files that are
// no capture are not.
func TestOpenPcapFile(t *testing.T) {
	defer source.SetMinPcapFile(0)()
	dir := t.TempDir()
	pcap := pcapCases(t)["whole"]
	for _, tt := range []struct {
		name string
		data []byte
		pcap bool
	}{
		{"a.pcap", pcap, true},
		{"b.pcapng", writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet}, record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch}), false},
		{"c.pcap.gz", gz(pcap), false},
		{"d.pcap", []byte("not a capture at all, but long enough"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := source.OpenPcapFile(f, path)
			if ok != tt.pcap {
				t.Fatalf("opened as a pcap file: %v, want %v", ok, tt.pcap)
			}
			if !ok {
				f.Close()
				return
			}
			pf := source.Prefetch(r)
			var got []string
			for {
				d, err := pf.Next()
				if err != nil {
					if err != io.EOF {
						t.Errorf("end: %v", err)
					}
					break
				}
				got = append(got, fmt.Sprintf("%d %x", d.N, d.Payload))
			}
			pf.Close()
			if err := r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if want := []string{"1 " + fmt.Sprintf("%x", payloadA), "2 " + fmt.Sprintf("%x", payloadB), "3 " + fmt.Sprintf("%x", payloadB)}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if done, total := r.Progress(); done != total || total != int64(len(tt.data)) {
				t.Errorf("progress %d of %d, want %d of %d", done, total, len(tt.data), len(tt.data))
			}
		})
	}
}

// TestPcapFileMemory: a large pcap file is read through a window of a
// bounded size, refilled in place: reading 42 MB through Prefetch takes
// a few megabytes of memory in all, not the file's size, and every
// datagram is still read whole.
func TestPcapFileMemory(t *testing.T) {
	defer source.SetMinPcapFile(0)()
	data, payload, count := bigPcap(t)
	path := writeFile(t, "big.pcap", data)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := openPcapFile(t, path)
	defer r.Close()
	pf := source.Prefetch(r)
	n := 0
	for {
		d, err := pf.Next()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		if !bytes.Equal(d.Payload, payload) {
			t.Fatalf("datagram %d: payload %x…", d.N, d.Payload[:8])
		}
		n++
	}
	pf.Close()
	runtime.ReadMemStats(&after)
	if n != count {
		t.Errorf("%d datagrams, want %d", n, count)
	}
	if w := source.WindowCap(r); w <= 0 || w > 2<<20 {
		t.Errorf("a window of %d bytes, want one of at most 2 MiB", w)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 8<<20 {
		t.Errorf("%d bytes allocated to read a file of %d", a, len(data))
	}
}

// TestPcapFileCut: a pcap file cut short while it is read ends with an
// error wrapping ErrChanged, not zeros and not an early end: cut far
// before the reading or within its last record; and the counters are
// those of the datagrams read.
func TestPcapFileCut(t *testing.T) {
	defer source.SetMinPcapFile(0)()
	data, _, count := bigPcap(t) // far more than Prefetch reads ahead
	for _, cut := range []int{4096, len(data) - 50} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			path := writeFile(t, "cut.pcap", data)
			r := openPcapFile(t, path)
			defer r.Close()
			pf := source.Prefetch(r)
			defer pf.Close()
			if _, err := pf.Next(); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, int64(cut)); err != nil {
				t.Fatal(err)
			}
			n := 1
			for {
				d, err := pf.Next()
				if err == nil {
					if d.Payload[len(d.Payload)-1] != 'f' {
						t.Fatalf("datagram %d ends in %x", d.N, d.Payload[len(d.Payload)-4:])
					}
					n++
					continue
				}
				if !errors.Is(err, source.ErrChanged) {
					t.Errorf("after %d datagrams: %v, want an error wrapping ErrChanged", n, err)
				}
				t.Logf("after %d datagrams: %v", n, err)
				break
			}
			if n >= count {
				t.Errorf("read all %d datagrams of a file cut to %d bytes", n, cut)
			}
			if cut == len(data)-50 && n != count-1 {
				t.Errorf("%d datagrams of a file cut in its last record, want every one before it, %d", n, count-1)
			}
			if c := pf.Counters(); c.Datagrams != n {
				t.Errorf("counters say %d datagrams, %d were read", c.Datagrams, n)
			}
		})
	}
}

// bigPcap is a pcap of 40000 datagrams of the same payload, about 42 MB,
// made once for the tests that read it (none changes it).
func bigPcap(t *testing.T) (data, payload []byte, count int) {
	big.once.Do(func() {
		big.payload = bytes.Repeat([]byte("stdf"), 250)
		rec := record{data: ethernet(t, cli4, srv4, big.payload), ts: epoch}
		recs := make([]record, 40000)
		for i := range recs {
			recs[i] = rec
		}
		big.data = writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	})
	return big.data, big.payload, 40000
}

var big struct {
	once          sync.Once
	data, payload []byte
}

// writeFile writes data to a file of the test's and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// openPcapFile opens a capture file as a pcap file.
func openPcapFile(t *testing.T, path string) *source.Reader {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := source.OpenPcapFile(f, path)
	if !ok {
		f.Close()
		t.Fatalf("%s is not opened as a pcap file", path)
	}
	return r
}

// A caller that stops within a batch (live -c) has the Prefetcher's
// counters as the reader has them at the same datagram, not those of the
// last whole batch (none, in the first) nor of the batch read ahead.
func TestPrefetchCountersWithinBatch(t *testing.T) {
	defer source.SetMinPcapFile(0)()
	data, _, _ := bigPcap(t)
	path := writeFile(t, "big.pcap", data)
	for _, n := range []int{1, 5, 1000} {
		plain := openPcapFile(t, path)
		r := openPcapFile(t, path)
		pf := source.Prefetch(r)
		for i := range n {
			if _, err := plain.Next(); err != nil {
				t.Fatal(err)
			}
			if _, err := pf.Next(); err != nil {
				t.Fatal(err)
			}
			if i == 0 && !pf.Ready() {
				t.Fatal("the first batch holds one datagram: nothing to test")
			}
		}
		got, want := pf.Counters(), plain.Counters()
		if got.Frames != want.Frames || got.Datagrams != want.Datagrams || !maps.Equal(got.LinkTypes, want.LinkTypes) {
			t.Errorf("after %d datagrams: prefetched counters %d frames, %d datagrams, %v; the reader's %d, %d, %v",
				n, got.Frames, got.Datagrams, got.LinkTypes, want.Frames, want.Datagrams, want.LinkTypes)
		}
		pf.Close()
		r.Close()
		plain.Close()
	}
}
