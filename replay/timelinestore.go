package replay

import (
	"encoding/binary"
	"fmt"

	"github.com/pmdump/pmdump/internal/spill"
	"github.com/pmdump/pmdump/statedif"
)

// Where the timeline keeps its difs and checkpoints.

// blob locates bytes in a store: offset in the low 40 bits (1 TiB), length
// in the high 24 (16 MiB).
type blob uint64

func mkblob(off int64, n int) blob { return blob(uint64(off) | uint64(n)<<40) }
func (b blob) off() int64          { return int64(b & (1<<40 - 1)) }
func (b blob) len() int            { return int(b >> 40) }

// store holds the timeline's blobs in a spill.Store: memory up to a
// budget, then a temporary file.
type store struct {
	s   *spill.Store
	buf []byte // a blob read from the file
	rec []byte // a dif's record being put
}

// hashBytes is the size of the state's hash after a dif in its record.
const hashBytes = 16

// putDif stores a dif's record: the compressed dif, then the hash of the
// state it makes (two little-endian uint64s).
func (s *store) putDif(dif []byte, h statedif.Hash) (blob, error) {
	s.rec = append(s.rec[:0], dif...)
	s.rec = binary.LittleEndian.AppendUint64(s.rec, h[0])
	s.rec = binary.LittleEndian.AppendUint64(s.rec, h[1])
	return s.put(s.rec)
}

func (s *store) put(b []byte) (blob, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if len(b) >= 1<<24 {
		return 0, fmt.Errorf("timeline store: %d-byte blob", len(b))
	}
	off, err := s.s.Put(b)
	if err != nil {
		return 0, err
	}
	if off >= 1<<40 {
		return 0, fmt.Errorf("timeline store: offset %d beyond the 1 TiB a blob can be at", off)
	}
	return mkblob(off, len(b)), nil
}

// get returns a blob's bytes, valid until the next get.
func (s *store) get(b blob) ([]byte, error) { return s.s.View(b.off(), b.len(), &s.buf) }

func (s *store) close() error { return s.s.Close() }
