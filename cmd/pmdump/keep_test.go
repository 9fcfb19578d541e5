package main

import (
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
