package decode

// This file is the description of the game's wire: every packet layout of
// every version, once, and the versions themselves. A version that keeps a
// packet unchanged shares the earlier version's Layout (from, add, drop).

// controlBits are the bits of a player's control byte (cdat, sdat type 5).
var controlBits = []string{"left", "right", "up", "down", "jump", "fire", "menu"}

// The game's enumerations.
var (
	// JoinPlayers names the player numbers of a join reply that are not a
	// player.
	JoinPlayers = &Enum{Name: "join result", Values: []EnumValue{
		{PlayerServerFull, "server_full", "the game is full: the client may not join"},
	}}
	// MoveTypes are the types of a legacy game move (sdat entry).
	MoveTypes = &Enum{Name: "game-move type", Values: []EnumValue{
		{1, "player_state", "a player's state changes (data1 player, data2 the state: PlayerStates)"},
		{5, "control_change", "a player's controls change (data1 player, data2 the control bits)"},
	}}
	// PlayerStates are the states of a player-state game move that end a
	// player's game (1..15 make the player active with that color).
	PlayerStates = &Enum{Name: "player state", Values: []EnumValue{
		{64, "quit", "the player quit"},
		{70, "dropped_sync", "the server dropped the player: its sync fell more than 100 frames behind"},
		{71, "dropped_silent", "the server dropped the player: no acknowledgement from it for the drop rule's frames"},
	}}
	// LateInputs are the types of a legacy server error (serr).
	LateInputs = &Enum{Name: "server error", Values: []EnumValue{
		{1, "late_cdat", "an input (cdat) reached the server after its frame"},
	}}
	// SaveResults are the answers of srrf to a file request (crfl).
	SaveResults = &Enum{Name: "save result", Show: true, Values: []EnumValue{
		{0, "saved", "the server saved its game moves and sends the file"},
		{1, "no_moves", "there were no game moves to save"},
		{2, "overworld", "nothing is saved on the overworld"},
		{3, "demo", "the server plays a demo"},
		{4, "client", "the one asked is a client, not the server"},
		{5, "transfer_off", "the server does not send files (server_send_files_to_clients=0)"},
	}}
	// RemoteCommands are the commands of a remote control (rctl).
	RemoteCommands = &Enum{Name: "remote-control command", Show: true, Values: []EnumValue{
		{0, "keep_alive", "keeps the remote control connected"},
		{1, "force_client_offset", "sets every client's chase offset"},
		{2, "client_offset_adj", "adjusts the clients' chase offset"},
		{3, "zlib_level_adj", "adjusts the dif compression level"},
		{4, "extra_packet_count", "sets how many extr packets the server sends"},
		{5, "extra_packet_size", "sets their size"},
		{6, "pvp_damage", "sets player-vs-player shot damage"},
		{10, "pvp_toggle", "player-vs-player shots on or off"},
		{11, "pvs_toggle", "player-vs-self shots on or off"},
		{12, "fakekey_toggle", "random input on or off"},
		{20, "reload", "reloads the level"},
	}}
	// LogTypes are the game's log categories a client log line (clog)
	// names.
	LogTypes = &Enum{Name: "log type", Show: true, Values: []EnumValue{
		{9, "error", "an error"},
		{10, "net", "a netgame event (level start, next level, lost connection)"},
		{22, "ending_stats", "statistics at the end of a game"},
		{23, "bandwidth", "bandwidth figures"},
		{27, "stdf", "a dif completed"},
		{28, "stdf_pieces", "a dif piece received"},
		{30, "dif_apply", "a dif applied or refused"},
		{33, "stak", "an acknowledgement sent"},
		{35, "cdat", "an input sent"},
		{36, "ping", "a round trip measured"},
		{37, "timer_adjust", "the client's clock adjusted"},
		{39, "file_transfer", "a file transfer"},
		{66, "net_csv", "the netgame CSV log"},
	}}
)

func hostname() Field {
	return Field{Name: "hostname", Type: Str16, Key: true, Doc: "the first 15 bytes of the client's host name, NUL-terminated"}
}

// The legacy era (about 2018 to December 2022): big-endian integers.
var legacyLayouts = []*Layout{
	{Name: "1234", Kind: KindHandshake, Dir: C2S, Doc: "channel handshake: the client's first packet, sent to the server's listening port"},
	{Name: "5678", Kind: KindHandshakeReply, Dir: S2C, Doc: "channel handshake reply, from the server's new per-client port", Fields: []Field{
		{Name: "nul", Type: U8, Doc: "trailing NUL (the game sends strlen+1 bytes)"},
	}},
	{Name: "JUNK", Kind: KindPadding, Dir: S2C, Doc: "sent at server start to nobody"},
	{Name: "CJON", Kind: KindJoinRequest, Dir: C2S, Doc: "client join request", Fields: []Field{
		{Name: "color", Type: U8, Key: true, Doc: "requested player color"},
		hostname(),
	}},
	{Name: "SJON", Kind: KindJoinReply, Dir: S2C, Doc: "server join reply", Fields: []Field{
		{Name: "level", Type: U16, Key: true, Role: RoleLevel, Doc: "level being played"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame at join"},
		{Name: "entry_pos", Type: I32, Doc: "server game-move entry position"},
		{Name: "fps", Type: U8, Doc: "frame speed"},
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Enum: JoinPlayers, Doc: "player number given to the client (99: server full)"},
		{Name: "color", Type: U8, Key: true, Doc: "player color given"},
		{Name: "dm_bullets", Type: U8, Doc: "deathmatch player bullets on"},
		{Name: "dm_damage", Type: U16, Recover: Minus1000, Doc: "deathmatch bullet damage, sent as damage + 1000"},
		{Name: "suicide_bullets", Type: U8, Doc: "suicide player bullets on"},
	}},
	{Name: "cdat", Kind: KindInput, Dir: C2S, Doc: "client control change", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame + control lead frames"},
		{Name: "move", Type: U8, Key: true, Bits: controlBits, Doc: "control bits (127: menu/ESC)"},
	}},
	{Name: "sdat", Kind: KindGameMoves, Dir: S2C, Doc: "server game-move data", Fields: []Field{
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "start_entry", Type: I32, Key: true, Doc: "game-move entry the first entry is"},
		{Name: "n", Type: U8, Key: true, Role: RoleCount, Doc: "number of entries (0: sync only)"},
		{Name: "entries", Type: Group, CountOf: "n", Doc: "game moves", Sub: []Field{
			{Name: "frame", Type: I32, Doc: "frame of the move"},
			{Name: "type", Type: U8, Enum: MoveTypes, Doc: "1 player state, 5 control change"},
			{Name: "data1", Type: U8, Doc: "player"},
			{Name: "data2", Type: U8, Doc: "control bits (type 5) or state (type 1: 1..15 active with color, 64 quit, 70/71 dropped)"},
		}},
	}},
	{Name: "sdak", Kind: KindGameMovesAck, Dir: C2S, Doc: "game-move data acknowledgement", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame"},
		{Name: "entry_pos", Type: I32, Key: true, Doc: "next game-move entry position"},
		{Name: "stdf_late", Type: I32, Doc: "late stdf count"},
		{Name: "frames_skipped", Type: I32, Doc: "frames skipped"},
		{Name: "fps_chase", Type: I32, Optional: true, Doc: "client catch-up frame rate (absent in the first, 21-byte sdak)"},
	}},
	{Name: "serr", Kind: KindLateInput, Dir: S2C, Doc: "server error: a cdat arrived late", Fields: []Field{
		{Name: "err_type", Type: U8, Key: true, Enum: LateInputs, Doc: "error type (1: late cdat)"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "c_sync", Type: I32, Key: true, Recover: Negative, Doc: "how many frames late (always negative, not sent in two's complement)"},
		{Name: "late_total", Type: I32, Key: true, Doc: "total late cdats of this client"},
	}},
	{Name: "stdf", Kind: KindDifPiece, Dir: S2C, Doc: "state dif piece", Fields: []Field{
		{Name: "src", Type: I32, Key: true, Role: RoleDifBase, Doc: "base frame (0: all-zero base)"},
		{Name: "dst", Type: I32, Key: true, Role: RoleFrame, Doc: "frame whose state the dif produces"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index, 0-based"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte of the piece in the compressed dif"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed dif"},
	}},
	{Name: "stak", Kind: KindDifAck, Dir: C2S, Doc: "state dif acknowledgement", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "corr", Type: U8, Key: true, Doc: "1: the client's own simulation differed and was overwritten"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "frame acknowledged"},
	}},
}

// The modern era (Feb 2024): little-endian integers and doubles. The
// layouts later versions keep are named, so they can share them.
var (
	handshake      = &Layout{Name: "1234", Kind: KindHandshake, Dir: C2S, Doc: "channel handshake: the client's first packet, sent to the server's listening port"}
	handshakeReply = &Layout{Name: "5678", Kind: KindHandshakeReply, Dir: S2C, Doc: "channel handshake reply, from the server's new per-client port"}
	cjonU8         = &Layout{Name: "cjon", Kind: KindJoinRequest, Dir: C2S, Doc: "client join request", Fields: []Field{
		{Name: "color", Type: U8, Key: true, Doc: "requested player color (1..15)"},
		hostname(),
	}}
	sjonU8 = &Layout{Name: "sjon", Kind: KindJoinReply, Dir: S2C, Doc: "server join reply", Fields: []Field{
		{Name: "level", Type: I32, Key: true, Role: RoleLevel, Doc: "level being played"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame at join"},
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Enum: JoinPlayers, Doc: "player number given to the client (99: server full)"},
		{Name: "color", Type: U8, Key: true, Doc: "player color given"},
		{Name: "slsn", Type: U8, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number"},
	}}
	cjrc = &Layout{Name: "cjrc", Kind: KindRemoteJoin, Dir: C2S, Doc: "remote-control join request"}
	sjrc = &Layout{Name: "sjrc", Kind: KindRemoteJoinReply, Dir: S2C, Doc: "remote-control join reply", Fields: []Field{
		{Name: "value", Type: F64, Key: true, Doc: "always 0"},
	}}
	cdatU8 = &Layout{Name: "cdat", Kind: KindInput, Dir: C2S, Doc: "client control change", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame of the change"},
		{Name: "move", Type: U8, Key: true, Bits: controlBits, Doc: "control bits"},
	}}
	stdfU8 = &Layout{Name: "stdf", Kind: KindDifPiece, Dir: S2C, Doc: "state dif piece", Fields: []Field{
		{Name: "src", Type: I32, Key: true, Role: RoleDifBase, Doc: "base frame (0: all-zero base)"},
		{Name: "dst", Type: I32, Key: true, Role: RoleFrame, Doc: "frame whose state the dif produces"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index, 0-based"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "slsn", Type: U8, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte of the piece in the compressed dif"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed dif"},
	}}
	stakU8 = &Layout{Name: "stak", Kind: KindDifAck, Dir: C2S, Doc: "state dif acknowledgement and client telemetry", Fields: []Field{
		{Name: "player", Type: U8, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "ack_frame", Type: I32, Key: true, Role: RoleFrame, Doc: "frame acknowledged (after a missing base: the newest frame held, or 0)"},
		{Name: "client_frame", Type: I32, Key: true, Doc: "client's current frame"},
		{Name: "chase_fps", Type: F64, Doc: "client chase frame rate"},
		{Name: "dsync", Type: F64, Key: true, Doc: "client's average dsync (s)"},
		{Name: "rewind", Type: S8, Doc: "client frame - dst when applied (low 8 bits only)"},
		{Name: "local_correction", Type: F64, Doc: "local player correction (px)"},
		{Name: "remote_correction", Type: F64, Doc: "largest remote player correction (px)"},
		{Name: "cpu", Type: F64, Doc: "client cpu load (% of a frame)"},
	}}
	ping = &Layout{Name: "ping", Kind: KindProbe, Dir: C2S, Doc: "round-trip probe", Fields: []Field{
		{Name: "t0", Type: F64, Key: true, Doc: "client time (s)"},
	}}
	pong = &Layout{Name: "pong", Kind: KindProbeReply, Dir: S2C, Doc: "round-trip probe reply", Fields: []Field{
		{Name: "t0", Type: F64, Key: true, Doc: "client time echoed (s)"},
		{Name: "t1", Type: F64, Key: true, Doc: "server time (s)"},
	}}
	pang = &Layout{Name: "pang", Kind: KindProbeEcho, Dir: C2S, Doc: "round-trip probe echo", Fields: []Field{
		{Name: "t1", Type: F64, Key: true, Doc: "server time echoed (s)"},
	}}
	rctl = &Layout{Name: "rctl", Kind: KindRemoteCommand, Dir: C2S, Doc: "remote control command", Fields: []Field{
		{Name: "command", Type: I32, Key: true, Enum: RemoteCommands, Doc: "0 keep-alive, 1 force client offset, 2 client offset adj, 3 zlib level adj, 4 extra packet count, 5 extra packet size, 6 pvp damage, 10 pvp toggle, 11 pvs toggle, 12 fake-key toggle, 20 reload"},
		{Name: "value", Type: F64, Key: true, Doc: "argument"},
	}}
	snfoU8 = &Layout{Name: "snfo", Kind: KindRemoteInfo, Dir: S2C, Doc: "server info piece for remote control", Fields: []Field{
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the compressed server info"},
	}}
	crfl   = &Layout{Name: "crfl", Kind: KindFileRequest, Dir: C2S, Doc: "request: save and send me the game-moves file"}
	sfilU8 = &Layout{Name: "sfil", Kind: KindFilePiece, Dir: S2C, Doc: "file piece", Fields: []Field{
		{Name: "id", Type: I32, Key: true, Doc: "transfer id"},
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "file_size", Type: I32, Key: true, Doc: "uncompressed file size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed file"},
	}}
	sfak = &Layout{Name: "sfak", Kind: KindFileAck, Dir: C2S, Doc: "file acknowledgement", Fields: []Field{
		{Name: "id", Type: I32, Key: true, Doc: "transfer id acknowledged"},
	}}
	extr = &Layout{Name: "extr", Kind: KindPadding, Dir: S2C, Doc: "bandwidth test padding", Fields: []Field{
		{Name: "padding", Type: Rest, Doc: "zero bytes"},
	}}
)

var modernLayouts = []*Layout{handshake, handshakeReply, cjonU8, sjonU8, cjrc, sjrc, cdatU8, stdfU8, stakU8,
	ping, pong, pang, rctl, snfoU8, crfl, sfilU8, sfak, extr}

// srrfU8 is the save result of May 2024 (a byte).
var srrfU8 = &Layout{Name: "srrf", Kind: KindSaveResult, Dir: S2C, Doc: "save result: the server's answer to a file request", Fields: []Field{
	{Name: "result", Type: U8, Key: true, Enum: SaveResults, Doc: "0 saved (the file follows), 1 no game moves, 2 overworld, 3 demo, 4 not the server, 5 file transfer off"},
}}

// The pieces of 2024-05-10 (9444ffe5) on: the piece fields first.
var (
	stdfN3 = &Layout{Name: "stdf", Kind: KindDifPiece, Dir: S2C, Doc: "state dif piece", Fields: []Field{
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index, 0-based"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte of the piece in the compressed dif"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "dst", Type: I32, Key: true, Role: RoleFrame, Doc: "frame whose state the dif produces"},
		{Name: "src", Type: I32, Key: true, Role: RoleDifBase, Doc: "base frame (0: all-zero base)"},
		{Name: "slsn", Type: U8, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed dif"},
	}}
	sfilN3 = &Layout{Name: "sfil", Kind: KindFilePiece, Dir: S2C, Doc: "file piece", Fields: []Field{
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "id", Type: I32, Key: true, Doc: "transfer id"},
		{Name: "file_size", Type: I32, Key: true, Doc: "uncompressed file size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed file"},
	}}
	snfoN3 = &Layout{Name: "snfo", Kind: KindRemoteInfo, Dir: S2C, Doc: "server info piece for remote control", Fields: []Field{
		{Name: "seq", Type: U8, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: U8, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the compressed server info"},
	}}
)

// The packets of 2024-06-02 (109974f3) on: every field an int32.
var (
	cjonI32 = &Layout{Name: "cjon", Kind: KindJoinRequest, Dir: C2S, Doc: "client join request", Fields: []Field{
		{Name: "color", Type: I32, Key: true, Doc: "requested player color (1..15)"},
		hostname(),
	}}
	sjonI32 = &Layout{Name: "sjon", Kind: KindJoinReply, Dir: S2C, Doc: "server join reply", Fields: []Field{
		{Name: "level", Type: I32, Key: true, Role: RoleLevel, Doc: "level being played"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame at join"},
		{Name: "player", Type: I32, Key: true, Role: RolePlayer, Enum: JoinPlayers, Doc: "player number given to the client (99: server full)"},
		{Name: "color", Type: I32, Key: true, Doc: "player color given"},
		{Name: "slsn", Type: I32, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number"},
	}}
	cdatI32 = &Layout{Name: "cdat", Kind: KindInput, Dir: C2S, Doc: "client control change", Fields: []Field{
		{Name: "slsn", Type: I32, Key: true, Role: RoleLevelSeq, Doc: "the client's level-sequence number (the server drops a cdat of another)"},
		{Name: "player", Type: I32, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame of the change"},
		{Name: "move", Type: I32, Key: true, Bits: controlBits, Doc: "control bits"},
	}}
	stdfI32 = &Layout{Name: "stdf", Kind: KindDifPiece, Dir: S2C, Doc: "state dif piece", Fields: []Field{
		{Name: "seq", Type: I32, Key: true, Role: RolePieceSeq, Doc: "piece index, 0-based"},
		{Name: "count", Type: I32, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte of the piece in the compressed dif"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "dst", Type: I32, Key: true, Role: RoleFrame, Doc: "frame whose state the dif produces"},
		{Name: "src", Type: I32, Key: true, Role: RoleDifBase, Doc: "base frame (0: all-zero base)"},
		{Name: "slsn", Type: I32, Key: true, Role: RoleLevelSeq, Doc: "server level-sequence number (a client that sees its own + 1 goes to the next level)"},
		{Name: "level", Type: I32, Key: true, Role: RoleLevel, Doc: "level the server has loaded (sdln)"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed dif"},
	}}
	stakI32 = &Layout{Name: "stak", Kind: KindDifAck, Dir: C2S, Doc: "state dif acknowledgement and client telemetry", Fields: []Field{
		{Name: "slsn", Type: I32, Key: true, Role: RoleLevelSeq, Doc: "the client's level-sequence number (the server drops a stak of another)"},
		{Name: "player", Type: I32, Key: true, Role: RolePlayer, Doc: "player number"},
		{Name: "ack_frame", Type: I32, Key: true, Role: RoleFrame, Doc: "frame acknowledged (after a missing base: the newest frame held, or 0)"},
		{Name: "client_frame", Type: I32, Key: true, Doc: "client's current frame"},
		{Name: "chase_fps", Type: F64, Doc: "client chase frame rate"},
		{Name: "dsync", Type: F64, Key: true, Doc: "client's average dsync (s)"},
		{Name: "rewind", Type: I32, Doc: "client frame - dst when applied"},
		{Name: "local_correction", Type: F64, Doc: "local player correction (px)"},
		{Name: "remote_correction", Type: F64, Doc: "largest remote player correction (px)"},
		{Name: "cpu", Type: F64, Doc: "client cpu load (% of a frame)"},
	}}
	snfoI32 = &Layout{Name: "snfo", Kind: KindRemoteInfo, Dir: S2C, Doc: "server info piece for remote control", Fields: []Field{
		{Name: "seq", Type: I32, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: I32, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "server frame"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the compressed server info"},
	}}
	sfilI32 = &Layout{Name: "sfil", Kind: KindFilePiece, Dir: S2C, Doc: "file piece", Fields: []Field{
		{Name: "seq", Type: I32, Key: true, Role: RolePieceSeq, Doc: "piece index"},
		{Name: "count", Type: I32, Key: true, Role: RolePieceCount, Doc: "number of pieces"},
		{Name: "start", Type: I32, Key: true, Role: RolePieceStart, Doc: "start byte"},
		{Name: "size", Type: I32, Key: true, Role: RoleSize, Doc: "piece size"},
		{Name: "id", Type: I32, Key: true, Doc: "transfer id"},
		{Name: "file_size", Type: I32, Key: true, Doc: "file size"},
		{Name: "data", Type: Data, SizeOf: "size", Doc: "piece of the zlib-compressed file (its name in the first 128 bytes, then the file)"},
	}}
	srrfI32 = &Layout{Name: "srrf", Kind: KindSaveResult, Dir: S2C, Doc: "save result: the server's answer to a file request", Fields: []Field{
		{Name: "result", Type: I32, Key: true, Enum: SaveResults, Doc: "0 saved (the file follows), 1 no game moves, 2 overworld, 3 demo, 4 not the server, 5 file transfer off"},
	}}
	clog = &Layout{Name: "clog", Kind: KindLog, Dir: C2S, Doc: "a client's log line, for the server's netgame log", Fields: []Field{
		{Name: "log_type", Type: I32, Key: true, Enum: LogTypes, Doc: "the game's log category"},
		{Name: "sub_type", Type: I32, Doc: "sub category"},
		{Name: "frame", Type: I32, Key: true, Role: RoleFrame, Doc: "client frame"},
		{Name: "time", Type: F64, Doc: "client time (s)"},
		{Name: "text", Type: StrN, Key: true, Doc: "the log line"},
	}}
)

var i32Layouts = []*Layout{cjonI32, sjonI32, cjrc, sjrc, cdatI32, stdfI32, stakI32, ping, pong, pang, rctl,
	snfoI32, crfl, sfilI32, sfak, extr, srrfI32, clog}

// cjonNamed is the join request of 2026-01-01 (2576c8b4) on.
var cjonNamed = &Layout{Name: "cjon", Kind: KindJoinRequest, Dir: C2S, Doc: "client join request", Fields: []Field{
	{Name: "color", Type: I32, Key: true, Doc: "requested player color (1..15)"},
	{Name: "name", Type: StrN, Key: true, Doc: "the player's name (pm.cfg player_name, up to 8 characters)"},
	{Name: "hostname", Type: StrN, Key: true, Doc: "the client's host name"},
}}

// Drop rules.
var (
	legacyDrop = DropRule{Frames: 100, After: 0, Grace: 200, Ack: KindGameMovesAck, Reason: 71}
	modernDrop = DropRule{Frames: 200, After: 300, Grace: 200, Ack: KindDifAck, Reason: 71}
)

// The versions, oldest first. Legacy and Modern must stay the first two
// (their Version numbers are constants).
var versionTable = []*VersionInfo{
	{
		Name: "legacy", Aliases: []string{"2022-12"}, Label: "legacy era",
		First: Build{"2018", "", ""}, Last: Build{"2022-12-09", "b9ef4688", "7.24.1"},
		Changes:   "the netgame of 2018 to 2022: big-endian fields written byte by byte (negatives not in two's complement); upper-case CJON/SJON; inputs reach the others as game moves (sdat/sdak/serr); one dif every 5 frames to one client at a time",
		Tells:     "upper-case CJON or SJON, a sdat, sdak or serr, or a 22-byte stdf header read big-endian",
		BigEndian: true, PieceSize: 1000, StateSizes: []int{106144}, StateLevelSeq: -1,
		Sync: GameMoves, DifEvery: 5, Drop: legacyDrop, MenuValue: MenuMove, Prior: 10,
		add: legacyLayouts,
	},
	{
		Name: "modern", Aliases: []string{"2024-02", "m"}, Label: "modern era",
		First: Build{"2024-02-20", "d362625e", "7.24.0220.1"}, Last: Build{"2024-02-20", "d362625e", "7.24.0220.1"},
		Changes:   "little-endian fields (raw x86 integers, doubles); lower-case names; the server rewinds and replays late inputs and sends every client a dif every frame with a u8 level sequence (23-byte stdf header); stak with telemetry; ping/pong/pang; file transfer (crfl/sfil/sfak)",
		Tells:     "a 23-byte stdf header (23 + the i32 at 19 = the length) with 1000-byte pieces, and a 112384-byte state",
		PieceSize: 1000, StateSizes: []int{112384}, StateLevelSeq: 280,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, FileBlob: 0, Prior: 90,
		add: modernLayouts,
	},
	{
		Name: "2024-02b", Aliases: []string{"m1", "m2"},
		First: Build{"2024-02-21", "6460534a", "7.24.0221.1"}, Last: Build{"2024-04-14", "c40753b9", "7.24.0414.1"},
		Changes:   "packets as modern; the state grows to 112480 bytes (the player record 288 → 300 bytes, its level sequence at 284); from 2024-03-26 the client sends from a port of its own",
		Tells:     "modern packets with a 112480-byte state",
		PieceSize: 1000, StateSizes: []int{112480}, StateLevelSeq: 284,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, FileBlob: 0, Prior: 80,
		from: "modern",
	},
	{
		Name: "2024-04", Aliases: []string{"n1"},
		First: Build{"2024-04-16", "ac6d3314", "7.24.0416.2"}, Last: Build{"2024-05-08", "abd110db", "7.24.0508.1"},
		Changes:            "no 1234/5678 handshake: the client sends cjon straight to the server's port; the server sends everything from that one socket; from 2024-05-01 a srrf (a byte) answers each crfl and clients ask for the file at each level's end",
		Tells:              "modern packets without a handshake, all server traffic from one port, or a 5-byte srrf",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1000, StateSizes: []int{112480}, StateLevelSeq: 284,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, FileBlob: 0, Prior: 70,
		from: "2024-02b", drop: []string{"1234", "5678"}, add: []*Layout{srrfU8},
	},
	{
		Name: "2024-05", Aliases: []string{"n2"},
		First: Build{"2024-05-10", "7ffdcabd", "7.24.0510.1"}, Last: Build{"2024-05-10", "7ffdcabd", "7.24.0510.1"},
		Changes:            "pieces of 1400 bytes (stdf up to 1423 bytes), fields in the modern order",
		Tells:              "a 23-byte stdf header in the modern order with a piece of more than 1000 bytes or starting at a multiple of 1400",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1400, StateSizes: []int{112480}, StateLevelSeq: 284,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, FileBlob: 0, Prior: 60,
		from: "2024-04",
	},
	{
		Name: "2024-05b", Aliases: []string{"n3"},
		First: Build{"2024-05-10", "9444ffe5", "7.24.0510.1"}, Last: Build{"2024-05-30", "92980400", "7.24.0530.1"},
		Changes:            "the piece fields of stdf, sfil and snfo come first (seq, count, start, size)",
		Tells:              "a 23-byte stdf header whose u8 seq and count come first (23 + the i32 at 10 = the length)",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1400, StateSizes: []int{112480}, StateLevelSeq: 284,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, FileBlob: 0, Prior: 50,
		from: "2024-05", add: []*Layout{stdfN3, sfilN3, snfoN3},
	},
	{
		Name: "2024-06", Aliases: []string{"i32", "aug-2024"},
		First: Build{"2024-06-02", "109974f3", "7.24.0602.1"}, Last: Build{"2025-12-31", "937b64e5", "7.24.0811.1"},
		Changes:            "every field an int32: cjon 24, sjon 24, cdat 20 and stak 64 (both with the level sequence), a 36-byte stdf header with the level number, srrf 8; the state no longer holds the level sequence; from 2024-07-01 every client sends a clog for every netgame log line (until 2025-12-28)",
		Tells:              "a 36-byte stdf header (36 + the i32 at 16 = the length) with a 112480-byte state, a 24-byte cjon, or a clog",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1400, StateSizes: []int{112480}, StateLevelSeq: -1,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, LogAlways: true, FileBlob: 0, Prior: 85,
		add: i32Layouts,
	},
	{
		Name: "2026-01", Aliases: []string{"j1"},
		First: Build{"2026-01-01", "2576c8b4", "7.24.0811.1"}, Last: Build{"2026-01-04", "8c606052", "7.24.0811.1"},
		Changes:            "cjon carries the player's name and host name as length-prefixed text (18 + n + h bytes); the player record gains the name (312 bytes), the state 112576 bytes; clog only when the client logs the netgame CSV",
		Tells:              "a cjon of 18 + n + h bytes, or int32 packets with a 112576-byte state",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1400, StateSizes: []int{112576}, StateLevelSeq: -1,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, FileBlob: 0, Prior: 86,
		from: "2024-06", add: []*Layout{cjonNamed},
	},
	{
		Name: "2026-01b", Aliases: []string{"j2"},
		First: Build{"2026-01-04", "4c6d83ec", "7.24.0811.1"}, Last: Build{"2026-07-13", "475608b9", "7.24.0811.1b"},
		Changes:            "packets as 2026-01; the player record 328 bytes (stat_next_levels, stat_exits), the state 112704 bytes; from 2026-01-11 a file transfer inflates to a fixed 200000 bytes (the name, the file, then the rest of the server's buffer)",
		Tells:              "2026-01 packets with a 112704-byte state",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1400, StateSizes: []int{112704}, StateLevelSeq: -1,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, FileBlob: -1, Prior: 87,
		from: "2026-01",
	},
	{
		Name: "2026-07", Aliases: []string{"head", "head-2026-08"},
		First: Build{"2026-07-14", "5707f212", "7.24.0811.1b"}, Last: Build{"2026-08-19", "56b2285c", "7.24.0811.1b"},
		Changes:            "packets as 2026-01; lift records of 128 bytes, the state 113344 bytes; a level block's tile number is its low 11 bits",
		Tells:              "2026-01 packets with a 113344-byte state",
		SharedServerSocket: true, JoinOnArrival: true, EphemeralClientPort: true, PieceSize: 1400, StateSizes: []int{113344}, StateLevelSeq: -1,
		Sync: Rewind, DifEvery: 1, Drop: modernDrop, ClientsSaveFiles: true, FileBlob: 200000, Prior: 88,
		from: "2026-01b",
	},
}

// FileBlobSize is the size the files of the version inflate to: 200000
// bytes, or the file's size + FileNameSize (see VersionInfo.FileBlob).
const (
	// FileNameSize is the size of the name field that starts an inflated
	// file transfer.
	FileNameSize = 128
	// FixedFileBlob is the fixed size a file transfer inflates to from
	// 2026-01-11 on.
	FixedFileBlob = 200000
)

func init() {
	registerVersions(versionTable)
	if Legacy.String() != "legacy" || Modern.String() != "modern" {
		panic("decode: legacy and modern must be the first versions")
	}
}
