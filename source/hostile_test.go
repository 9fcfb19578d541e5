package source_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/source"
)

// zeros is an endless stream of zero bytes after a prefix, counting what
// was read of it.
type zeros struct {
	prefix []byte
	read   int64
}

func (z *zeros) Read(p []byte) (int, error) {
	n := copy(p, z.prefix)
	z.prefix = z.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = 0
	}
	z.read += int64(len(p))
	return len(p), nil
}

// hugePcapRecord is a pcap file (snap length snap) with one good record
// and then a record header claiming claim bytes.
func hugePcapRecord(t testing.TB, snap uint32, claim uint32) []byte {
	b := writePcap(t, layers.LinkTypeEthernet, snap, record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch})
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h[8:], claim)
	binary.LittleEndian.PutUint32(h[12:], claim)
	return append(b, h...)
}

// hugePcapngBlock is a pcapng file with one good packet and then a block
// of type typ whose header claims claim bytes (block length and, for a
// packet block, captured length).
func hugePcapngBlock(t testing.TB, typ uint32, claim uint32) []byte {
	b := writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet}, record{data: ethernet(t, cli4, srv4, payloadA), ts: epoch})
	h := make([]byte, 28)
	binary.LittleEndian.PutUint32(h[0:], typ)
	binary.LittleEndian.PutUint32(h[4:], claim)
	switch typ {
	case 6:
		binary.LittleEndian.PutUint32(h[20:], claim-32)
		binary.LittleEndian.PutUint32(h[24:], claim-32)
	case 3:
		binary.LittleEndian.PutUint32(h[8:], claim-16)
	}
	return append(b, h...)
}

// TestHugeRecords: a record or block claiming gigabytes, whose bytes keep
// coming on a stream, stops the input with a clear error after the good
// datagram, having read and allocated little.
func TestHugeRecords(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      []byte
		tooLong bool // the error says the record is too long (not just unreadable)
	}{
		{"pcap", hugePcapRecord(t, 65535, 1<<31), true},
		{"pcap-snaplen-2G", hugePcapRecord(t, 1<<31, 1<<31), true},
		{"pcap-256K+1", hugePcapRecord(t, 1<<31, source.MaxRecord+1), true},
		{"pcapng-epb", hugePcapngBlock(t, 6, 1<<31), true},
		{"pcapng-spb", hugePcapngBlock(t, 3, 1<<31), true},
		{"pcapng-other-block", hugePcapngBlock(t, 0x40000bad, 1<<31), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			in := &zeros{prefix: tt.in}
			r, err := source.NewReader(in, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.Next()
			if err != nil || !bytes.Equal(d.Payload, payloadA) {
				t.Fatalf("first datagram: %v", err)
			}
			start := time.Now()
			_, err = r.Next()
			if err == nil || err == io.EOF {
				t.Fatalf("second Next: %v, want an error", err)
			}
			if errors.Is(err, source.ErrRecordTooLong) != tt.tooLong {
				t.Errorf("error %q: too long %v, want %v", err, errors.Is(err, source.ErrRecordTooLong), tt.tooLong)
			}
			t.Logf("%v", err)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
				t.Errorf("allocated %d bytes for a capture of %d", grown, len(tt.in))
			}
			if in.read > 4<<20 {
				t.Errorf("read %d bytes of the stream before giving up", in.read)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

// TestFragmentBounds: unfinished IPv4 fragments are bounded in count and in
// bytes whatever their time stamps; what is given up is counted, and a
// datagram whose fragments all come still reassembles afterwards.
func TestFragmentBounds(t *testing.T) {
	big := bytes.Repeat([]byte("stdf"), 2000) // 8000 bytes: 6 fragments of 1400
	var recs []record
	// 3000 datagrams of which only the first fragment comes: a count flood.
	for id := 0; id < 3000; id++ {
		recs = append(recs, record{data: fragments(t, srv4, cli4, payloadB[:8], uint16(id), 8)[0], ts: epoch})
	}
	// 5000 datagrams missing their last fragment: a byte flood (5000×5×1.4 kB).
	for id := 0; id < 3000; id++ {
		fs := fragments(t, cli4, srv4, big, uint16(id), 1400)
		for _, f := range fs[:len(fs)-1] {
			recs = append(recs, record{data: f, ts: epoch})
		}
	}
	whole := fragments(t, srv4, cli4, big, 60000, 1400)
	for _, f := range whole {
		recs = append(recs, record{data: f, ts: epoch})
	}
	in := writePcap(t, layers.LinkTypeEthernet, 65535, recs...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := source.NewReader(bytes.NewReader(in), "frags")
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, bytes.Clone(d.Payload))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(got) != 1 || !bytes.Equal(got[0], big) {
		t.Fatalf("%d datagrams, want the one whole one", len(got))
	}
	c := r.Counters()
	held := 3000 + 3000*5
	if c.FragmentsDropped < held-1024*5 || c.FragmentsDropped > held {
		t.Errorf("%d fragments dropped of %d never completed", c.FragmentsDropped, held)
	}
	if len(c.Warnings()) != 1 {
		t.Errorf("warnings %q", c.Warnings())
	}
	if after.HeapAlloc > before.HeapAlloc+40<<20 {
		t.Errorf("heap grew by %d MB", (after.HeapAlloc-before.HeapAlloc)>>20)
	}
}
