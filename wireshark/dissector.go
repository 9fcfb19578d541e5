// Package wireshark writes a Wireshark dissector for the game's packets: a
// Lua plugin (protocol pmnet) generated from decode's packet tables, so that
// Wireshark and tshark decode every packet of every wire version exactly as
// pmdump does.
//
// The generated file has three parts: the tables, written here by walking
// decode's registry (every version with its byte order, piece size, state
// sizes and prior; one ProtoField per field of every layout; every distinct
// layout once, with the versions that have it, its fields, wire types, key
// fields, legacy recoveries, enumerations and length bounds); a bounded
// inflater (inflate.lua); and a fixed runtime (runtime.lua) that decodes a
// payload with a layout, tells the versions of each conversation apart the
// way package session does (from these tables alone: it names no version
// and no offset), reassembles stdf pieces and fills the tree and the Info
// column.
package wireshark

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

//go:embed runtime.lua
var runtime string

// inflateLua measures a dif's inflated size within a bound (deflate_size),
// for the runtime.
//
//go:embed inflate.lua
var inflateLua string

// Protocol is the Wireshark protocol name of the dissector, the prefix of
// every field name.
const Protocol = "pmnet"

// Field is one Wireshark field the dissector registers.
type Field struct {
	Abbrev string // field name in display filters: pmnet.<packet>.<field>
	Kind   string // Wireshark field type: uint8, int8, uint16, int32, int64, uint32, double, string, bytes, none
	Doc    string // the field's description
}

// baseFields are the fields every packet gets (pmnet.era's description,
// which names the versions, is made by Fields).
var baseFields = []Field{
	{Abbrev: "pmnet.type", Kind: "string", Doc: "packet name as sent (4 characters)"},
	{Abbrev: "pmnet.era", Kind: "string"},
	{Abbrev: "pmnet.versions", Kind: "string", Doc: "the versions the conversation's evidence so far allows (pmnet.era is the likeliest of them)"},
	{Abbrev: "pmnet.dir", Kind: "string", Doc: "direction: c2s or s2c"},
	{Abbrev: "pmnet.player", Kind: "uint8", Doc: "player number of the packet or its conversation, when known"},
	{Abbrev: "pmnet.dif.compressed", Kind: "uint32", Doc: "reassembled dif: compressed size of all its pieces"},
	{Abbrev: "pmnet.dif.pieces", Kind: "uint32", Doc: "reassembled dif: number of pieces"},
	{Abbrev: "pmnet.dif.inflated", Kind: "uint32", Doc: "reassembled dif: inflated size (the state's size)"},
}

// eraDoc is the description of pmnet.era: every version's name.
func eraDoc() string {
	return "wire version of the conversation, as pmdump's era: " + strings.Join(decode.VersionNames(), ", ") + ", or unknown"
}

// What package session's inference counts with (unexported there): how
// many packets of each name a conversation checks against every version
// even when they decode in its own (session's looks), and how many
// packets that fit no version make a conversation of no known version,
// once they outnumber those that fit (session's learnFit).
const (
	sessionLooks   = 4
	sessionMisfits = 2
)

// PacketPrefix is the field name prefix of a packet's fields:
// pmnet.<name in lower case>.
func PacketPrefix(name string) string {
	return Protocol + "." + strings.ToLower(name) + "."
}

func kindOf(t decode.Type) string {
	switch t {
	case decode.U8:
		return "uint8"
	case decode.S8:
		return "int8"
	case decode.U16:
		return "uint16"
	case decode.I32:
		return "int32"
	case decode.F64:
		return "double"
	case decode.Str16, decode.StrN:
		return "string"
	case decode.Data, decode.Rest:
		return "bytes"
	}
	return "none"
}

func integer(kind string) bool {
	switch kind {
	case "uint8", "int8", "uint16", "int32", "int64", "uint32":
		return true
	}
	return false
}

// int32Holds tells whether every value of an integer kind fits an int32.
func int32Holds(kind string) bool {
	switch kind {
	case "uint8", "int8", "uint16", "int32":
		return true
	}
	return false
}

// fieldSet collects fields in order of first appearance, merging the
// fields versions give one name (cjon/CJON, sjon/SJON, a byte that became
// an int32): integers of different widths become int32 when every one
// fits an int32, else int64.
type fieldSet struct {
	list  []Field
	index map[string]int
}

func (s *fieldSet) add(f Field) error {
	if s.index == nil {
		s.index = map[string]int{}
	}
	i, ok := s.index[f.Abbrev]
	if !ok {
		s.index[f.Abbrev] = len(s.list)
		s.list = append(s.list, f)
		return nil
	}
	old := &s.list[i]
	if old.Kind == f.Kind {
		return nil
	}
	if integer(old.Kind) && integer(f.Kind) {
		if int32Holds(old.Kind) && int32Holds(f.Kind) {
			old.Kind = "int32"
		} else {
			old.Kind = "int64"
		}
		return nil
	}
	return fmt.Errorf("field %s is %s in one version and %s in another", f.Abbrev, old.Kind, f.Kind)
}

func (s *fieldSet) addField(prefix string, f *decode.Field) error {
	abbrev := prefix + f.Name
	switch {
	case f.Type == decode.Group:
		if err := s.add(Field{Abbrev: abbrev, Kind: "none", Doc: f.Doc}); err != nil {
			return err
		}
		for i := range f.Sub {
			if err := s.addField(abbrev+".", &f.Sub[i]); err != nil {
				return err
			}
		}
		return nil
	case f.Type == decode.Data || f.Type == decode.Rest:
		if err := s.add(Field{Abbrev: abbrev, Kind: "bytes", Doc: f.Doc}); err != nil {
			return err
		}
		return s.add(Field{Abbrev: abbrev + "_len", Kind: "uint32", Doc: "length of " + f.Name})
	case f.Recover != decode.AsIs:
		if err := s.add(Field{Abbrev: abbrev, Kind: "int64", Doc: f.Doc}); err != nil {
			return err
		}
		return s.add(Field{Abbrev: abbrev + "_raw", Kind: kindOf(f.Type), Doc: f.Name + " as on the wire"})
	}
	if err := s.add(Field{Abbrev: abbrev, Kind: kindOf(f.Type), Doc: f.Doc}); err != nil {
		return err
	}
	if showEnum(f) {
		return s.add(Field{Abbrev: abbrev + "_name", Kind: "string", Doc: "the name of " + f.Name + "'s value (" + f.Enum.Name + ")"})
	}
	return nil
}

// showEnum tells whether a field's values are shown with their names
// (decode.Enum.Show): the summary's result=5(transfer_off), the JSON's
// result_name.
func showEnum(f *decode.Field) bool {
	return f.Enum != nil && f.Enum.Show && f.Type.Size() > 0 && f.Type != decode.F64 && !f.Type.Text()
}

// Fields returns every field the dissector registers, in the order of the
// generated file: the base fields, then each distinct layout's fields, in
// decode's order (oldest version first).
func Fields() ([]Field, error) {
	var s fieldSet
	for _, f := range baseFields {
		if f.Abbrev == "pmnet.era" {
			f.Doc = eraDoc()
		}
		if err := s.add(f); err != nil {
			return nil, err
		}
	}
	for _, l := range decode.AllLayouts() {
		prefix := PacketPrefix(l.Name)
		for i := range l.Fields {
			if err := s.addField(prefix, &l.Fields[i]); err != nil {
				return nil, fmt.Errorf("%s %s: %w", l.First(), l.Name, err)
			}
		}
	}
	return s.list, nil
}

// Write writes the Lua dissector. version names the pmdump that generated
// it, in the file's header comment.
func Write(w io.Writer, version string) error {
	fields, err := Fields()
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `-- pmnet: Wireshark dissector for the Purple Martians netgame (every wire version).
-- Generated by pmdump %s from its packet tables ("pmdump dissector");
-- do not edit: regenerate it. For Wireshark 4.0 (Lua 5.2) and newer (Lua 5.4).
-- Install: copy to ~/.local/lib/wireshark/plugins/ (personal Lua plugins).

local PMDUMP_VERSION = %s
local pmnet = Proto("pmnet", "Purple Martians netgame")
local LISTEN_PORT = %d
`, oneLine(version), luaString(version), decode.ListenPort)
	if err := writeVersions(&b); err != nil {
		return err
	}
	lim := reassemble.DefaultLimits
	fmt.Fprintf(&b, "\n-- Reassembly limits (reassemble.DefaultLimits).\nlocal MAX_COMPRESSED = %d\nlocal PENDING_PER_CLIENT = %d\nlocal PENDING_TOTAL = %d\nlocal ABANDON_AFTER = %s -- seconds\n",
		lim.MaxCompressed, lim.PendingPerClient, lim.PendingTotal, strconv.FormatFloat(lim.AbandonAfter.Seconds(), 'g', -1, 64))
	fmt.Fprintf(&b, "-- The largest state pmdump rebuilds (replay.MaxStateSize): no dif is inflated past it.\nlocal MAX_STATE = %d\n", replay.MaxStateSize)
	fmt.Fprintf(&b, "-- The late pieces of a client's newest FINISHED_KEEP finished difs are ignored (reassemble.FinishedKeep).\nlocal FINISHED_KEEP = %d\n", reassemble.FinishedKeep)
	fmt.Fprintf(&b, "\n-- Protocol constants (package decode).\nlocal MAX_PIECES = %d\nlocal SERVER_PLAYER = %d\nlocal MAX_PLAYER = %d\nlocal PLAYER_SERVER_FULL = %d\nlocal MENU_MOVE = %d\n",
		decode.MaxPieces, decode.ServerPlayer, decode.MaxPlayer, decode.PlayerServerFull, decode.MenuMove)
	fmt.Fprintf(&b, "-- How pmdump writes each direction (decode.Dir.Arrow).\nlocal ARROW = {[%s] = %s, [%s] = %s}\n",
		luaString(decode.C2S.String()), luaString(decode.C2S.Arrow()), luaString(decode.S2C.String()), luaString(decode.S2C.Arrow()))
	fmt.Fprintf(&b, "-- The kinds of packet the runtime follows conversations by (decode.Kind).\nlocal KIND_HANDSHAKE, KIND_HANDSHAKE_REPLY = %s, %s\nlocal KIND_JOIN_REQUEST, KIND_JOIN_REPLY = %s, %s\n",
		luaString(decode.KindHandshake.String()), luaString(decode.KindHandshakeReply.String()),
		luaString(decode.KindJoinRequest.String()), luaString(decode.KindJoinReply.String()))
	b.WriteString("-- Packet names that are also words other traffic sends (decode.CommonWord): such a\n-- packet that does not fit, off the game's conversations and port, is not the game's.\nlocal COMMON_WORD = {")
	var words []string
	for _, l := range decode.AllLayouts() {
		if decode.CommonWord([]byte(l.Name)) && !slices.Contains(words, l.Name) {
			words = append(words, l.Name)
		}
	}
	for i, w := range words {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "[%s] = true", luaString(w))
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "\n-- Version inference (package session): the packets of each name a conversation\n-- checks against every version even when they decode in its own, and the packets\n-- fitting no version that make it of no known version once they outnumber those that fit.\nlocal LOOKS = %d\nlocal MIN_MISFITS = %d\n", sessionLooks, sessionMisfits)
	b.WriteString("\n-- What each kind of decode error ends with (decode.ErrShort and the others).\n")
	for _, e := range []struct {
		name string
		err  error
	}{{"ERR_SHORT", decode.ErrShort}, {"ERR_LONG", decode.ErrLong}, {"ERR_OVERRUN", decode.ErrOverrun}, {"ERR_INVALID", decode.ErrInvalid}, {"ERR_NO_VERSION", decode.ErrNoVersion}} {
		fmt.Fprintf(&b, "local %s = %s\n", e.name, luaString(e.err.Error()))
	}
	b.WriteString("\n-- Fields: pmnet.<packet name in lower case>.<field>, as pmdump's JSON names them.\nlocal PF = {}\nlocal PF_LIST = {}\nlocal INT64 = {} -- fields whose values are given as Int64\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "PF[%s] = %s\n", luaString(f.Abbrev), protoField(f))
		fmt.Fprintf(&b, "PF_LIST[#PF_LIST + 1] = PF[%s]\n", luaString(f.Abbrev))
		if f.Kind == "int64" {
			fmt.Fprintf(&b, "INT64[PF[%s]] = true\n", luaString(f.Abbrev))
		}
	}
	b.WriteString("\n-- Layouts: each distinct layout once, named by the first version that has it\n-- (LAYOUTS[first][name]), with the versions that have it and its fields in wire\n-- order; LAYOUT_LIST holds them in decode's order (Layout.ID + 1).\nlocal LAYOUTS = {}\nlocal LAYOUT_LIST = {}\n")
	for _, v := range decode.Versions() {
		if slices.ContainsFunc(decode.AllLayouts(), func(l *decode.Layout) bool { return l.First() == v }) {
			fmt.Fprintf(&b, "LAYOUTS[%s] = {}\n", luaString(v.String()))
		}
	}
	for _, l := range decode.AllLayouts() {
		if err := writeLayout(&b, l); err != nil {
			return err
		}
	}
	b.WriteString("\n")
	b.WriteString(inflateLua)
	b.WriteString(runtime)
	if err := writeFast(&b); err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// writeVersions writes the registry's versions: what the runtime's
// inference needs of each. Which layouts a version has is said by the
// layouts (their versions).
func writeVersions(b *strings.Builder) error {
	b.WriteString("\n-- Wire versions (decode.Versions), oldest first, by their decode.Version number:\n-- name, byte order, piece size, state sizes, prior (the evidence's ties go to the\n-- highest), whether the server sends everything from its listening socket.\nlocal VERSIONS = {}\n")
	for i, v := range decode.Versions() {
		if int(v) != i+1 {
			return fmt.Errorf("version %s is number %d, not %d: the runtime numbers them 1..n", v, v, i+1)
		}
		vi := v.Info()
		sizes := make([]string, len(vi.StateSizes))
		for j, n := range vi.StateSizes {
			sizes[j] = strconv.Itoa(n)
		}
		fmt.Fprintf(b, "VERSIONS[%d] = {name = %s, be = %t, piece_size = %d, state_sizes = {%s}, prior = %d, shared_socket = %t}\n",
			v, luaString(v.String()), vi.BigEndian, vi.PieceSize, strings.Join(sizes, ", "), vi.Prior, vi.SharedServerSocket)
	}
	return nil
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c) // UTF-8 passes through
		}
	}
	b.WriteByte('"')
	return b.String()
}

func protoField(f Field) string {
	label := f.Abbrev[strings.LastIndexByte(f.Abbrev, '.')+1:]
	name, doc := luaString(f.Abbrev), luaString(f.Doc)
	switch f.Kind {
	case "string", "bytes":
		return fmt.Sprintf("ProtoField.%s(%s, %s, nil, %s)", f.Kind, name, luaString(label), doc)
	case "double":
		return fmt.Sprintf("ProtoField.double(%s, %s, %s)", name, luaString(label), doc)
	case "none":
		return fmt.Sprintf("ProtoField.none(%s, %s, %s)", name, luaString(label), doc)
	}
	return fmt.Sprintf("ProtoField.%s(%s, %s, base.DEC, nil, nil, %s)", f.Kind, name, luaString(label), doc)
}

// layoutRef is the Lua expression of a layout's table.
func layoutRef(l *decode.Layout) string {
	return fmt.Sprintf("LAYOUTS[%s][%s]", luaString(l.First().String()), luaString(l.Name))
}

func writeLayout(b *strings.Builder, l *decode.Layout) error {
	prefix := PacketPrefix(l.Name)
	var vs []string
	for _, v := range l.Versions().Versions() {
		vs = append(vs, luaString(v.String()))
	}
	fmt.Fprintf(b, "%s = {name = %s, first = %s, dir = %s, doc = %s, min = %d, max = %d",
		layoutRef(l), luaString(l.Name), luaString(l.First().String()),
		luaString(l.Dir.String()), luaString(l.Doc), l.MinLen(), l.MaxLen())
	if seq, count, start, ok := l.PieceFields(); ok {
		size, data := pieceData(l)
		if data < 0 {
			return fmt.Errorf("%s %s: pieces without a size field and the data it measures", l.First(), l.Name)
		}
		fmt.Fprintf(b, ", piece = {seq = %d, count = %d, start = %d, size = %d, data = %d, at = %d}", seq+1, count+1, start+1, size+1, data+1, constOffset(l, data))
	}
	if src := l.FieldByRole(decode.RoleDifBase); src >= 0 {
		dst := l.FieldByRole(decode.RoleFrame)
		if dst < 0 {
			return fmt.Errorf("%s %s: a dif base without the frame it produces", l.First(), l.Name)
		}
		fmt.Fprintf(b, ", dif = {src = %d, dst = %d, slsn = %d}", src+1, dst+1, l.FieldByRole(decode.RoleLevelSeq)+1)
	}
	fmt.Fprintf(b, ",\n\tid = %d, versions = {%s}, be = %t, kind = %s, frame = %d, player = %d, fields = {\n",
		l.ID+1, strings.Join(vs, ", "), l.BigEndian(), luaString(l.Kind.String()),
		l.FieldByRole(decode.RoleFrame)+1, l.FieldByRole(decode.RolePlayer)+1)
	for i := range l.Fields {
		if err := writeField(b, l, prefix, &l.Fields[i], "  "); err != nil {
			return err
		}
	}
	b.WriteString("}}\n")
	fmt.Fprintf(b, "LAYOUT_LIST[%d] = %s\n", l.ID+1, layoutRef(l))
	return nil
}

// pieceData returns the indexes of a layout's RoleSize field and of the
// Data field it measures, or -1.
func pieceData(l *decode.Layout) (size, data int) {
	size, data = -1, -1
	for i, f := range l.Fields {
		if f.Role == decode.RoleSize {
			size = i
		}
	}
	for i, f := range l.Fields {
		if size >= 0 && f.Type == decode.Data && f.SizeOf == l.Fields[size].Name {
			data = i
		}
	}
	return size, data
}

func writeField(b *strings.Builder, l *decode.Layout, prefix string, f *decode.Field, indent string) error {
	abbrev := prefix + f.Name
	fmt.Fprintf(b, "%s{name = %s, type = %s, size = %d, pf = PF[%s]", indent, luaString(f.Name),
		luaString(f.Type.String()), f.Type.Size(), luaString(abbrev))
	if f.Key {
		b.WriteString(", key = true")
	}
	if f.Optional {
		b.WriteString(", optional = true")
	}
	switch f.Recover {
	case decode.AsIs:
	case decode.Negative:
		fmt.Fprintf(b, ", recover = \"negative\", pf_raw = PF[%s]", luaString(abbrev+"_raw"))
	case decode.Minus1000:
		fmt.Fprintf(b, ", recover = \"minus1000\", pf_raw = PF[%s]", luaString(abbrev+"_raw"))
	default:
		return fmt.Errorf("%s %s.%s: a recovery the dissector does not know", l.First(), l.Name, f.Name)
	}
	if f.Bits != nil {
		b.WriteString(", bits = {")
		for i, n := range f.Bits {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(luaString(n))
		}
		b.WriteString("}")
	}
	if showEnum(f) {
		if f.Recover != decode.AsIs {
			return fmt.Errorf("%s %s.%s: a shown enumeration of a recovered value", l.First(), l.Name, f.Name)
		}
		b.WriteString(", enum = {")
		for i, ev := range f.Enum.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "[%d] = %s", ev.Value, luaString(ev.Name))
		}
		fmt.Fprintf(b, "}, pf_name = PF[%s]", luaString(abbrev+"_name"))
	}
	if ref := f.SizeOf + f.CountOf; ref != "" {
		j := l.Field(ref)
		if j < 0 {
			return fmt.Errorf("%s %s.%s refers to unknown field %s", l.First(), l.Name, f.Name, ref)
		}
		fmt.Fprintf(b, ", ref = %d", j+1)
	}
	switch f.Type {
	case decode.Data, decode.Rest:
		fmt.Fprintf(b, ", pf_len = PF[%s]", luaString(abbrev+"_len"))
	case decode.Group:
		b.WriteString(", sub = {\n")
		for i := range f.Sub {
			s := &f.Sub[i]
			if s.Type.Size() == 0 || s.Recover != decode.AsIs || s.Sub != nil || showEnum(s) {
				return fmt.Errorf("%s %s.%s.%s: only fixed-size plain fields are supported in a group", l.First(), l.Name, f.Name, s.Name)
			}
			if err := writeField(b, l, abbrev+".", s, indent+"  "); err != nil {
				return err
			}
		}
		b.WriteString(indent + "}")
	case decode.U8, decode.S8, decode.U16, decode.I32, decode.F64, decode.Str16, decode.StrN:
	default:
		return fmt.Errorf("%s %s.%s: a field type (%s) the dissector does not know", l.First(), l.Name, f.Name, f.Type)
	}
	b.WriteString("},\n")
	return nil
}
