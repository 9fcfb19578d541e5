package gameclient

import (
	"encoding/binary"
	"math"
)

// wire is how one family of the game's versions puts the client's packets
// and the server's pieces on the wire, written here by hand from the
// game's netgame notes and version history, not taken from pmdump's
// decoder, so that the client is a check on it.
type wire struct {
	order interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	handshake bool // 1234/5678 first; without one, cjon goes to the listening port and every answer comes from it
	pieceSize int
	int32s    bool // every field an int32 (2024-06 on): cjon 24 or named, sjon 24, cdat 20, stak 64, stdf 36
	reordered bool // stdf piece fields first (2024-05-10 to 2024-05-30)
	named     bool // cjon with the player's name and host as length-prefixed text (2026 on)
	legacy    bool // upper-case CJON/SJON, sdat/sdak, a 10-byte stak
}

// wires are the families, by the name of every version of pmdump's
// registry (decode.Version.String()) that belongs to them.
var wires = func() map[string]wire {
	le := binary.LittleEndian
	legacy := wire{order: binary.BigEndian, handshake: true, pieceSize: 1000, legacy: true}
	modern := wire{order: le, handshake: true, pieceSize: 1000}
	n1 := wire{order: le, pieceSize: 1000}
	n2 := wire{order: le, pieceSize: 1400}
	n3 := wire{order: le, pieceSize: 1400, reordered: true}
	i32 := wire{order: le, pieceSize: 1400, int32s: true}
	j := i32
	j.named = true
	return map[string]wire{"legacy": legacy, "modern": modern, "2024-02b": modern, "2024-04": n1, "2024-05": n2,
		"2024-05b": n3, "2024-06": i32, "2026-01": j, "2026-01b": j, "2026-07": j}
}()

// joinRequest is the client's cjon (CJON).
func (w wire) joinRequest(color int, host, name string) []byte {
	switch {
	case w.named:
		p := []byte("cjon")
		p = w.order.AppendUint32(p, uint32(color))
		for _, s := range []string{name, host} {
			p = w.order.AppendUint32(p, uint32(len(s)))
			p = append(append(p, s...), 0)
		}
		return p
	case w.int32s:
		p := make([]byte, 24)
		copy(p, "cjon")
		w.order.PutUint32(p[4:], uint32(color))
		copy(p[8:23], host)
		return p
	}
	p := make([]byte, 21)
	copy(p, "cjon")
	if w.legacy {
		copy(p, "CJON")
	}
	p[4] = byte(color)
	copy(p[5:20], host) // 15 characters and a NUL
	return p
}

// joinReply reads a sjon (SJON): the join frame, the player and the level
// sequence; ok is false for any other packet.
func (w wire) joinReply(p []byte) (frame int32, player, slsn int, ok bool) {
	switch {
	case w.legacy:
		if len(p) != 21 || string(p[:4]) != "SJON" {
			return
		}
		return int32(w.order.Uint32(p[6:])), int(p[15]), 0, true
	case w.int32s:
		if len(p) != 24 || string(p[:4]) != "sjon" {
			return
		}
		return int32(w.order.Uint32(p[8:])), int(int32(w.order.Uint32(p[12:]))), int(int32(w.order.Uint32(p[20:]))), true
	}
	if len(p) != 15 || string(p[:4]) != "sjon" {
		return
	}
	return int32(w.order.Uint32(p[8:])), int(p[12]), int(p[14]), true
}

// piece reads a stdf header: the piece, its start and size, and the
// header's length; ok is false for a packet too short for it.
func (w wire) piece(p []byte) (pc Piece, start, size, hdr int, ok bool) {
	o := w.order
	i32 := func(at int) int { return int(int32(o.Uint32(p[at:]))) }
	switch {
	case w.int32s:
		if len(p) < 36 {
			return
		}
		pc = Piece{Seq: i32(4), Count: i32(8), Dst: int32(i32(20)), Src: int32(i32(24)), SLSN: i32(28)}
		return pc, i32(12), i32(16), 36, true
	case w.reordered:
		if len(p) < 23 {
			return
		}
		pc = Piece{Seq: int(p[4]), Count: int(p[5]), Dst: int32(i32(14)), Src: int32(i32(18)), SLSN: int(p[22])}
		return pc, i32(6), i32(10), 23, true
	case w.legacy:
		if len(p) < 22 {
			return
		}
		pc = Piece{Src: int32(i32(4)), Dst: int32(i32(8)), Seq: int(p[12]), Count: int(p[13])}
		return pc, i32(14), i32(18), 22, true
	}
	if len(p) < 23 {
		return
	}
	pc = Piece{Src: int32(i32(4)), Dst: int32(i32(8)), Seq: int(p[12]), Count: int(p[13]), SLSN: int(p[14])}
	return pc, i32(15), i32(19), 23, true
}

// ack is the client's stak of frame, in level sequence slsn.
func (w wire) ack(player int, slsn int, frame int32) []byte {
	o := w.order
	switch {
	case w.legacy:
		p := make([]byte, 10)
		copy(p, "stak")
		p[4] = byte(player)
		o.PutUint32(p[6:], uint32(frame))
		return p
	case w.int32s:
		p := make([]byte, 64)
		copy(p, "stak")
		o.PutUint32(p[4:], uint32(slsn))
		o.PutUint32(p[8:], uint32(player))
		o.PutUint32(p[12:], uint32(frame))
		o.PutUint32(p[16:], uint32(frame)) // client frame
		o.PutUint64(p[20:], math.Float64bits(40))
		return p
	}
	p := make([]byte, 54)
	copy(p, "stak")
	p[4] = byte(player)
	o.PutUint32(p[5:], uint32(frame))
	o.PutUint32(p[9:], uint32(frame)) // client frame
	o.PutUint64(p[13:], math.Float64bits(40))
	return p
}

// nextSLSN is the level sequence after slsn as the pieces carry it: a byte
// before 2024-06, an int32 from then.
func (w wire) nextSLSN(slsn int) int {
	if w.int32s || w.legacy {
		return slsn + 1
	}
	return (slsn + 1) & 0xff
}
