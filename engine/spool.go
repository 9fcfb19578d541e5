package engine

import (
	"fmt"
	"os"
)

// spool holds bytes in memory up to a budget, then in a temporary file.
type spool struct {
	budget int
	dir    string
	mem    [][]byte // segments of segSize; those released are nil
	memLen int64
	// released is the bytes of the memory segments given back: the first
	// released/segSize segments.
	released int64
	file     *os.File
	size     int64  // bytes in the file
	pend     []byte // bytes after them, not written yet
	err      error
}

// pendMax is how many bytes the spool gathers before it writes them to its
// file: one write a megabyte, not one a packet.
const pendMax = 1 << 20

const segSize = 1 << 20

func (s *spool) put(b []byte) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil && s.memLen+int64(len(b)) <= int64(s.budget) {
		off := s.memLen
		end := off
		for rest := b; len(rest) > 0; {
			if int64(len(s.mem))*segSize == end { // the last segment is full (or given back)
				s.mem = append(s.mem, make([]byte, 0, segSize))
			}
			seg := &s.mem[len(s.mem)-1]
			n := min(len(rest), segSize-len(*seg))
			*seg = append(*seg, rest[:n]...)
			rest = rest[n:]
			end += int64(n)
		}
		s.memLen += int64(len(b))
		return off, nil
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "pmdump-packets-*")
		if err != nil {
			s.err = fmt.Errorf("packet index spool: %w", err)
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

// flush writes the pending bytes to the file.
func (s *spool) flush() error {
	if len(s.pend) == 0 {
		return nil
	}
	if _, err := s.file.WriteAt(s.pend, s.size); err != nil {
		s.err = fmt.Errorf("packet index spool: %w", err)
		return s.err
	}
	s.size += int64(len(s.pend))
	s.pend = s.pend[:0]
	return nil
}

// release gives back the memory segments wholly before offset end, in
// memory (the index has dropped the packets there).
func (s *spool) release(end int64) {
	for s.released+segSize <= min(end, s.memLen) {
		s.mem[s.released/segSize] = nil
		s.released += segSize
	}
}

func (s *spool) get(dst []byte, off int64) error {
	if off < s.released {
		return fmt.Errorf("packet index spool: offset %d: %w", off, ErrDropped)
	}
	for len(dst) > 0 && off < s.memLen {
		seg := s.mem[off/segSize]
		n := copy(dst, seg[off%segSize:])
		dst, off = dst[n:], off+int64(n)
	}
	if len(dst) == 0 {
		return nil
	}
	if s.file == nil {
		return fmt.Errorf("packet index spool: offset %d beyond its end", off)
	}
	fo := off - s.memLen // offset in the file and its pending bytes
	if fo < s.size {
		n := min(int64(len(dst)), s.size-fo)
		if _, err := s.file.ReadAt(dst[:n], fo); err != nil {
			return fmt.Errorf("packet index spool: %w", err)
		}
		dst, fo = dst[n:], fo+n
	}
	if len(dst) > 0 {
		if p := fo - s.size; p < 0 || p+int64(len(dst)) > int64(len(s.pend)) {
			return fmt.Errorf("packet index spool: offset %d beyond its end", off)
		} else {
			copy(dst, s.pend[p:])
		}
	}
	return nil
}

func (s *spool) close() error {
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}
