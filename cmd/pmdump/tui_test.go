package main

import (
	"testing"
)

// TestTUIArguments checks what pmdump tui refuses before it takes the
// terminal.
func TestTUIArguments(t *testing.T) {
	checkExits(t, []exitCase{
		{[]string{"tui"}, exitUsage},
		{[]string{"tui", "-"}, exitUsage},
		{[]string{"tui", "--era", "future", "sample:modern"}, exitUsage},
		{[]string{"tui", "/nonexistent/capture.pcap"}, exitUnreadable},
		{[]string{"tui", "--schema", "/nonexistent/schema.json", "sample:modern"}, exitUnreadable},
	})
}
