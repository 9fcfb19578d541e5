// Package wireshark writes a Wireshark dissector for the game's packets: a
// Lua plugin (protocol pmnet) generated from decode's packet tables, so that
// Wireshark and tshark decode every packet of both eras exactly as pmdump
// does.
//
// The generated file has three parts: the tables (one ProtoField per field
// of every layout, and every layout with its fields, wire types, key
// fields, legacy recoveries and length bounds), written here by walking
// decode's layouts; a bounded inflater (inflate.lua); and a fixed runtime
// (runtime.lua) that decodes a payload with a layout, follows
// conversations and their era the way package session does, reassembles
// stdf pieces and fills the tree and the Info column.
package wireshark

import (
	_ "embed"
	"fmt"
	"io"
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

// base fields every packet gets.
var baseFields = []Field{
	{Abbrev: "pmnet.type", Kind: "string", Doc: "packet name as sent (4 characters)"},
	{Abbrev: "pmnet.era", Kind: "string", Doc: "protocol era of the conversation: legacy, modern or unknown"},
	{Abbrev: "pmnet.dir", Kind: "string", Doc: "direction: c2s or s2c"},
	{Abbrev: "pmnet.player", Kind: "uint8", Doc: "player number of the packet or its conversation, when known"},
	{Abbrev: "pmnet.dif.compressed", Kind: "uint32", Doc: "reassembled dif: compressed size of all its pieces"},
	{Abbrev: "pmnet.dif.pieces", Kind: "uint32", Doc: "reassembled dif: number of pieces"},
	{Abbrev: "pmnet.dif.inflated", Kind: "uint32", Doc: "reassembled dif: inflated size (the state's size)"},
}

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

// fieldSet collects fields in order of first appearance, merging the
// fields two eras give one name (cjon/CJON, sjon/SJON): integers of
// different widths become int64.
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
		old.Kind = "int64"
		return nil
	}
	return fmt.Errorf("field %s is %s in one era and %s in another", f.Abbrev, old.Kind, f.Kind)
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
	return s.add(Field{Abbrev: abbrev, Kind: kindOf(f.Type), Doc: f.Doc})
}

// Fields returns every field the dissector registers, in the order of the
// generated file: the base fields, then each layout's fields era by era.
func Fields() ([]Field, error) {
	var s fieldSet
	for _, f := range baseFields {
		if err := s.add(f); err != nil {
			return nil, err
		}
	}
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			prefix := PacketPrefix(l.Name)
			for i := range l.Fields {
				if err := s.addField(prefix, &l.Fields[i]); err != nil {
					return nil, fmt.Errorf("%s %s: %w", era, l.Name, err)
				}
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
	fmt.Fprintf(&b, `-- pmnet: Wireshark dissector for the Purple Martians netgame (both eras).
-- Generated by pmdump %s from its packet tables ("pmdump dissector");
-- do not edit: regenerate it. For Wireshark 4.0 (Lua 5.2) and newer (Lua 5.4).
-- Install: copy to ~/.local/lib/wireshark/plugins/ (personal Lua plugins).

local PMDUMP_VERSION = %s
local pmnet = Proto("pmnet", "Purple Martians netgame")
local LISTEN_PORT = %d
local ERAS = {`, oneLine(version), luaString(version), decode.ListenPort)
	for i, e := range decode.Versions() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(luaString(e.String()))
	}
	lim := reassemble.DefaultLimits
	fmt.Fprintf(&b, "}\n\n-- Reassembly limits (reassemble.DefaultLimits).\nlocal MAX_COMPRESSED = %d\nlocal PENDING_PER_CLIENT = %d\nlocal PENDING_TOTAL = %d\nlocal ABANDON_AFTER = %s -- seconds\n",
		lim.MaxCompressed, lim.PendingPerClient, lim.PendingTotal, strconv.FormatFloat(lim.AbandonAfter.Seconds(), 'g', -1, 64))
	fmt.Fprintf(&b, "-- The largest state pmdump rebuilds (replay.MaxStateSize): no dif is inflated past it.\nlocal MAX_STATE = %d\n", replay.MaxStateSize)
	fmt.Fprintf(&b, "-- The late pieces of a client's newest FINISHED_KEEP finished difs are ignored (reassemble.FinishedKeep).\nlocal FINISHED_KEEP = %d\n", reassemble.FinishedKeep)
	fmt.Fprintf(&b, "\n-- Protocol constants (package decode).\nlocal MAX_PIECES = %d\nlocal SERVER_PLAYER = %d\nlocal MAX_PLAYER = %d\nlocal PLAYER_SERVER_FULL = %d\nlocal MENU_MOVE = %d\n",
		decode.MaxPieces, decode.ServerPlayer, decode.MaxPlayer, decode.PlayerServerFull, decode.MenuMove)
	fmt.Fprintf(&b, "-- How pmdump writes each direction (decode.Dir.Arrow).\nlocal ARROW = {[%s] = %s, [%s] = %s}\n",
		luaString(decode.C2S.String()), luaString(decode.C2S.Arrow()), luaString(decode.S2C.String()), luaString(decode.S2C.Arrow()))
	b.WriteString("\n-- What each kind of decode error ends with (decode.ErrShort and the others).\n")
	for _, e := range []struct {
		name string
		err  error
	}{{"ERR_SHORT", decode.ErrShort}, {"ERR_LONG", decode.ErrLong}, {"ERR_OVERRUN", decode.ErrOverrun}, {"ERR_INVALID", decode.ErrInvalid}, {"ERR_UNKNOWN", decode.ErrUnknown}} {
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
	b.WriteString("\n-- Layouts, era by era: fields in wire order.\nlocal LAYOUTS = {}\nlocal DIR_OF = {}\n")
	for _, era := range decode.Versions() {
		fmt.Fprintf(&b, "LAYOUTS[%s] = {}\n", luaString(era.String()))
		for _, l := range era.Layouts() {
			if err := writeLayout(&b, l); err != nil {
				return err
			}
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

func writeLayout(b *strings.Builder, l *decode.Layout) error {
	prefix := PacketPrefix(l.Name)
	fmt.Fprintf(b, "LAYOUTS[%s][%s] = {name = %s, era = %s, dir = %s, doc = %s, min = %d, max = %d",
		luaString(l.First().String()), luaString(l.Name), luaString(l.Name), luaString(l.First().String()),
		luaString(l.Dir.String()), luaString(l.Doc), l.MinLen(), l.MaxLen())
	if seq, count, start, ok := l.PieceFields(); ok {
		size, data := pieceData(l)
		if data < 0 {
			return fmt.Errorf("%s %s: pieces without a size field and the data it measures", l.First(), l.Name)
		}
		fmt.Fprintf(b, ", piece = {seq = %d, count = %d, start = %d, size = %d, data = %d, at = %d}", seq+1, count+1, start+1, size+1, data+1, constOffset(l, data))
	}
	if src := roleField(l, decode.RoleDifBase); src >= 0 {
		dst := roleField(l, decode.RoleFrame)
		if dst < 0 {
			return fmt.Errorf("%s %s: a dif base without the frame it produces", l.First(), l.Name)
		}
		fmt.Fprintf(b, ", dif = {src = %d, dst = %d, slsn = %d}", src+1, dst+1, roleField(l, decode.RoleLevelSeq)+1)
	}
	b.WriteString(", fields = {\n")
	for i := range l.Fields {
		if err := writeField(b, l, prefix, &l.Fields[i], "  "); err != nil {
			return err
		}
	}
	b.WriteString("}}\n")
	fmt.Fprintf(b, "DIR_OF[%s] = %s\n", luaString(l.Name), luaString(l.Dir.String()))
	return nil
}

// roleField returns the index of a layout's first field of the role, or -1.
func roleField(l *decode.Layout, role decode.Role) int {
	for i, f := range l.Fields {
		if f.Role == role {
			return i
		}
	}
	return -1
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

var typeNames = map[decode.Type]string{}

func init() {
	for t := decode.U8; t <= decode.Group; t++ {
		typeNames[t] = t.String()
	}
}

func writeField(b *strings.Builder, l *decode.Layout, prefix string, f *decode.Field, indent string) error {
	abbrev := prefix + f.Name
	fmt.Fprintf(b, "%s{name = %s, type = %s, size = %d, pf = PF[%s]", indent, luaString(f.Name),
		luaString(typeNames[f.Type]), f.Type.Size(), luaString(abbrev))
	if f.Key {
		b.WriteString(", key = true")
	}
	if f.Optional {
		b.WriteString(", optional = true")
	}
	if f.Role == decode.RolePlayer {
		b.WriteString(", role = \"player\"")
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
			if s.Type.Size() == 0 || s.Recover != decode.AsIs || s.Sub != nil {
				return fmt.Errorf("%s %s.%s.%s: only fixed-size plain fields are supported in a group", l.First(), l.Name, f.Name, s.Name)
			}
			if err := writeField(b, l, abbrev+".", s, indent+"  "); err != nil {
				return err
			}
		}
		b.WriteString(indent + "}")
	}
	b.WriteString("},\n")
	return nil
}
