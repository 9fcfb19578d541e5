// Package realcap finds the real captures with ground truth that tests
// read from ../shared/captures beside the module: a test skips (saying why)
// only when ../shared is absent, and fails when it is there but a file it
// names is missing.
package realcap

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the folder of the real captures, skipping the test when
// ../shared is absent.
func Dir(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("real captures: %v", err)
	}
	shared := filepath.Join(root, "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("real captures: %s is absent (%v)", shared, err)
	}
	return filepath.Join(shared, "captures")
}

// Path returns the real capture file (or ground-truth file) at rel in the
// captures folder, e.g. "modern/multi/multi.pcap". It skips the test when
// ../shared is absent and fails it when the file is missing.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real capture file missing: %v", err)
	}
	return p
}

// moduleRoot is the folder of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
