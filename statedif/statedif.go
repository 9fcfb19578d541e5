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
func Sub(dst, base, b []byte) { sub(dst, base, b, nil) }

// Apply is Sub for a dif that also follows the state's Hash: given h, the
// Hash of base (ignored for a nil base), it returns the Hash of dst. It
// costs what the changed words cost: a dif's runs of zeros are copied
// from base, or skipped when dst is base.
func Apply(dst, base, dif []byte, h Hash) Hash {
	if base == nil {
		h = ZeroHash(len(dst))
	}
	acc := newHashAcc(&h)
	sub(dst, base, dif, &acc)
	acc.flush()
	return h
}

// sub is Sub, adding to h, when not nil, the change of each word.
func sub(dst, base, b []byte, h *hashAcc) {
	// Eight bytes at a time, without borrows crossing bytes (SWAR):
	// (x|H) − (y&^H) cannot borrow out of a byte, then bit 7 is fixed.
	// Blocks of 32 bytes where b is zero leave base as it is (the difs
	// of a game are zero but for about one word in a hundred): runs of
	// them are copied whole, or skipped when dst is base.
	le := binary.LittleEndian
	n := len(dst)
	b = b[:n]
	if base != nil {
		base = base[:n]
	}
	inPlace := n > 0 && base != nil && &dst[0] == &base[0]
	run := 0 // where the current run of zero blocks started
	i := 0
	for ; i+32 <= n; i += 32 {
		y := b[i : i+32 : i+32]
		y0, y1, y2, y3 := le.Uint64(y), le.Uint64(y[8:]), le.Uint64(y[16:]), le.Uint64(y[24:])
		if y0|y1|y2|y3 == 0 {
			continue
		}
		keep(dst, base, run, i, inPlace)
		run = i + 32
		var x0, x1, x2, x3 uint64
		if base != nil {
			x := base[i : i+32 : i+32]
			x0, x1, x2, x3 = le.Uint64(x), le.Uint64(x[8:]), le.Uint64(x[16:]), le.Uint64(x[24:])
		}
		z := dst[i : i+32 : i+32]
		z0, z1, z2, z3 := swar(x0, y0), swar(x1, y1), swar(x2, y2), swar(x3, y3)
		le.PutUint64(z, z0)
		le.PutUint64(z[8:], z1)
		le.PutUint64(z[16:], z2)
		le.PutUint64(z[24:], z3)
		if h != nil {
			if y0 != 0 {
				h.word(i, x0, z0)
			}
			if y1 != 0 {
				h.word(i+8, x1, z1)
			}
			if y2 != 0 {
				h.word(i+16, x2, z2)
			}
			if y3 != 0 {
				h.word(i+24, x3, z3)
			}
		}
	}
	keep(dst, base, run, i, inPlace)
	for ; i < n; i += 8 { // the last few words, the last one padded
		var xs, ys, zs [8]byte
		m := copy(ys[:], b[i:])
		if base != nil {
			copy(xs[:], base[i:])
		}
		x, y := le.Uint64(xs[:]), le.Uint64(ys[:])
		z := swar(x, y)
		le.PutUint64(zs[:], z)
		copy(dst[i:i+m], zs[:])
		if h != nil && y != 0 {
			h.word(i, x, z)
		}
	}
}

// swar is x − y bytewise (mod 256).
func swar(x, y uint64) uint64 {
	const hi = 0x8080808080808080
	return ((x | hi) - (y &^ hi)) ^ ((x ^ ^y) & hi)
}

// keep sets dst[from:to] to base's (zeros for a nil base), unless dst is
// base.
func keep(dst, base []byte, from, to int, inPlace bool) {
	switch {
	case from >= to || inPlace:
	case base == nil:
		clear(dst[from:to])
	default:
		copy(dst[from:to], base[from:to])
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

// Dif names one dif: the level sequence it belongs to (in the versions
// whose pieces carry it), its base frame (0: zeros), its frame, and the
// level the server has loaded (in the versions whose pieces carry it).
type Dif struct {
	SLSN     int32
	Src, Dst int32
	Level    int32
}

// EachPiece cuts the compressed dif z into stdf pieces as p's version cuts
// them and calls send with each in order, p (a dif piece of that version)
// holding its fields: src, dst, count, and the level sequence and level
// where the version has them, seq, start and data. send may encode p; it
// must not keep it.
func EachPiece(p *decode.Packet, d Dif, z []byte, send func(seq int, p *decode.Packet) error) error {
	v := p.Version
	count := v.Pieces(len(z))
	if count > decode.MaxPieces {
		return fmt.Errorf("dif of %d bytes needs %d pieces, more than a dif can have (%d)", len(z), count, decode.MaxPieces)
	}
	p.SetRole(decode.RoleDifBase, int64(d.Src)).SetRole(decode.RoleFrame, int64(d.Dst)).SetRole(decode.RolePieceCount, int64(count)).
		SetRole(decode.RoleLevelSeq, int64(d.SLSN)).SetRole(decode.RoleLevel, int64(d.Level))
	seqF, _, startF, _ := p.Layout.PieceFields()
	var data string // the field the size field sizes
	for _, f := range p.Layout.Fields {
		if f.Type == decode.Data {
			data = f.Name
		}
	}
	for seq := range count {
		p.Set(p.Layout.Fields[seqF].Name, int64(seq)).Set(p.Layout.Fields[startF].Name, int64(seq*v.PieceSize())).SetBytes(data, v.Piece(z, seq))
		if err := send(seq, p); err != nil {
			return err
		}
	}
	return nil
}
