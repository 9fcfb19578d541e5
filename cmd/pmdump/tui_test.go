package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTUIArguments checks what pmdump tui refuses before it takes the
// terminal.
func TestTUIArguments(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("hello, this is no capture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkExits(t, []exitCase{
		{[]string{"tui", text}, exitUnreadable},
		{[]string{"tui"}, exitUsage},
		{[]string{"tui", "-", "-"}, exitUsage},
		{[]string{"tui", "--era", "future", "sample:modern"}, exitUsage},
		{[]string{"tui", "/nonexistent/capture.pcap"}, exitUnreadable},
		{[]string{"tui", "--schema", "/nonexistent/schema.json", "sample:modern"}, exitUnreadable},
	})
}

// tui - reads a capture piped to standard input, once, and never the
// terminal itself.
func TestTUIInputs(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args     []string
		terminal bool
		want     string // part of the error; "" for none
	}{
		{[]string{"-"}, false, ""},
		{[]string{"sample:modern", "-"}, false, ""},
		{[]string{"-", "-"}, false, "can be read once"},
		{[]string{"-"}, true, "which is the terminal here"},
		{[]string{"no/such.pcap"}, false, "no such file"},
		{[]string{"sample:modern", text}, false, "not a pcap or pcapng capture"},
	} {
		err := checkTUIInputs(c.args, c.terminal)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v (stdin a terminal: %v): %v, want %q", c.args, c.terminal, err, c.want)
		}
	}
}
