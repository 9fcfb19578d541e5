package main

import (
	"math"
	"testing"

	"github.com/pmdump/pmdump/engine"
)

func TestParseKeep(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want engine.IndexLimit
		ok   bool
	}{
		{"", engine.IndexLimit{}, true},
		{"100000", engine.IndexLimit{Packets: 100000}, true},
		{"500MiB", engine.IndexLimit{Bytes: 500 << 20}, true},
		{"1GiB", engine.IndexLimit{Bytes: 1 << 30}, true},
		{"2GB", engine.IndexLimit{Bytes: 2e9}, true},
		{"1.5 MB", engine.IndexLimit{Bytes: 1.5e6}, true},
		{"12", engine.IndexLimit{}, false},     // too few packets to be useful
		{"100KiB", engine.IndexLimit{}, false}, // under 1 MiB
		{"-5MB", engine.IndexLimit{}, false},
		{"lots", engine.IndexLimit{}, false},
	} {
		got, err := parseKeep(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseKeep(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	checkExits(t, []exitCase{
		{[]string{"tui", "--keep", "10", "sample:modern"}, exitUsage},
	})
}

// The TUI's soft memory limit leaves room for a live ring of bytes and a
// quarter more (what a ring takes of the heap: TestIndexRingHeap in
// engine) on top of what the TUI over a capture file is held to; a ring of
// packets, unbounded in bytes, is not held to a limit.
func TestTUIMemoryLimit(t *testing.T) {
	file := tuiMemoryLimit(engine.IndexLimit{}, false)
	if kept := tuiMemoryLimit(engine.IndexLimit{Packets: 5000}, false); kept != file {
		t.Errorf("a capture file with --keep: limit %d, want %d as without", kept, file)
	}
	for _, b := range []int64{1 << 20, 500 << 20, 1 << 30, 2e9} {
		if got := tuiMemoryLimit(engine.IndexLimit{Bytes: b}, true); got < file+b+b/4 {
			t.Errorf("live ring of %d MiB: limit %d MiB, want at least %d MiB", b>>20, got>>20, (file+b+b/4)>>20)
		}
	}
	if got := tuiMemoryLimit(engine.IndexLimit{Packets: 100000}, true); got != math.MaxInt64 {
		t.Errorf("live ring of packets: limit %d, want none", got)
	}
}
