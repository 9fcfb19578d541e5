package decode

import "fmt"

// controlBits are the bits of a player's control byte (cdat, sdat type 5).
var controlBits = []string{"left", "right", "up", "down", "jump", "fire", "menu"}

func hostname() Field {
	return Field{Name: "hostname", Type: Str16, Key: true, Doc: "the first 15 bytes of the client's host name, NUL-terminated"}
}

// pieceCheck validates the piece header of a layout with piece roles
// (Layout.PieceFields).
func pieceCheck(p *Packet) error {
	l := p.Layout
	seq, count := p.Values[l.seq].Int, p.Values[l.count].Int
	if count == 0 {
		return fmt.Errorf("piece count is 0")
	}
	if seq >= count {
		return fmt.Errorf("piece seq %d is not below piece count %d", seq, count)
	}
	if start := p.Values[l.start].Int; start < 0 {
		return fmt.Errorf("start byte %d is negative", start)
	}
	return nil
}

// The legacy era (about 2018 to December 2022): big-endian integers.
var legacyLayouts = []*Layout{
	{Name: "1234", Dir: C2S, Doc: "channel handshake: the client's first packet, sent to the server's listening port"},
	{Name: "5678", Dir: S2C, Doc: "channel handshake reply, from the server's new per-client port", Fields: []Field{
		{Name: "nul", Type: U8, Doc: "trailing NUL (the game sends strlen+1 bytes)"},
	}},
	{Name: "JUNK", Dir: S2C, Doc: "sent at server start to nobody"},
	{Name: "CJON", Dir: C2S, Doc: "client join request", Fields: []Field{
		{Name: "color", Type: U8, Key: true, Doc: "requested player color"},
		hostname(),
	}},
	{Name: "SJON", Dir: S2C, Doc: "server join reply", Fields: []Field{
		{Name: "level", Type: U16, Key: true, Doc: "level being played"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame at join"},
		{Name: "entry_pos", Type: I32, Doc: "server game-move entry position"},
		{Name: "fps", Type: U8, Doc: "frame speed"},
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number given to the client (99: server full)"},
		{Name: "color", Type: U8, Key: true, Doc: "player color given"},
		{Name: "dm_bullets", Type: U8, Doc: "deathmatch player bullets on"},
		{Name: "dm_damage", Type: U16, Recover: Minus1000, Doc: "deathmatch bullet damage, sent as damage + 1000"},
		{Name: "suicide_bullets", Type: U8, Doc: "suicide player bullets on"},
	}},
	{Name: "cdat", Dir: C2S, Doc: "client control change", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame + control lead frames"},
		{Name: "move", Type: U8, Key: true, Bits: controlBits, Doc: "control bits (127: menu/ESC)"},
	}},
	{Name: "sdat", Dir: S2C, Doc: "server game-move data", Fields: []Field{
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "start_entry", Type: I32, Key: true, Doc: "game-move entry the first entry is"},
		{Name: "n", Type: U8, Key: true, Role: RoleCount, Doc: "number of entries (0: sync only)"},
		{Name: "entries", Type: Group, CountOf: "n", Doc: "game moves", Sub: []Field{
			{Name: "frame", Type: I32, Doc: "frame of the move"},
			{Name: "type", Type: U8, Doc: "1 player state, 5 control change"},
			{Name: "data1", Type: U8, Doc: "player"},
			{Name: "data2", Type: U8, Doc: "control bits (type 5) or state (type 1: 1..15 active with color, 64 quit, 70/71 dropped)"},
		}},
	}},
	{Name: "sdak", Dir: C2S, Doc: "game-move data acknowledgement", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame"},
		{Name: "entry_pos", Type: I32, Key: true, Doc: "next game-move entry position"},
		{Name: "stdf_late", Type: I32, Doc: "late stdf count"},
		{Name: "frames_skipped", Type: I32, Doc: "frames skipped"},
		{Name: "fps_chase", Type: I32, Optional: true, Doc: "client catch-up frame rate (absent in the first, 21-byte sdak)"},
	}},
	{Name: "serr", Dir: S2C, Doc: "server error: a cdat arrived late", Fields: []Field{
		{Name: "err_type", Type: U8, Key: true, Doc: "error type (1: late cdat)"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "c_sync", Type: I32, Key: true, Recover: Negative, Doc: "how many frames late (always negative, not sent in two's complement)"},
		{Name: "late_total", Type: I32, Key: true, Doc: "total late cdats of this client"},
	}},
	{Name: "stdf", Dir: S2C, Doc: "state dif piece", Fields: []Field{
		{Name: "src", Type: I32, Key: true, Role: RoleDifBase, Doc: "base frame (0: all-zero base)"},
		{Name: "dst", Type: I32, Key: true, Role: RoleFrame, Doc: "frame whose state the dif produces"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index, 0-based"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte of the piece in the compressed dif"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed dif"},
	}},
	{Name: "stak", Dir: C2S, Doc: "state dif acknowledgement", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "corr", Type: U8, Key: true, Doc: "1: the client's own simulation differed and was overwritten"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "frame acknowledged"},
	}},
}

// The modern era (2023 onwards): little-endian integers and doubles.
var modernLayouts = []*Layout{
	{Name: "1234", Dir: C2S, Doc: "channel handshake: the client's first packet, sent to the server's listening port"},
	{Name: "5678", Dir: S2C, Doc: "channel handshake reply, from the server's new per-client port"},
	{Name: "cjon", Dir: C2S, Doc: "client join request", Fields: []Field{
		{Name: "color", Type: U8, Key: true, Doc: "requested player color (1..15)"},
		hostname(),
	}},
	{Name: "sjon", Dir: S2C, Doc: "server join reply", Fields: []Field{
		{Name: "level", Type: I32, Key: true, Doc: "level being played"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame at join"},
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number given to the client (99: server full)"},
		{Name: "color", Type: U8, Key: true, Doc: "player color given"},
		{Name: "slsn", Type: U8, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number"},
	}},
	{Name: "cjrc", Dir: C2S, Doc: "remote-control join request"},
	{Name: "sjrc", Dir: S2C, Doc: "remote-control join reply", Fields: []Field{
		{Name: "value", Type: F64, Key: true, Doc: "always 0"},
	}},
	{Name: "cdat", Dir: C2S, Doc: "client control change", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame of the change"},
		{Name: "move", Type: U8, Key: true, Bits: controlBits, Doc: "control bits"},
	}},
	{Name: "stdf", Dir: S2C, Doc: "state dif piece", Fields: []Field{
		{Name: "src", Type: I32, Key: true, Role: RoleDifBase, Doc: "base frame (0: all-zero base)"},
		{Name: "dst", Type: I32, Key: true, Role: RoleFrame, Doc: "frame whose state the dif produces"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index, 0-based"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "slsn", Type: U8, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte of the piece in the compressed dif"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed dif"},
	}},
	{Name: "stak", Dir: C2S, Doc: "state dif acknowledgement and client telemetry", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "ack_frame", Type: I32, Key: true, Role: RoleFrame, Doc: "frame acknowledged (after a missing base: the newest frame held, or 0)"},
		{Name: "client_frame", Type: I32, Key: true, Doc: "client's current frame"},
		{Name: "chase_fps", Type: F64, Doc: "client chase frame rate"},
		{Name: "dsync", Type: F64, Key: true, Doc: "client's average dsync (s)"},
		{Name: "rewind", Type: S8, Doc: "client frame - dst when applied (low 8 bits only)"},
		{Name: "local_correction", Type: F64, Doc: "local player correction (px)"},
		{Name: "remote_correction", Type: F64, Doc: "largest remote player correction (px)"},
		{Name: "cpu", Type: F64, Doc: "client cpu load (% of a frame)"},
	}},
	{Name: "ping", Dir: C2S, Doc: "round-trip probe", Fields: []Field{
		{Name: "t0", Type: F64, Key: true, Doc: "client time (s)"},
	}},
	{Name: "pong", Dir: S2C, Doc: "round-trip probe reply", Fields: []Field{
		{Name: "t0", Type: F64, Key: true, Doc: "client time echoed (s)"},
		{Name: "t1", Type: F64, Key: true, Doc: "server time (s)"},
	}},
	{Name: "pang", Dir: C2S, Doc: "round-trip probe echo", Fields: []Field{
		{Name: "t1", Type: F64, Key: true, Doc: "server time echoed (s)"},
	}},
	{Name: "rctl", Dir: C2S, Doc: "remote control command", Fields: []Field{
		{Name: "command", Type: I32, Key: true, Doc: "0 keep-alive, 1 force client offset, 2 client offset adj, 3 zlib level adj, 4 extra packet count, 5 extra packet size, 6 pvp damage, 10 pvp toggle, 11 pvs toggle, 12 fake-key toggle, 20 reload"},
		{Name: "value", Type: F64, Key: true, Doc: "argument"},
	}},
	{Name: "snfo", Dir: S2C, Doc: "server info piece for remote control", Fields: []Field{
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the compressed server info"},
	}},
	{Name: "crfl", Dir: C2S, Doc: "request: save and send me the game-moves file"},
	{Name: "sfil", Dir: S2C, Doc: "file piece", Fields: []Field{
		{Name: "id", Type: I32, Key: true, Doc: "transfer id"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "file_size", Type: I32, Key: true, Doc: "uncompressed file size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed file"},
	}},
	{Name: "sfak", Dir: C2S, Doc: "file acknowledgement", Fields: []Field{
		{Name: "id", Type: I32, Key: true, Doc: "transfer id acknowledged"},
	}},
	{Name: "extr", Dir: S2C, Doc: "bandwidth test padding", Fields: []Field{
		{Name: "padding", Type: Rest, Doc: "zero bytes"},
	}},
}

func init() {
	for _, l := range legacyLayouts {
		l.Era = Legacy
	}
	for _, l := range modernLayouts {
		l.Era = Modern
	}
	register(legacyLayouts...)
	register(modernLayouts...)
}
