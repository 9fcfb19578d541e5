package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/levelmap"
	"github.com/pmdump/pmdump/schema"
)

// TestStateMapRealCapture draws the level a client held with --map and
// compares it with the map of the raw state the client itself dumped.
func TestStateMapRealCapture(t *testing.T) {
	realcap.Dir(t)
	dump, err := os.ReadFile(filepath.Join(sharedCaptures, "modern/basic/c1_states/state_1929_slsn1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"state", filepath.Join(sharedCaptures, "modern/basic/basic.pcap"),
		"--client", "127.0.0.1:24786", "--frame", "1929", "--slsn", "1", "--map"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m, err := levelmap.Read(schema.For(len(dump)), dump)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 101 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	for y, l := range lines[:100] {
		if len(l) != 100 {
			t.Fatalf("line %d: %d characters, want 100", y, len(l))
		}
	}
	if got, want := strings.Join(lines[:100], "\n")+"\n", string(m.Text()); got != want {
		t.Errorf("the map differs from the client's own state's:\n%s", got)
	}
	if !strings.HasPrefix(lines[100], "legend:") {
		t.Errorf("no legend after the map: %q", lines[100])
	}
	if code := run([]string{"state", "sample:modern", "--player", "0", "--frame", "1", "--map", "--json"}, &out, &errb); code != exitUsage {
		t.Errorf("--map with --json: exit %d, want %d", code, exitUsage)
	}
}
