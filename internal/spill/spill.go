// Package spill keeps bytes in memory up to a budget, then in a temporary
// file: the one store behind pmdump's packet index (the packets it cannot
// read again from their capture file) and its state timeline (difs and
// checkpoints), so that a capture of any length costs disk, not memory.
//
// A Store is written by appending records, each at the offset Put returns,
// and read back by offset. The memory is held in segments of SegmentSize,
// never moved once written, and the leading ones can be given back
// (Release) by a user that drops its oldest records. Past the budget every
// record goes to an unlinked temporary file, written a megabyte at a time.
// A Store is not safe for concurrent use.
package spill

import (
	"errors"
	"fmt"
	"os"
)

// SegmentSize is the size of the memory segments.
const SegmentSize = 1 << 20

// pendMax is how many bytes a Store gathers before it writes them to its
// file: one write a megabyte, not one a record.
const pendMax = 1 << 20

// ErrReleased is wrapped by the error of a read of bytes given back by
// Release.
var ErrReleased = errors.New("given back")

// Store holds records in memory up to a budget, then in a temporary file.
type Store struct {
	name   string // for errors: "packet index spool", say
	prefix string // the temporary file's name pattern
	budget int64
	dir    string

	mem    [][]byte // segments of SegmentSize; those released are nil
	memLen int64    // offsets below it are in memory
	// released is the bytes of the memory segments given back: the first
	// released/SegmentSize segments.
	released int64

	file *os.File
	size int64  // bytes in the file
	pend []byte // bytes after them, not written yet
	err  error
}

// New returns a store that keeps up to budget bytes in memory, then spills
// to a temporary file in dir ("" for the system's) named by pattern (as
// os.CreateTemp's); name prefixes its errors.
func New(name string, budget int, dir, pattern string) *Store {
	return &Store{name: name, prefix: pattern, budget: int64(budget), dir: dir}
}

// SetBudget changes the memory budget for the records put from now on.
func (s *Store) SetBudget(budget int) { s.budget = int64(budget) }

// Put appends a record and returns its offset. After a failure of the
// file, every Put fails with the same error.
func (s *Store) Put(b []byte) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil {
		if off, ok := s.putMem(b); ok {
			return off, nil
		}
		f, err := os.CreateTemp(s.dir, s.prefix)
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.name, err)
			return 0, s.err
		}
		os.Remove(f.Name()) // gone when closed, whatever happens
		s.file = f
	}
	off := s.memLen + s.size + int64(len(s.pend))
	s.pend = append(s.pend, b...)
	if len(s.pend) >= pendMax {
		if err := s.flush(); err != nil {
			return 0, err
		}
	}
	return off, nil
}

// putMem appends b to the memory when it fits in the budget. Records are
// laid one after the other: offsets in memory and in the file follow on,
// whatever the budget.
func (s *Store) putMem(b []byte) (int64, bool) {
	if s.memLen+int64(len(b)) > s.budget {
		return 0, false
	}
	off := s.memLen
	end := off
	for rest := b; len(rest) > 0; {
		if int64(len(s.mem))*SegmentSize == end { // the last segment is full (or given back)
			s.mem = append(s.mem, make([]byte, 0, SegmentSize))
		}
		seg := &s.mem[len(s.mem)-1]
		n := min(len(rest), SegmentSize-len(*seg))
		*seg = append(*seg, rest[:n]...)
		rest = rest[n:]
		end += int64(n)
	}
	s.memLen = end
	return off, true
}

// flush writes the pending bytes to the file.
func (s *Store) flush() error {
	if len(s.pend) == 0 {
		return nil
	}
	if _, err := s.file.WriteAt(s.pend, s.size); err != nil {
		s.err = fmt.Errorf("%s: %w", s.name, err)
		return s.err
	}
	s.size += int64(len(s.pend))
	s.pend = s.pend[:0]
	return nil
}

// Get reads len(dst) bytes from offset off into dst.
func (s *Store) Get(dst []byte, off int64) error {
	if off < s.released {
		return fmt.Errorf("%s: offset %d: %w", s.name, off, ErrReleased)
	}
	for len(dst) > 0 && off < s.memLen {
		seg := s.mem[off/SegmentSize]
		n := copy(dst, seg[off%SegmentSize:])
		dst, off = dst[n:], off+int64(n)
	}
	if len(dst) == 0 {
		return nil
	}
	if s.file == nil {
		return fmt.Errorf("%s: offset %d beyond its end", s.name, off)
	}
	fo := off - s.memLen // offset in the file and its pending bytes
	if fo < s.size {
		n := min(int64(len(dst)), s.size-fo)
		if _, err := s.file.ReadAt(dst[:n], fo); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		dst, fo = dst[n:], fo+n
	}
	if len(dst) > 0 {
		p := fo - s.size
		if p < 0 || p+int64(len(dst)) > int64(len(s.pend)) {
			return fmt.Errorf("%s: offset %d beyond its end", s.name, off)
		}
		copy(dst, s.pend[p:])
	}
	return nil
}

// View returns the n bytes at offset off: the store's own memory when they
// are there in one segment (valid until Release), else read into buf,
// grown as needed.
// The caller must not change them.
func (s *Store) View(off int64, n int, buf *[]byte) ([]byte, error) {
	if off >= s.released && off+int64(n) <= s.memLen && off/SegmentSize == (off+int64(n)-1)/SegmentSize && n > 0 {
		seg := s.mem[off/SegmentSize]
		if at := off % SegmentSize; at+int64(n) <= int64(len(seg)) {
			return seg[at : at+int64(n) : at+int64(n)], nil
		}
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if err := s.Get(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// Release gives back the memory segments wholly before offset end (their
// records were dropped).
func (s *Store) Release(end int64) {
	for s.released+SegmentSize <= min(end, s.memLen) {
		s.mem[s.released/SegmentSize] = nil
		s.released += SegmentSize
	}
}

// Bytes is what the store holds: in memory (less what was given back) and
// in its file (with what waits to be written).
func (s *Store) Bytes() (mem, file int64) {
	return s.memLen - s.released, s.size + int64(len(s.pend))
}

// Err is the failure that ended the store's writes, nil if none.
func (s *Store) Err() error { return s.err }

// Close releases the temporary file.
func (s *Store) Close() error {
	s.mem, s.pend = nil, nil
	if s.file != nil {
		err := s.file.Close()
		s.file = nil
		return err
	}
	return nil
}
