package decode

// The game's constants, the same in every version. Go code takes them from
// here (serve's, synth's and the engine's own names for some are these
// values); the Wireshark dissector's generated header gives them to its Lua
// runtime. What differs between versions (the piece size, the drop rule,
// the state sizes…) is in each Version's VersionInfo.
const (
	// ListenPort is the UDP port a game server listens on by default (a
	// client's first packet goes there; on a LAN the clients of the older
	// versions bind it too).
	ListenPort = 24785

	// FrameRate is the game's frames per second.
	FrameRate = 40

	// History is how many states the server keeps of each client, the
	// bases a dif can have: a dif's base is the last state the client
	// acknowledged while it is still among them, else the all-zero base.
	History = 8

	// MaxPieces is the most pieces one message (a dif, a file, the snfo
	// information) can have: the piece count is a byte in the older
	// versions, and no version's largest state needs more.
	MaxPieces = 255

	// MaxStateSize is the largest state pmdump rebuilds: no version's state
	// comes near it (the largest is 113344 bytes), so a dif that inflates
	// past it is not a state.
	MaxStateSize = 256 << 10

	// ClientTimeout is how many frames a client waits without applying a
	// dif before it gives up the game ("lost server connection").
	ClientTimeout = 200

	// PingEvery is how many frames lie between a client's probes (ping),
	// in the versions that have them.
	PingEvery = FrameRate

	// LevelRestartGap is how far back, in frames, a keyframe's frame must
	// be from the newest one for a version without the level sequence on
	// the wire (legacy) to count as a level restart: delay and reordering
	// move frames by far less (5 s).
	LevelRestartGap = 5 * FrameRate

	// MinPlayer and MaxPlayer bound a player number: the server is player
	// MinPlayer (0), clients are 1..MaxPlayer.
	MinPlayer = 0
	// MaxPlayer is the highest player number (a game has at most 8 players).
	MaxPlayer = 7
	// ServerPlayer is the server's own player number.
	ServerPlayer = 0

	// PlayerServerFull is the player number of a join reply that refuses
	// the client because the game is full.
	PlayerServerFull = 99

	// MenuMove is the control byte (cdat move, sdat type 5) of a legacy
	// player in the game's menu (ESC), shown as menu/esc rather than as
	// control bits.
	MenuMove = 127
)

// ClientPlayer reports whether n is a client's player number (1..MaxPlayer).
func ClientPlayer(n int) bool { return n > ServerPlayer && n <= MaxPlayer }
