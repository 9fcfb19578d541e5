package synth

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zlib"
	"github.com/pmdump/pmdump/decode"
)

// Dif compression as the game does it.
const (
	// ZlibLevel is the compression level of state difs (the game's default).
	ZlibLevel = 7
	// PieceSize is the largest stdf piece payload.
	PieceSize = decode.PieceSize
	// HistoryLen is how many states the server keeps per client.
	HistoryLen = 8
)

// MakeDif writes into dst the dif that turns base into cur: dif = base − cur,
// bytewise with 8-bit wrap-around. A nil base stands for the all-zero base of
// a keyframe (src = 0). dst, base and cur must have the same length (base
// unless nil).
func MakeDif(dst, base, cur []byte) {
	const hi = 0x8080808080808080
	n := len(cur) &^ 7
	if base == nil {
		for i := 0; i < n; i += 8 {
			y := binary.LittleEndian.Uint64(cur[i:])
			// 0 − y per byte: (0x80… − low bits of y) with the top bits fixed up
			binary.LittleEndian.PutUint64(dst[i:], (hi-(y&^hi))^(^y&hi))
		}
		for i := n; i < len(cur); i++ {
			dst[i] = -cur[i]
		}
		return
	}
	for i := 0; i < n; i += 8 {
		x := binary.LittleEndian.Uint64(base[i:])
		y := binary.LittleEndian.Uint64(cur[i:])
		binary.LittleEndian.PutUint64(dst[i:], ((x|hi)-(y&^hi))^((x^^y)&hi))
	}
	for i := n; i < len(cur); i++ {
		dst[i] = base[i] - cur[i]
	}
}

// Pieces returns how many stdf pieces carry a compressed dif of n bytes:
// n/1000 + 1, so a size that is a multiple of 1000 ends in an empty piece.
func Pieces(n int) int { return n/PieceSize + 1 }

// Piece returns the bytes of piece seq of a compressed dif.
func Piece(compressed []byte, seq int) []byte {
	start := seq * PieceSize
	end := min(start+PieceSize, len(compressed))
	if start > len(compressed) {
		return compressed[len(compressed):]
	}
	return compressed[start:end]
}

// compressor makes and compresses difs, reusing its buffers.
type compressor struct {
	dif []byte
	out bytes.Buffer
	zw  *zlib.Writer
}

func newCompressor(size int) (*compressor, error) {
	c := &compressor{dif: make([]byte, size)}
	zw, err := zlib.NewWriterLevel(&c.out, ZlibLevel)
	if err != nil {
		return nil, fmt.Errorf("zlib writer: %w", err)
	}
	c.zw = zw
	return c, nil
}

// compress returns the zlib stream of the dif from base (nil: zeros) to cur.
// The result is valid until the next call.
func (c *compressor) compress(base, cur []byte) ([]byte, error) {
	MakeDif(c.dif, base, cur)
	c.out.Reset()
	c.zw.Reset(&c.out)
	if _, err := c.zw.Write(c.dif); err != nil {
		return nil, fmt.Errorf("compressing dif: %w", err)
	}
	if err := c.zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing dif: %w", err)
	}
	return c.out.Bytes(), nil
}

// snapshot is one state the server sent, shared by every client whose
// history holds it.
type snapshot struct {
	key  uint64
	data []byte
	sha  [32]byte
	refs int
}

// snapStore holds the states that some client's history refers to. A state
// is freed when no history refers to it, so memory stays bounded by
// HistoryLen states per client.
type snapStore struct {
	size int
	m    map[uint64]*snapshot
	free [][]byte
}

func newSnapStore(size int) *snapStore {
	return &snapStore{size: size, m: map[uint64]*snapshot{}}
}

func snapKey(slsn uint8, frame int32) uint64 { return uint64(slsn)<<32 | uint64(uint32(frame)) }

// put returns the snapshot of key, copying cur into a new one if there is
// none yet. The caller must ref it.
func (s *snapStore) put(key uint64, cur []byte) *snapshot {
	if sn := s.m[key]; sn != nil {
		return sn
	}
	var b []byte
	if n := len(s.free); n > 0 {
		b, s.free = s.free[n-1], s.free[:n-1]
	} else {
		b = make([]byte, s.size)
	}
	copy(b, cur)
	sn := &snapshot{key: key, data: b, sha: sha256.Sum256(b)}
	s.m[key] = sn
	return sn
}

func (s *snapStore) unref(sn *snapshot) {
	sn.refs--
	if sn.refs <= 0 {
		delete(s.m, sn.key)
		s.free = append(s.free, sn.data)
		sn.data = nil
	}
}
