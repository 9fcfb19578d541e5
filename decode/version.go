package decode

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Version is a wire version of the game: a range of builds whose netgames
// talk to each other. Its VersionInfo says what it is and what it can do;
// code outside this package asks it (Info, Has, Layout) rather than compare
// it with a known version. VersionUnknown is the zero Version.
type Version uint8

// MaxVersions bounds the number of versions, so per-version tables can be
// arrays.
const MaxVersions = 16

const (
	// VersionUnknown means no version could be told yet.
	VersionUnknown Version = 0
	// Legacy is the big-endian protocol of about 2018 to December 2022.
	Legacy Version = 1
	// Modern is the little-endian protocol of the build of 20 February 2024
	// that the game's netgame documents describe.
	Modern Version = 2
)

// Newest is the newest version pmdump knows.
var Newest Version

// MaxPieceSize is the largest piece size of any version, so MaxPieces ×
// MaxPieceSize bounds every compressed message.
var MaxPieceSize int

// String is the version's name, "unknown" for VersionUnknown.
func (v Version) String() string {
	if i := v.info(); i != nil {
		return i.Name
	}
	return "unknown"
}

// Label is how text names the version in a phrase: "legacy era",
// "modern era", "version 2026-07", "unknown version".
func (v Version) Label() string {
	i := v.info()
	switch {
	case i == nil:
		return "unknown version"
	case i.Label != "":
		return i.Label
	}
	return "version " + i.Name
}

// Known reports whether v is a version of the registry.
func (v Version) Known() bool { return v.info() != nil }

// Info describes the version; nil for VersionUnknown.
func (v Version) Info() *VersionInfo { return v.info() }

func (v Version) info() *VersionInfo {
	if v == VersionUnknown || int(v) >= len(registry) {
		return nil
	}
	return registry[v]
}

// Order is the byte order of the version's integers (little-endian for
// VersionUnknown).
func (v Version) Order() binary.ByteOrder {
	if i := v.info(); i != nil && i.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Has reports whether the version has a packet of kind k.
func (v Version) Has(k Kind) bool { return v.Kind(k) != nil }

// Kind returns the version's first layout of kind k, or nil.
func (v Version) Kind(k Kind) *Layout {
	i := v.info()
	if i == nil {
		return nil
	}
	for _, l := range i.layouts {
		if l.Kind == k {
			return l
		}
	}
	return nil
}

// Layout returns the version's layout of the named packet, or nil.
func (v Version) Layout(name string) *Layout { return Lookup(v, []byte(name)) }

// Layouts returns every layout of the version, in table order.
func (v Version) Layouts() []*Layout {
	if i := v.info(); i != nil {
		return i.layouts
	}
	return nil
}

// LevelSeqOn reports whether the version's packets of kind k carry the
// level sequence (RoleLevelSeq).
func (v Version) LevelSeqOn(k Kind) bool {
	l := v.Kind(k)
	return l != nil && l.FieldByRole(RoleLevelSeq) >= 0
}

// PieceSize is the largest data payload of one piece (stdf, sfil, snfo):
// the server cuts a compressed message into pieces of this many bytes,
// the last one shorter (possibly empty).
func (v Version) PieceSize() int {
	if i := v.info(); i != nil {
		return i.PieceSize
	}
	return 1000
}

// Pieces returns how many pieces carry a compressed message of n bytes:
// n/PieceSize + 1, so a size that is a multiple of PieceSize ends in an
// empty piece, as the game cuts them.
func (v Version) Pieces(n int) int { return n/v.PieceSize() + 1 }

// Piece returns the bytes of piece seq of the compressed message z: from
// seq*PieceSize, at most PieceSize of them (none past the end).
func (v Version) Piece(z []byte, seq int) []byte {
	ps := v.PieceSize()
	start := min(seq*ps, len(z))
	return z[start:min(start+ps, len(z))]
}

// StateSize reports whether n is the size of a state of the version.
func (v Version) StateSize(n int) bool {
	i := v.info()
	return i != nil && slices.Contains(i.StateSizes, n)
}

// Sync is the version's sync model (0 for VersionUnknown).
func (v Version) Sync() Sync {
	if i := v.info(); i != nil {
		return i.Sync
	}
	return 0
}

// Drop is the version's drop rule (the zero rule for VersionUnknown).
func (v Version) Drop() DropRule {
	if i := v.info(); i != nil {
		return i.Drop
	}
	return DropRule{}
}

// InMenu reports whether a player's control value (an input's move) is
// the game's menu (ESC) in this version.
func (v Version) InMenu(move int64) bool {
	i := v.info()
	if i == nil {
		return false
	}
	if i.MenuValue != 0 {
		return move == i.MenuValue
	}
	if l := v.Kind(KindInput); l != nil {
		for _, f := range l.Fields {
			for b, name := range f.Bits {
				if name == "menu" {
					return move&(1<<b) != 0
				}
			}
		}
	}
	return false
}

// Siblings returns the versions whose packets are the same as v's (the
// same layout for every name): only the state size, or nothing on the
// wire, tells them apart.
func (v Version) Siblings() VersionSet {
	i := v.info()
	if i == nil {
		return 0
	}
	return i.siblings
}

// VersionInfo describes one wire version.
type VersionInfo struct {
	// Name is what users type and read (--era, the JSON "era", filters).
	Name string
	// Aliases are other names it answers to (the ids of the game's
	// version notes, the build kit's names).
	Aliases []string
	// Label is how text names it in a phrase ("modern era"); "version"
	// and its name when empty.
	Label string
	// First and Last are the first and last builds of the version.
	First, Last Build
	// Changes says what changed on the wire from the version before.
	Changes string
	// Tells says how pmdump tells the version from the bytes alone.
	Tells string

	// BigEndian: integers are big-endian (else little-endian).
	BigEndian bool
	// SharedServerSocket: the server sends everything from one socket
	// (its listening port); else each client gets a server port of its own
	// after the handshake.
	SharedServerSocket bool
	// JoinOnArrival: the server handles a join request (cjon) as soon as
	// it arrives, between frames, not in its next frame: the join reply's
	// frame is the frame that last ran, the client's first state that of
	// two frames later. A client without a channel yet has its packets
	// handled on arrival (seen in the game's source of Aug 2024, Jul and
	// Aug 2026; the versions between them join the same way).
	JoinOnArrival bool
	// EphemeralClientPort: clients send from a port of their own choosing;
	// else from the game's port.
	EphemeralClientPort bool
	// PieceSize is the data size of a full piece.
	PieceSize int
	// StateSizes are the sizes a state of the version has.
	StateSizes []int
	// StateLevelSeq is the byte offset of the level sequence in a state
	// (in the first player's record), -1 when the state holds none.
	StateLevelSeq int
	// Sync is how the clients' inputs reach the other players.
	Sync Sync
	// DifEvery is how often the server sends a client a dif: every
	// DifEvery frames, in turn (legacy: one client per 5 frames) or to
	// every client (Sync Rewind: each frame).
	DifEvery int
	// Drop is when the server drops a client that stopped answering.
	Drop DropRule
	// ClientsSaveFiles: clients ask for the game-moves file by themselves
	// at each level's end (a crfl), when the game's settings say so.
	ClientsSaveFiles bool
	// LogAlways: every client sends a log line (clog) for every netgame
	// log entry, whatever its settings.
	LogAlways bool
	// FileBlob is the size a file transfer inflates to: 0 for the file's
	// size + 128 (a name field, then the file), else this fixed size (the
	// name, the file, then whatever the server's buffer held), -1 either
	// (the version changed it within its builds).
	FileBlob int
	// MenuValue is the control value of a player in the game's menu, when
	// the version sends one value for it (legacy: 127); 0 when the menu is
	// the "menu" bit of the controls.
	MenuValue int64
	// Prior breaks ties between versions the evidence cannot tell apart:
	// the higher one is chosen (the ones users meet most).
	Prior int

	id       Version
	from     string     // the version whose layouts this one starts from
	add      []*Layout  // layouts added or replacing the one of that name
	drop     []string   // names the version no longer has
	layouts  []*Layout  // the resolved layouts
	siblings VersionSet // versions with the same layouts
}

// Build names one build of the game.
type Build struct {
	Date      string // yyyy-mm-dd
	Commit    string // short commit hash of the game's source
	PMVersion string // the version string the build reports
}

// Sync is a version's way of keeping the players' worlds together.
type Sync uint8

const (
	// GameMoves: the server sends every client the list of game moves
	// (sdat), the clients acknowledge it (sdak), a late input gets a serr;
	// difs correct the states now and then.
	GameMoves Sync = iota + 1
	// Rewind: the server rewinds and replays late inputs and sends every
	// client a dif every frame; no game moves go over the wire.
	Rewind
)

func (s Sync) String() string {
	switch s {
	case GameMoves:
		return "game moves"
	case Rewind:
		return "rewind"
	}
	return "?"
}

// DropRule is when the server drops a client: Frames frames without its
// acknowledgement (Ack: sdak or stak), checked only after frame After of a
// level; a client that joins has Grace frames more.
type DropRule struct {
	Frames, After, Grace int
	Ack                  Kind
	// Reason is the player state of the drop in the game moves.
	Reason int
}

// VersionSet is a set of versions.
type VersionSet uint32

// Of returns the set of the given versions.
func Of(vs ...Version) VersionSet {
	var s VersionSet
	for _, v := range vs {
		s = s.With(v)
	}
	return s
}

// With returns s with v.
func (s VersionSet) With(v Version) VersionSet { return s | 1<<v }

// Has reports whether v is in s.
func (s VersionSet) Has(v Version) bool { return s&(1<<v) != 0 }

// Len is the number of versions in s.
func (s VersionSet) Len() int { return bits.OnesCount32(uint32(s)) }

// Oldest is the oldest version in s, VersionUnknown for an empty set.
func (s VersionSet) Oldest() Version {
	if s == 0 {
		return VersionUnknown
	}
	return Version(bits.TrailingZeros32(uint32(s)))
}

// Versions lists the versions in s, oldest first.
func (s VersionSet) Versions() []Version {
	var out []Version
	for v := Version(0); v < MaxVersions; v++ {
		if s.Has(v) {
			out = append(out, v)
		}
	}
	return out
}

// Best returns the version of s with the highest Prior, VersionUnknown for
// an empty set.
func (s VersionSet) Best() Version {
	best := VersionUnknown
	for _, v := range s.Versions() {
		if best == VersionUnknown || v.info().Prior > best.info().Prior {
			best = v
		}
	}
	return best
}

// OneByteOrder reports whether every version of s has the same byte order.
func (s VersionSet) OneByteOrder() bool {
	be, le := false, false
	for _, v := range s.Versions() {
		if v.Info().BigEndian {
			be = true
		} else {
			le = true
		}
	}
	return !(be && le)
}

// WithStateSize returns the versions of s whose states have n bytes.
func (s VersionSet) WithStateSize(n int) VersionSet {
	var out VersionSet
	for _, v := range s.Versions() {
		if v.StateSize(n) {
			out = out.With(v)
		}
	}
	return out
}

func (s VersionSet) String() string {
	var names []string
	for _, v := range s.Versions() {
		names = append(names, v.String())
	}
	return strings.Join(names, ", ")
}

// All is the set of every known version.
func All() VersionSet {
	var s VersionSet
	for _, v := range Versions() {
		s = s.With(v)
	}
	return s
}

// registry holds the versions by Version, index 0 unused.
var registry = []*VersionInfo{nil}

// Versions lists every known version, oldest first.
func Versions() []Version {
	out := make([]Version, 0, len(registry)-1)
	for v := 1; v < len(registry); v++ {
		out = append(out, Version(v))
	}
	return out
}

// ParseVersion parses a version's name or alias (case does not matter),
// or "auto" and "" (VersionUnknown: infer it).
func ParseVersion(s string) (Version, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" || t == "auto" {
		return VersionUnknown, nil
	}
	for _, v := range Versions() {
		i := v.info()
		if t == i.Name || slices.Contains(i.Aliases, t) {
			return v, nil
		}
	}
	return VersionUnknown, fmt.Errorf("unknown version %q (want auto or one of %s)", s, strings.Join(VersionNames(), ", "))
}

// MustParseVersion is ParseVersion for names known to exist.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil || v == VersionUnknown {
		panic(fmt.Sprintf("decode: no version %q", s))
	}
	return v
}

// VersionNames lists the names of every version, oldest first.
func VersionNames() []string {
	var out []string
	for _, v := range Versions() {
		out = append(out, v.String())
	}
	return out
}

// registerVersions resolves each version's layouts (its own, and those of
// the version it starts from) and registers them.
func registerVersions(infos []*VersionInfo) {
	byName := map[string]*VersionInfo{}
	for _, vi := range infos {
		if len(registry) >= MaxVersions {
			panic("decode: more versions than MaxVersions")
		}
		vi.id = Version(len(registry))
		registry = append(registry, vi)
		var base []*Layout
		if vi.from != "" {
			b, ok := byName[vi.from]
			if !ok {
				panic("decode: " + vi.Name + " starts from " + vi.from + ", which does not precede it")
			}
			base = b.layouts
		}
		// A replaced layout keeps its place in the table; new ones go last.
		var ls []*Layout
		for _, l := range base {
			if slices.Contains(vi.drop, l.Name) {
				continue
			}
			if i := slices.IndexFunc(vi.add, func(a *Layout) bool { return a.Name == l.Name }); i >= 0 {
				l = vi.add[i]
			}
			ls = append(ls, l)
		}
		for _, a := range vi.add {
			if !slices.ContainsFunc(base, func(l *Layout) bool { return l.Name == a.Name }) {
				ls = append(ls, a)
			}
		}
		vi.layouts = ls
		byName[vi.Name] = vi
		for _, l := range ls {
			if l.versions == 0 {
				l.bigEndian = vi.BigEndian
			} else if l.bigEndian != vi.BigEndian {
				panic("decode: " + l.Name + " is shared by versions of different byte orders")
			}
			l.versions = l.versions.With(vi.id)
			register(vi.id, l)
		}
		Newest = vi.id
		MaxPieceSize = max(MaxPieceSize, vi.PieceSize)
	}
	for _, a := range infos {
		for _, b := range infos {
			if slices.Equal(a.layouts, b.layouts) {
				a.siblings = a.siblings.With(b.id)
			}
		}
	}
}
