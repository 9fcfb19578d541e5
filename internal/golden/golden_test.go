package golden_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pmdump/pmdump/internal/golden"
)

func TestWant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "case.golden")
	defer func(u bool) { *golden.Update = u }(*golden.Update)

	*golden.Update = true
	if w := golden.Want(t, path, "first\n", "go test -update"); w != "first\n" {
		t.Errorf("under -update: want %q, got %q", w, "first\n")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "first\n" {
		t.Fatalf("golden file after -update: %q, %v", b, err)
	}

	*golden.Update = false
	if w := golden.Want(t, path, "second\n", "go test -update"); w != "first\n" {
		t.Errorf("comparing: want %q from the file, got %q", "first\n", w)
	}
}
