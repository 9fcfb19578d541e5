// Package decode turns the UDP payloads of a Purple Martians netgame into
// typed game packets, for both protocol eras.
//
// Every packet is described once, as a Layout: an ordered list of Fields with
// their wire types. That one description drives decoding (Decode), encoding
// (Encode), the one-line summary, the field tree and the JSON fields, so the
// four can never disagree. The legacy era's quirks (negative integers that
// are not two's complement, the SJON damage offset, the short sdak) are part
// of the description too: a field knows how to recover the value the game
// meant from the raw value on the wire.
package decode

import (
	"fmt"
	"strings"
)

// Era is a protocol era of the game.
type Era uint8

const (
	// EraUnknown means no era could be inferred yet.
	EraUnknown Era = iota
	// Legacy is the big-endian protocol of about 2018 to December 2022.
	Legacy
	// Modern is the little-endian protocol of 2023 onwards.
	Modern
)

// Eras lists the known eras, oldest first.
var Eras = []Era{Legacy, Modern}

func (e Era) String() string {
	switch e {
	case Legacy:
		return "legacy"
	case Modern:
		return "modern"
	}
	return "unknown"
}

// ParseEra parses "legacy", "modern" or "auto" (EraUnknown).
func ParseEra(s string) (Era, error) {
	switch strings.ToLower(s) {
	case "legacy":
		return Legacy, nil
	case "modern":
		return Modern, nil
	case "", "auto":
		return EraUnknown, nil
	}
	return EraUnknown, fmt.Errorf("unknown era %q (want legacy, modern or auto)", s)
}

// Dir is the direction a packet travels.
type Dir uint8

const (
	// DirUnknown is used for packets whose name is not known.
	DirUnknown Dir = iota
	// C2S is client to server.
	C2S
	// S2C is server to client.
	S2C
)

func (d Dir) String() string {
	switch d {
	case C2S:
		return "c2s"
	case S2C:
		return "s2c"
	}
	return "?"
}

// Arrow is the direction as shown in text output.
func (d Dir) Arrow() string {
	switch d {
	case C2S:
		return "c→s"
	case S2C:
		return "s→c"
	}
	return "?→?"
}

// Type is the wire type of a field.
type Type uint8

const (
	U8    Type = iota // 1 byte unsigned
	S8                // 1 byte signed
	U16               // 2 bytes unsigned, in the era's byte order
	I32               // 4 bytes signed, in the era's byte order
	F64               // 8 bytes IEEE-754 double, little-endian
	Str16             // 16 bytes, NUL-terminated text
	Data              // bytes whose length is the value of the field named by Field.SizeOf
	Rest              // every byte up to the end of the payload
	Group             // Field.Sub repeated as often as the field named by Field.CountOf says
)

// Size is the fixed size of a field of this type in bytes, 0 when variable.
func (t Type) Size() int {
	switch t {
	case U8, S8:
		return 1
	case U16:
		return 2
	case I32:
		return 4
	case F64:
		return 8
	case Str16:
		return 16
	}
	return 0
}

func (t Type) String() string {
	return [...]string{"u8", "s8", "u16", "i32", "f64", "str16", "data", "rest", "group"}[t]
}

// Role marks fields with a meaning shared across packets, used to attach
// packets to players and game frames.
type Role uint8

const (
	// RoleNone is an ordinary field.
	RoleNone Role = iota
	// RolePlayer is the player number the packet is about.
	RolePlayer
	// RoleFrame is the game frame the packet refers to.
	RoleFrame
	// RoleSize is the length of the packet's Data field.
	RoleSize
	// RoleCount is the number of entries of the packet's Group field.
	RoleCount
	// RolePieceSeq is a piece's index, 0-based, in a payload sent in pieces
	// (stdf, snfo, sfil); the piece's size is its RoleSize field.
	RolePieceSeq
	// RolePieceCount is the number of pieces of that payload.
	RolePieceCount
	// RolePieceStart is the byte of the payload a piece starts at.
	RolePieceStart
	// RoleDifBase is the frame of the state a dif applies to (0: the
	// all-zero base); the frame it produces is the layout's RoleFrame.
	RoleDifBase
	// RoleLevelSeq is the server's level-sequence number.
	RoleLevelSeq
)

// Recover names how the value the game meant is recovered from a raw value.
type Recover uint8

const (
	// AsIs means the raw value is the value.
	AsIs Recover = iota
	// Negative is for legacy fields that are always negative on the sender:
	// the game encodes each byte with truncating division and an unsigned
	// cast, so -1 goes out as 000000ff. See RecoverNegative.
	Negative
	// Minus1000 is for the legacy SJON damage field, sent as damage + 1000.
	Minus1000
)

// Field describes one field of a packet layout.
type Field struct {
	Name     string   // snake_case name, used in text, JSON and filters
	Type     Type     // wire type
	Doc      string   // what the field means
	Key      bool     // shown in the one-line summary
	Role     Role     // shared meaning, if any
	Recover  Recover  // how to recover the meant value from the raw one
	SizeOf   string   // for Data: the field holding the length
	CountOf  string   // for Group: the field holding the count
	Sub      []Field  // for Group: the fields of one entry
	Bits     []string // names of bits 0.., for bit-set fields (control bits)
	Optional bool     // may be absent at the end of the packet (legacy 21-byte sdak)

	ref int // index of the SizeOf or CountOf field
}

// Layout describes one packet of one era.
type Layout struct {
	Name   string // the 4-character name that starts the payload
	Era    Era
	Dir    Dir
	Doc    string
	Fields []Field
	// ID numbers the layouts of every era from 0 to NumLayouts()-1, so
	// callers can keep per-layout tables in slices.
	ID int

	minLen, maxLen    int // payload lengths that fit (maxLen < 0: unbounded)
	seq, count, start int // indexes of the RolePieceSeq, RolePieceCount and RolePieceStart fields, or -1
	index             map[string]int
	player, frame     int   // index of the RolePlayer and RoleFrame fields, or -1
	offsets           []int // byte offset of each field in the payload, -1 after a variable-size one
	keys              []int // indexes of the Key fields, in order

	// What the summary writes before each Key field's value: "name=",
	// then " name=".
	keyText []string
}

// Field returns the index of the named field, or -1.
func (l *Layout) Field(name string) int {
	if i, ok := l.index[name]; ok {
		return i
	}
	return -1
}

// MinLen is the shortest payload (name included) that fits the layout.
func (l *Layout) MinLen() int { return l.minLen }

// MaxLen is the longest payload that fits the layout, or -1 when unbounded.
func (l *Layout) MaxLen() int { return l.maxLen }

func (l *Layout) finish() {
	l.index = map[string]int{}
	l.player, l.frame = -1, -1
	l.seq, l.count, l.start = -1, -1, -1
	l.minLen, l.maxLen = 4, 4
	l.offsets = make([]int, len(l.Fields))
	off := 4
	for i, f := range l.Fields {
		l.index[f.Name] = i
		l.offsets[i] = off
		if f.Key {
			sep := " "
			if len(l.keys) == 0 {
				sep = ""
			}
			l.keys = append(l.keys, i)
			l.keyText = append(l.keyText, sep+f.Name+"=")
		}
		if sz := f.Type.Size(); sz > 0 && off >= 0 {
			off += sz
		} else {
			off = -1
		}
		if ref := f.SizeOf + f.CountOf; ref != "" {
			j, ok := l.index[ref]
			if !ok {
				panic("decode: " + l.Name + "." + f.Name + " refers to " + ref + ", which does not precede it")
			}
			l.Fields[i].ref = j
		}
		switch f.Role {
		case RolePieceSeq:
			l.seq = i
		case RolePieceCount:
			l.count = i
		case RolePieceStart:
			l.start = i
		case RolePlayer:
			l.player = i
		case RoleFrame:
			l.frame = i
		}
		switch f.Type {
		case Data, Rest, Group:
			l.maxLen = -1
		default:
			if !f.Optional {
				l.minLen += f.Type.Size()
			}
			if l.maxLen >= 0 {
				l.maxLen += f.Type.Size()
			}
		}
	}
	if n := btoi(l.seq >= 0) + btoi(l.count >= 0) + btoi(l.start >= 0); n != 0 && n != 3 {
		panic("decode: " + l.Name + " marks some piece roles but not all of seq, count and start")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// NameKey packs a 4-byte name into an integer map key.
func NameKey(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// nameInfo is what is known of one packet name: its layout in each era.
type nameInfo struct {
	dir    Dir
	layout [3]*Layout // indexed by Era
}

// names finds a name's nameInfo. It is a small open-addressing table, not
// a map: every packet of a capture is looked up, and this is several times
// cheaper than hashing into a map.
var names nameTable

// nameSlots is the size of the name table: a power of two well above the
// number of names of all eras, so probes stay short.
const nameSlots = 256

type nameTable [nameSlots]struct {
	key  uint32
	info *nameInfo
}

func nameSlot(k uint32) uint32 { return (k * 0x9E3779B1) >> 24 }

func (t *nameTable) get(k uint32) *nameInfo {
	for i := nameSlot(k); ; i = (i + 1) % nameSlots {
		e := &t[i]
		if e.info == nil || e.key == k {
			return e.info
		}
	}
}

func (t *nameTable) put(k uint32, n *nameInfo) {
	for i, probes := nameSlot(k), 0; ; i, probes = (i+1)%nameSlots, probes+1 {
		if probes == nameSlots/2 {
			panic("decode: the name table is too small")
		}
		if e := &t[i]; e.info == nil {
			e.key, e.info = k, n
			return
		}
	}
}

// Lookup returns the layout of a name in an era, or nil.
func Lookup(era Era, name []byte) *Layout {
	if len(name) < 4 || int(era) >= 3 {
		return nil
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.layout[era]
	}
	return nil
}

// DirOf returns the direction a known name travels in (the same in every
// era that has it), or DirUnknown for a name no era knows.
func DirOf(name []byte) Dir {
	if len(name) < 4 {
		return DirUnknown
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.dir
	}
	return DirUnknown
}

// NumLayouts is the number of layouts of all eras; see Layout.ID.
func NumLayouts() int { return len(allLayouts) }

// Layouts returns every layout of an era, in table order.
func Layouts(era Era) []*Layout {
	var out []*Layout
	for _, l := range allLayouts {
		if l.Era == era {
			out = append(out, l)
		}
	}
	return out
}

// Known reports whether name is a packet name of any era.
func Known(name []byte) bool {
	return Lookup(Legacy, name) != nil || Lookup(Modern, name) != nil
}

var allLayouts []*Layout

func register(ls ...*Layout) {
	for _, l := range ls {
		l.finish()
		k := NameKey([]byte(l.Name))
		n := names.get(k)
		if n == nil {
			n = &nameInfo{dir: l.Dir}
			names.put(k, n)
		}
		if n.dir != l.Dir {
			panic("decode: " + l.Name + " travels in different directions in different eras")
		}
		n.layout[l.Era] = l
		l.ID = len(allLayouts)
		allLayouts = append(allLayouts, l)
	}
}

// RecoverNegative recovers the negative value the legacy game meant from the
// four bytes it wrote for it. The game wrote byte k as (unsigned char)(v /
// 256^k % 256) with truncating division, so every non-zero byte stands for
// byte - 256. -1 is 000000ff, -256 is 0000ff00, -300 is 0000ffd4.
func RecoverNegative(raw uint32) int64 {
	var v int64
	for k := 3; k >= 0; k-- {
		b := int64(raw >> (8 * k) & 0xff)
		v *= 256
		if b != 0 {
			v += b - 256
		}
	}
	return v
}

// EncodeNegative is the game's legacy encoding of a negative value, the
// inverse of RecoverNegative for -2^31 < v <= 0.
func EncodeNegative(v int64) uint32 {
	var raw uint32
	for k := 3; k >= 0; k-- {
		p := int64(1) << (8 * k)
		d := v / p // truncates towards zero, as C does
		v -= d * p
		raw |= uint32(uint8(d)) << (8 * k)
	}
	return raw
}
