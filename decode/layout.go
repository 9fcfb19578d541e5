// Package decode turns the UDP payloads of a Purple Martians netgame into
// typed game packets, for every wire version of the game.
//
// Every packet is described once, as a Layout: an ordered list of Fields with
// their wire types, the packet's Kind (a join request, a dif piece, an
// acknowledgement…) and the names of its enumerated values. That one
// description drives decoding (Decode), encoding (Encode), the one-line
// summary, the field tree and the JSON fields, so the four can never
// disagree. The legacy era's quirks (negative integers that are not two's
// complement, the SJON damage offset, the short sdak) are part of the
// description too: a field knows how to recover the value the game meant
// from the raw value on the wire, and how to encode a meant value.
//
// The wire versions are data too (versions.go, tables.go): each Version says
// which builds of the game it covers, its byte order and what it can do
// (handshake, one server socket, piece size, the level sequence on the wire,
// probes, its sync model, its drop rule, its state sizes), and which layouts
// it has; a version that keeps a packet unchanged shares the earlier
// version's Layout. Code outside this package asks a Version what it can do
// and a Layout what Kind it is, never which version or which name it is.
// Fits and Explain tell the versions apart from a packet's bytes alone.
package decode

import "fmt"

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
	U16               // 2 bytes unsigned, in the layout's byte order
	I32               // 4 bytes signed, in the layout's byte order
	F64               // 8 bytes IEEE-754 double, little-endian
	Str16             // 16 bytes, NUL-terminated text
	Data              // bytes whose length is the value of the field named by Field.SizeOf
	Rest              // every byte up to the end of the payload
	Group             // Field.Sub repeated as often as the field named by Field.CountOf says
	StrN              // text of n bytes after an i32 n, then one NUL (4 + n + 1 bytes)
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

// Text reports whether values of the type are text (Str16, StrN).
func (t Type) Text() bool { return t == Str16 || t == StrN }

func (t Type) String() string {
	return [...]string{"u8", "s8", "u16", "i32", "f64", "str16", "data", "rest", "group", "strn"}[t]
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
	// RoleLevelSeq is the level-sequence number the packet belongs to
	// (the server's, in its pieces and join replies; the client's, in its
	// inputs and acknowledgements of the versions that carry it).
	RoleLevelSeq
	// RoleLevel is the number of the level being played.
	RoleLevel
)

// Kind says what a packet is for, whatever its name and version.
type Kind uint8

// The kinds of packet.
const (
	KindUnknown         Kind = iota
	KindHandshake            // the client's first packet to the server's listening port (1234)
	KindHandshakeReply       // the server's answer from its per-client port (5678)
	KindJoinRequest          // a client asks to join (cjon)
	KindJoinReply            // the server gives a player number (sjon)
	KindInput                // a client's controls changed (cdat)
	KindDifPiece             // a piece of a compressed state dif (stdf)
	KindDifAck               // a client acknowledges a state (stak)
	KindGameMoves            // the server's list of game moves (legacy sdat)
	KindGameMovesAck         // a client acknowledges game moves (legacy sdak)
	KindLateInput            // the server says an input came late (legacy serr)
	KindProbe                // a client's round-trip probe (ping)
	KindProbeReply           // the server's answer to a probe (pong)
	KindProbeEcho            // the client's echo of that answer (pang)
	KindFileRequest          // a client asks for the game-moves file (crfl)
	KindFilePiece            // a piece of a compressed file (sfil)
	KindFileAck              // a client acknowledges a file (sfak)
	KindSaveResult           // the server's answer to a file request (srrf)
	KindRemoteJoin           // a remote control joins (cjrc)
	KindRemoteJoinReply      // the server accepts a remote control (sjrc)
	KindRemoteCommand        // a remote-control command (rctl)
	KindRemoteInfo           // a piece of the server's information for a remote control (snfo)
	KindLog                  // a client's log line for the server's log (clog)
	KindPadding              // bytes that carry nothing (JUNK, extr)
	numKinds
)

var kindNames = [numKinds]string{"unknown", "handshake", "handshake reply", "join request", "join reply", "input",
	"dif piece", "dif ack", "game moves", "game-moves ack", "late-input report", "probe", "probe reply", "probe echo",
	"file request", "file piece", "file ack", "save result", "remote-control join", "remote-control join reply",
	"remote-control command", "remote-control info", "log line", "padding"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}

// Kinds returns every kind of packet, in order.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := KindHandshake; k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

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

// Enum names values of an integer field.
type Enum struct {
	// Name says what the values are ("save result").
	Name string
	// Values are the named values, in order.
	Values []EnumValue
	// Show makes the summary, the field tree and the JSON show a value's
	// name beside it (result=5(transfer off), "result_name": …).
	Show bool
}

// EnumValue is one named value of an Enum.
type EnumValue struct {
	Value int64
	Name  string // short, for text and filters
	Doc   string // what it means
}

// Lookup returns the named value v, and whether there is one.
func (e *Enum) Lookup(v int64) (EnumValue, bool) {
	if e == nil {
		return EnumValue{}, false
	}
	for _, ev := range e.Values {
		if ev.Value == v {
			return ev, true
		}
	}
	return EnumValue{}, false
}

// Value returns the value of the given name, and whether there is one.
func (e *Enum) Value(name string) (int64, bool) {
	if e == nil {
		return 0, false
	}
	for _, ev := range e.Values {
		if ev.Name == name {
			return ev.Value, true
		}
	}
	return 0, false
}

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
	Enum     *Enum    // names of values, for enumerated fields
	Optional bool     // may be absent at the end of the packet (legacy 21-byte sdak)

	ref int // index of the SizeOf or CountOf field
}

// Layout describes one packet as one or more versions send it.
type Layout struct {
	Name   string // the 4-character name that starts the payload
	Kind   Kind
	Dir    Dir
	Doc    string
	Fields []Field
	// ID numbers the layouts of every version from 0 to NumLayouts()-1,
	// so callers can keep per-layout tables in slices.
	ID int

	bigEndian         bool       // integers are big-endian (the versions that have it say so)
	versions          VersionSet // the versions that have this layout
	minLen, maxLen    int        // payload lengths that fit (maxLen < 0: unbounded)
	seq, count, start int        // indexes of the RolePieceSeq, RolePieceCount and RolePieceStart fields, or -1
	size              int        // index of the RoleSize field, or -1
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

// FieldByRole returns the index of the first field marked with role, or -1.
func (l *Layout) FieldByRole(role Role) int {
	if role == RoleNone {
		return -1
	}
	for i, f := range l.Fields {
		if f.Role == role {
			return i
		}
	}
	return -1
}

// MinLen is the shortest payload (name included) that fits the layout.
func (l *Layout) MinLen() int { return l.minLen }

// MaxLen is the longest payload that fits the layout, or -1 when unbounded.
func (l *Layout) MaxLen() int { return l.maxLen }

// BigEndian reports whether the layout's integers are big-endian.
func (l *Layout) BigEndian() bool { return l.bigEndian }

// Versions returns the versions that have this layout.
func (l *Layout) Versions() VersionSet { return l.versions }

// First is the oldest version that has this layout.
func (l *Layout) First() Version { return l.versions.Oldest() }

// Offset returns the byte offset of field i in the payload, or -1 when it
// follows a field of variable size.
func (l *Layout) Offset(i int) int {
	if i < 0 || i >= len(l.offsets) {
		return -1
	}
	return l.offsets[i]
}

func (l *Layout) finish() {
	l.index = map[string]int{}
	l.player, l.frame, l.size = -1, -1, -1
	l.seq, l.count, l.start = -1, -1, -1
	l.minLen, l.maxLen = 4, 4
	l.offsets = make([]int, len(l.Fields))
	l.keys, l.keyText = nil, nil
	off := 4
	for i, f := range l.Fields {
		if _, dup := l.index[f.Name]; dup {
			panic("decode: " + l.Name + " has two fields named " + f.Name)
		}
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
		case RoleSize:
			l.size = i
		}
		switch f.Type {
		case Data, Rest, Group:
			l.maxLen = -1
		case StrN:
			l.minLen += 5 // an empty text: its length and its NUL
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

// PieceFields returns the indexes, in Fields, of the fields a layout marks
// RolePieceSeq, RolePieceCount and RolePieceStart: the header of a payload
// sent in pieces (stdf, snfo, sfil), whose piece size is the RoleSize field.
// Decode checks such a header: count is not 0 nor above MaxPieces, seq is
// below count and start is not negative (errors "piece count is 0", "piece
// count C is more than any message has (255)", "piece seq S is not below
// piece count C", "start byte B is negative"). ok is false for a layout
// without the three roles.
func (l *Layout) PieceFields() (seq, count, start int, ok bool) {
	if !l.pieces() {
		return -1, -1, -1, false
	}
	return l.seq, l.count, l.start, true
}

// pieces reports whether the layout has the three piece roles.
func (l *Layout) pieces() bool { return l.seq >= 0 && l.count >= 0 && l.start >= 0 }

// pieceCheck validates the piece header of a layout with piece roles.
func pieceCheck(p *Packet) error {
	l := p.Layout
	seq, count := p.Values[l.seq].Int, p.Values[l.count].Int
	if count == 0 {
		return fmt.Errorf("piece count is 0")
	}
	if count < 0 || count > MaxPieces {
		return fmt.Errorf("piece count %d is more than any message has (%d)", count, MaxPieces)
	}
	if seq < 0 || seq >= count {
		return fmt.Errorf("piece seq %d is not below piece count %d", seq, count)
	}
	if start := p.Values[l.start].Int; start < 0 {
		return fmt.Errorf("start byte %d is negative", start)
	}
	return nil
}
