// Package reassemble collects the pieces of the server's state difs (stdf
// packets) per client and turns them into whole compressed difs, and
// inflates those with a hard bound on their size.
//
// Pieces may come in any order, duplicated, or not at all. A message — one
// dif, keyed by client, level sequence, src and dst frame — is complete when
// every piece 0..count-1 has arrived with consistent headers and the pieces
// tile the compressed bytes from 0 without holes or contradictory overlaps.
// Every message ends in exactly one outcome: Complete, Incomplete (abandoned
// with pieces missing) or Corrupt (inconsistent headers, or, after Inflate,
// a stream that does not inflate to the state size). Memory for unfinished
// messages is bounded per client and overall.
package reassemble

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// Chain identifies one client's chain of states in one conversation (a
// dif's base is an earlier state of the same chain): a client endpoint that joins again (or that two games read
// together share) starts a new conversation, and its frames start afresh.
type Chain struct {
	Conv   int            // the conversation's number (session.Conversation.ID), 0 when not known
	Client netip.AddrPort // the client the difs are sent to
}

func (l Chain) String() string {
	if l.Conv == 0 {
		return l.Client.String()
	}
	return fmt.Sprintf("%s (conversation %d)", l.Client, l.Conv)
}

// Key identifies one dif message.
type Key struct {
	Client netip.AddrPort // the client the dif is sent to
	Conv   int            // its conversation (see Chain), 0 when not known
	SLSN   int            // level-sequence number (the modern stdf byte; 0 in the legacy era)
	Src    int32          // base frame, 0 for a keyframe
	Dst    int32          // frame of the state the dif produces
}

// Chain is the chain the message belongs to.
func (k Key) Chain() Chain { return Chain{k.Conv, k.Client} }

func (k Key) String() string {
	return fmt.Sprintf("%s slsn %d [%d to %d]", k.Client, k.SLSN, k.Src, k.Dst)
}

// Piece is one stdf packet's header and data.
type Piece struct {
	Key
	Seq, Count int
	Start      int
	Data       []byte // the piece's bytes; the Assembler copies them
	// Ref, when not 0, says where the caller can read Data again (its
	// place in a capture file, say): a complete message whose pieces all
	// have one gives their Refs (Message.Refs) instead of its bytes.
	Ref       int64
	Truncated bool // the capture cut the piece (snap length): Data is not whole
	N         int  // frame number in the capture
	TS        time.Time
}

// Status is the outcome of a message.
type Status uint8

const (
	// Complete: every piece arrived and they tile the compressed dif.
	Complete Status = iota
	// Incomplete: abandoned with pieces missing.
	Incomplete
	// Corrupt: inconsistent piece headers, or a stream that does not
	// inflate to the state.
	Corrupt
	// Truncated: every piece arrived, but the capture cut some of them
	// (snap length), so the dif cannot be rebuilt.
	Truncated
)

func (s Status) String() string {
	return [...]string{"complete", "incomplete", "corrupt", "truncated"}[s]
}

// Message is one dif as reassembled.
type Message struct {
	Key
	Status     Status
	Count      int       // piece count the headers give
	Pieces     int       // distinct pieces received
	Missing    []int     // seqs of the missing pieces (Incomplete)
	Duplicates int       // pieces received more than once, with the same bytes
	Truncated  int       // pieces the capture cut (see Piece.Truncated)
	Compressed []byte    // the zlib stream (Complete), unless Refs says where it is
	Refs       []int64   // the Refs of its pieces in order (Complete, when every piece has one)
	Bytes      int       // compressed bytes received (all of them when Complete)
	Err        error     // why it is Incomplete or Corrupt
	FirstN     int       // capture frame number of the first piece received
	LastN      int       // and of the last
	First      time.Time // capture time of the first piece received
	Last       time.Time // and of the last
}

// Limits bound what an Assembler keeps.
type Limits struct {
	// MaxCompressed is the largest compressed dif accepted; a piece whose
	// start + size goes beyond it makes its message Corrupt.
	MaxCompressed int
	// PendingPerClient is how many unfinished messages a client may have;
	// beyond it the oldest is abandoned as Incomplete.
	PendingPerClient int
	// PendingTotal bounds unfinished messages over all clients.
	PendingTotal int
	// AbandonAfter abandons an unfinished message when the client's newest
	// piece is this much later (capture time) than its last piece.
	AbandonAfter time.Duration
	// PendingBytes bounds the piece bytes held for unfinished messages
	// over all clients; beyond it the oldest message is abandoned.
	PendingBytes int
	// HeadersOnly keeps no piece bytes, only their sizes: every outcome
	// is decided as usual (a piece received twice differs only when its
	// start or size does), but a complete message carries no Compressed
	// stream. For figures that need no rebuild.
	HeadersOnly bool
}

// DefaultLimits suit the game: a state is about 110 KB, so its dif never
// compresses to more than MaxPieces pieces of any version's piece size, and a dif not finished
// within 2 s is never applied by a client.
var DefaultLimits = Limits{
	MaxCompressed:    decode.MaxPieces * decode.MaxPieceSize,
	PendingPerClient: 64,
	PendingTotal:     1024,
	AbandonAfter:     2 * time.Second,
	PendingBytes:     64 << 20,
}

// Outcome says what became of one piece given to Add.
type Outcome uint8

const (
	// Accepted: a new piece of an unfinished message.
	Accepted Outcome = iota
	// Duplicate: a piece the message already had, with the same bytes.
	Duplicate
	// LateDuplicate: a piece of a message that had already completed (it
	// can only be a copy of a piece it had).
	LateDuplicate
	// Late: a piece of a message that had already been abandoned or found
	// corrupt; it is dropped.
	Late
	// Rejected: the piece made its message Corrupt.
	Rejected
)

func (o Outcome) String() string {
	return [...]string{"accepted", "duplicate", "late duplicate", "late", "rejected"}[o]
}
