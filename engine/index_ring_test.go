package engine_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// An index with a limit keeps the newest packets, within the limit, and
// each of them decodes again as it was read; the dropped ones say so, and
// the memory of their spooled bytes is given back.
func TestIndexRing(t *testing.T) {
	gzipped := filepath.Join(t.TempDir(), "basic.pcap.gz") // spooled, as a live capture is
	writeGzip(t, gzipped, realcap.Path(t, "modern/basic/basic.pcap"))
	plain := realcap.Path(t, "modern/basic/basic.pcap") // read again from the file
	for _, tt := range []struct {
		name  string
		input string
		limit engine.IndexLimit
	}{
		{"packets, spooled", gzipped, engine.IndexLimit{Packets: 1500}},
		{"bytes, spooled", gzipped, engine.IndexLimit{Bytes: 1 << 20}},
		{"both, spooled", gzipped, engine.IndexLimit{Packets: 4000, Bytes: 2 << 20}},
		{"packets, file", plain, engine.IndexLimit{Packets: 700}},
		{"bytes, file", plain, engine.IndexLimit{Bytes: 100 << 10}},
		{"above the capture", gzipped, engine.IndexLimit{Packets: 1 << 30}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var read [][]byte
			e := engine.New(engine.Config{Work: engine.Index, IndexLimit: tt.limit, OnEvent: func(ev engine.Event) {
				if p, ok := ev.(engine.PacketEvent); ok {
					read = append(read, packetText(p.Keep()))
				}
			}})
			defer e.Close()
			if err := e.Run(context.Background(), tt.input); err != nil {
				t.Fatal(err)
			}
			x := e.Index()
			first, kept := x.First(), x.Len()-x.First()
			if x.Len() != len(read) || x.Dropped() != first {
				t.Fatalf("index: %d packets, %d dropped, first %d; %d read", x.Len(), x.Dropped(), first, len(read))
			}
			var cost int64
			for i := first; i < x.Len(); i++ {
				p, err := x.Packet(i)
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if got := packetText(p); !bytes.Equal(got, read[i]) {
					t.Fatalf("packet %d decodes again as\n%s\nwas\n%s", i, got, read[i])
				}
				cost += 40
				if tt.input == gzipped {
					cost += 38 + int64(len(p.Packet.Raw))
				}
			}
			lim := tt.limit
			if lim.Packets > 0 && kept > lim.Packets || lim.Bytes > 0 && cost > lim.Bytes {
				t.Errorf("kept %d packets, %d bytes: past %+v", kept, cost, lim)
			}
			// Full: one more packet would have passed the limit.
			if first > 0 {
				next := x.Entry(first - 1) // the oldest kept, for a dropped position
				if next != x.Entry(first) {
					t.Errorf("Entry of a dropped position is not the oldest kept")
				}
				if lim.Packets > 0 && kept < lim.Packets && (lim.Bytes == 0 || cost+40+38+1000 < lim.Bytes) {
					t.Errorf("kept only %d packets (%d bytes) of %+v", kept, cost, lim)
				}
				if _, err := x.Packet(first - 1); !errors.Is(err, engine.ErrDropped) {
					t.Errorf("dropped packet: %v, want ErrDropped", err)
				}
			} else if len(read) > 1500 && tt.name != "above the capture" {
				t.Errorf("nothing dropped of %d packets", len(read))
			}
			if tt.input == gzipped && lim.Bytes > 0 && x.SpoolBytes() > lim.Bytes+1<<20 {
				t.Errorf("spool holds %d bytes, limit %d", x.SpoolBytes(), lim.Bytes)
			}
			if n := x.Search(0); n != first {
				t.Errorf("Search(0) = %d, want the oldest kept %d", n, first)
			}
			t.Logf("%d read, %d kept (%d bytes), spool %d bytes", len(read), kept, cost, x.SpoolBytes())
		})
	}
}

// A ring's bytes bound what it holds of the heap, within a quarter: a
// live capture's soft memory limit leaves that much room for it (the
// TUI's), or a full ring keeps the collector running while the network is
// quiet. Two full rings tell the ring's cost from the engine's own.
func TestIndexRingHeap(t *testing.T) {
	gzipped := filepath.Join(t.TempDir(), "multi.pcap.gz") // spooled, as a live capture is
	writeGzip(t, gzipped, realcap.Path(t, "modern/multi/multi.pcap"))
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	grown := func(ring int64) int64 {
		before := heap()
		e := engine.New(engine.Config{Work: engine.Index, IndexLimit: engine.IndexLimit{Bytes: ring}})
		defer e.Close()
		if err := e.Run(context.Background(), gzipped); err != nil {
			t.Fatal(err)
		}
		x := e.Index()
		if x.Dropped() == 0 {
			t.Fatalf("%d packets, none dropped: the ring of %d bytes was never full", x.Len(), ring)
		}
		grew := heap() - before
		t.Logf("%d packets, %d kept: the heap grew by %d KB for a ring of %d KB", x.Len(), x.Len()-x.First(), grew>>10, ring>>10)
		runtime.KeepAlive(e)
		return grew
	}
	const small, big = 2 << 20, 8 << 20
	perByte := float64(grown(big)-grown(small)) / (big - small)
	t.Logf("the ring takes %.2f bytes of heap a byte", perByte)
	if perByte > 1.25 || perByte < 0.75 {
		t.Errorf("the ring takes %.2f bytes of heap a byte it counts: want within a quarter of 1 (under: what it drops stays in memory)", perByte)
	}
}
