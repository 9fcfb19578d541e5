// Package statedif is the game's state dif, made and sent as the game's
// server does it: dif = base − new bytewise (mod 256), against the state
// the client last acknowledged among the last History states sent to it
// or else against zeros (src 0, a keyframe), zlib-compressed at ZlibLevel
// and cut into the era's stdf pieces of decode.PieceSize bytes. A client
// applies a dif with the same subtraction: new = base − dif.
//
// serve (a recording's states to live clients), synth (synthetic games)
// and the test game server send their states through it; replay and the
// test clients apply difs with Sub.
package statedif

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/decode"
)

// The game's rules for sending states.
const (
	// History is how many states the server keeps per client as bases
	// (the game's NUM_HISTORY_STATES); a client keeps as many.
	History = 8
	// ZlibLevel is the compression level of state difs (the game's
	// default).
	ZlibLevel = 7
)

// Sub sets dst = base − b bytewise (mod 256): with b a new state it makes
// the dif from base to it, with b a dif it applies it. A nil base stands
// for the all-zero base of a keyframe. dst may alias base or b; all must
// have the same length (base unless nil).
func Sub(dst, base, b []byte) {
	// Eight bytes at a time, without borrows crossing bytes (SWAR):
	// (x|H) − (y&^H) cannot borrow out of a byte, then bit 7 is fixed.
	const h = 0x8080808080808080
	n := len(dst)
	i := 0
	if base == nil {
		for ; i+8 <= n; i += 8 {
			y := binary.LittleEndian.Uint64(b[i:])
			binary.LittleEndian.PutUint64(dst[i:], (h-(y&^h))^(^y&h))
		}
		for ; i < n; i++ {
			dst[i] = -b[i]
		}
		return
	}
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(base[i:])
		y := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(dst[i:], ((x|h)-(y&^h))^((x^^y)&h))
	}
	for ; i < n; i++ {
		dst[i] = base[i] - b[i]
	}
}

// Compressor makes compressed difs, reusing its buffers. The zero value is
// ready to use; it is not safe for concurrent use.
type Compressor struct {
	dif []byte
	out bytes.Buffer
	zw  *zlib.Writer
}

// Compress returns the zlib stream (ZlibLevel) of the dif that turns base
// (nil: zeros) into cur. The result is valid until the next call.
func (c *Compressor) Compress(base, cur []byte) ([]byte, error) {
	if len(c.dif) != len(cur) {
		c.dif = make([]byte, len(cur))
	}
	Sub(c.dif, base, cur)
	return c.Deflate(c.dif)
}

// Deflate returns the zlib stream (ZlibLevel) of b. The result is valid
// until the next call.
func (c *Compressor) Deflate(b []byte) ([]byte, error) {
	c.out.Reset()
	if c.zw == nil {
		zw, err := zlib.NewWriterLevel(&c.out, ZlibLevel)
		if err != nil {
			return nil, fmt.Errorf("zlib writer: %w", err)
		}
		c.zw = zw
	} else {
		c.zw.Reset(&c.out)
	}
	if _, err := c.zw.Write(b); err != nil {
		return nil, fmt.Errorf("compressing dif: %w", err)
	}
	if err := c.zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing dif: %w", err)
	}
	return c.out.Bytes(), nil
}

// Dif names one dif: the level sequence it belongs to (modern era), its
// base frame (0: zeros) and its frame.
type Dif struct {
	SLSN     uint8
	Src, Dst int32
}

// EachPiece cuts the compressed dif z into stdf pieces and calls send with
// each in order, p (an stdf packet of the era) holding its fields: src,
// dst, count, slsn in the modern era, seq, start and data. send may encode
// p; it must not keep it.
func EachPiece(p *decode.Packet, d Dif, z []byte, send func(seq int, p *decode.Packet) error) error {
	count := decode.Pieces(len(z))
	if count > decode.MaxPieces {
		return fmt.Errorf("dif of %d bytes needs %d pieces, more than a byte can count", len(z), count)
	}
	p.Set("src", int64(d.Src)).Set("dst", int64(d.Dst)).Set("count", int64(count))
	if p.Era() == decode.Modern {
		p.Set("slsn", int64(d.SLSN))
	}
	for seq := range count {
		p.Set("seq", int64(seq)).Set("start", int64(seq*decode.PieceSize)).SetBytes("data", decode.Piece(z, seq))
		if err := send(seq, p); err != nil {
			return err
		}
	}
	return nil
}
