package decode

// Protocol constants of the game, the same in both eras. Go code takes them
// from here (serve's and synth's own names for some are these values); the
// Wireshark dissector's generated header gives them to its Lua runtime.
const (
	// ListenPort is the UDP port a game server listens on by default (a
	// client's first packet, 1234, goes there; on a LAN the clients bind it
	// too).
	ListenPort = 24785

	// PieceSize is the largest data payload of one stdf piece: the server
	// cuts a compressed dif into pieces of this many bytes, the last one
	// shorter (possibly empty), so a dif of n compressed bytes has
	// n/PieceSize + 1 pieces.
	PieceSize = 1000

	// MaxPieces is the most pieces one stdf dif can have: the piece count
	// is a u8 and a dif of MaxPieces pieces holds at most
	// MaxPieces*PieceSize compressed bytes.
	MaxPieces = 255

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

	// MenuMove is the control byte (cdat move, sdat type 5) of a player in
	// the game's menu (ESC), shown as menu/esc rather than as control bits.
	MenuMove = 127
)

// ClientPlayer reports whether n is a client's player number (1..MaxPlayer).
func ClientPlayer(n int) bool { return n > ServerPlayer && n <= MaxPlayer }

// Pieces returns how many pieces carry a compressed message (a dif, a
// file, the snfo clock) of n bytes: n/PieceSize + 1, so a size that is a
// multiple of PieceSize ends in an empty piece, as the game cuts them.
func Pieces(n int) int { return n/PieceSize + 1 }

// Piece returns the bytes of piece seq of the compressed message z: from
// seq*PieceSize, at most PieceSize of them (none past the end).
func Piece(z []byte, seq int) []byte {
	start := min(seq*PieceSize, len(z))
	return z[start:min(start+PieceSize, len(z))]
}
