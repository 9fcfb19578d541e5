package spill_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmdump/pmdump/internal/spill"
)

// Records of every size, in memory, spilled, and half and half, read back
// whole (Get) and viewed (View), before and after the pending bytes reach
// the file.
func TestStoreRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget int
		sizes  []int
	}{
		{"memory", 64 << 20, []int{1, 1000, 40, spill.SegmentSize, 3*spill.SegmentSize + 7, 999}},
		{"file", 0, []int{1, 1000, 40, spill.SegmentSize, 3*spill.SegmentSize + 7, 999}},
		{"both", 3 << 20, []int{700 << 10, 700 << 10, 700 << 10, 700 << 10, 700 << 10, 12, 2 << 20}},
		{"many small", 1 << 20, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := spill.New("test store", c.budget, dir, "spill-test-*")
			defer s.Close()
			r := rand.New(rand.NewPCG(1, 2))
			sizes := c.sizes
			if sizes == nil {
				for range 5000 {
					sizes = append(sizes, 1+r.IntN(1500))
				}
			}
			var recs [][]byte
			var offs []int64
			for _, n := range sizes {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				off, err := s.Put(b)
				if err != nil {
					t.Fatal(err)
				}
				recs, offs = append(recs, b), append(offs, off)
			}
			var buf []byte
			for i, b := range recs {
				got := make([]byte, len(b))
				if err := s.Get(got, offs[i]); err != nil || !bytes.Equal(got, b) {
					t.Fatalf("record %d (%d bytes at %d): equal %v, %v", i, len(b), offs[i], bytes.Equal(got, b), err)
				}
				v, err := s.View(offs[i], len(b), &buf)
				if err != nil || !bytes.Equal(v, b) {
					t.Fatalf("view of record %d: equal %v, %v", i, bytes.Equal(v, b), err)
				}
			}
			mem, file := s.Bytes()
			var total int64
			for _, b := range recs {
				total += int64(len(b))
			}
			if mem > int64(c.budget) || mem+file < total {
				t.Errorf("%d bytes in memory and %d in the file for %d bytes, budget %d", mem, file, total, c.budget)
			}
			if spilled := file > 0; spilled != (total > int64(c.budget)) {
				t.Errorf("%d bytes in the file for %d bytes, budget %d", file, total, c.budget)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// Released segments are given back, and reading them says so; what comes
// after them still reads.
func TestStoreRelease(t *testing.T) {
	s := spill.New("test store", 64<<20, "", "spill-test-*")
	defer s.Close()
	rec := bytes.Repeat([]byte{7}, 1000)
	var offs []int64
	for range 5000 {
		off, err := s.Put(rec)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	before, _ := s.Bytes()
	s.Release(offs[3000])
	after, _ := s.Bytes()
	if after >= before || after < int64(2000*len(rec)) {
		t.Errorf("%d bytes in memory after the release, %d before", after, before)
	}
	got := make([]byte, len(rec))
	if err := s.Get(got, offs[0]); !errors.Is(err, spill.ErrReleased) {
		t.Errorf("a released record reads with %v", err)
	}
	for _, i := range []int{3000, 4999} {
		if err := s.Get(got, offs[i]); err != nil || !bytes.Equal(got, rec) {
			t.Errorf("record %d after the release: %v", i, err)
		}
	}
}

// A store whose file cannot be made fails, and says which store it is.
func TestStoreFileFails(t *testing.T) {
	s := spill.New("test store", 10, filepath.Join(t.TempDir(), "missing"), "spill-test-*")
	defer s.Close()
	if _, err := s.Put(make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Put(make([]byte, 50))
	if err == nil || !errors.Is(err, os.ErrNotExist) || s.Err() == nil {
		t.Fatalf("put past the budget with no directory: %v", err)
	}
	if _, again := s.Put(make([]byte, 1)); again == nil {
		t.Error("a put after the failure succeeds")
	}
	if err.Error()[:10] != "test store" {
		t.Errorf("error %q does not name the store", err)
	}
}
