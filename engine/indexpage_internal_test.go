package engine

import (
	"context"
	"reflect"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/session"
)

// An index whose entries are paged out to a file answers as one that keeps
// them in memory: every entry, every range, every search, every packet
// decoded again; and most of its chunks are not in memory.
func TestIndexPaged(t *testing.T) {
	path := realcap.Path(t, "modern/multi/multi.pcap")
	index := func(budget int) (*Engine, *PacketIndex) {
		e := New(Config{Work: Index, MemoryBudget: budget, TempDir: t.TempDir()})
		if err := e.Run(context.Background(), path); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e, e.Index()
	}
	_, want := index(64 << 20)
	defer func(n int) { pagedChunk = n }(pagedChunk)
	pagedChunk = 256
	e, got := index(4 * 4 * 256 * entrySize) // four chunks in memory
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	n := want.Len()
	if got.Len() != n || n < 10*256 {
		t.Fatalf("%d packets paged, %d in memory", got.Len(), n)
	}
	if mem := got.MemoryBytes(); mem > (4+pageCache+1)*256*entrySize {
		t.Errorf("%d bytes of entries in memory for %d packets", mem, n)
	}
	// Scattered, as a viewer jumps.
	for k := 0; k < n; k++ {
		i := (k * 7919) % n
		if a, b := got.Entry(i), want.Entry(i); a != b {
			t.Fatalf("entry %d: %+v, want %+v", i, a, b)
		}
	}
	if a, b := got.Entries(nil, 100, n), want.Entries(nil, 100, n); !reflect.DeepEqual(a, b) {
		t.Error("the entries differ")
	}
	last := int(want.Entry(n - 1).N)
	for f := 0; f <= last+1; f += 37 {
		if a, b := got.Search(f), want.Search(f); a != b {
			t.Fatalf("search for frame %d: %d, want %d", f, a, b)
		}
	}
	var ra, rb session.Record
	for i := 0; i < n; i += 101 {
		if err := got.Record(i, &ra); err != nil {
			t.Fatal(err)
		}
		if err := want.Record(i, &rb); err != nil {
			t.Fatal(err)
		}
		if ra.N != rb.N || string(ra.Packet.Raw) != string(rb.Packet.Raw) || ra.Src != rb.Src {
			t.Fatalf("packet %d decoded again differs", i)
		}
	}
}
