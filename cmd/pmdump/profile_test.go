package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PMDUMP_CPUPROFILE writes a CPU profile, or says why it cannot.
func TestStartProfile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, path string
		warn       string
		written    bool
	}{
		{"none", "", "", false},
		{"a file", filepath.Join(dir, "cpu.prof"), "", true},
		{"no such folder", filepath.Join(dir, "missing", "cpu.prof"), "PMDUMP_CPUPROFILE: open " + filepath.Join(dir, "missing", "cpu.prof") + ": no such file or directory: no CPU profile is written", false},
	} {
		var errb bytes.Buffer
		stop := startProfile(c.path, &errb)
		stop()
		if c.warn == "" && errb.Len() > 0 || !strings.Contains(errb.String(), c.warn) {
			t.Errorf("%s: stderr %q, want %q", c.name, errb.String(), c.warn)
		}
		if fi, err := os.Stat(c.path); (err == nil && fi.Size() > 0) != c.written {
			t.Errorf("%s: profile written %v, want %v", c.name, err == nil, c.written)
		}
	}
}
