package main

import (
	"bytes"
	"testing"
)

// TestTUIArguments checks what pmdump tui refuses before it takes the
// terminal.
func TestTUIArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"tui"}, exitUsage},
		{[]string{"tui", "-"}, exitUsage},
		{[]string{"tui", "--era", "future", "sample:modern"}, exitUsage},
		{[]string{"tui", "/nonexistent/capture.pcap"}, exitUnreadable},
		{[]string{"tui", "--schema", "/nonexistent/schema.json", "sample:modern"}, exitUnreadable},
	} {
		var out, errb bytes.Buffer
		if got := run(c.args, &out, &errb); got != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, got, c.code, errb.String())
		}
	}
}
