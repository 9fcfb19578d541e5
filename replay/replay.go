// Package replay rebuilds the game states the server sent each client from
// the reassembled state difs: new = base − dif, bytewise, where the base is
// the client's state at the dif's src frame (all zeros for src 0).
//
// Clients are independent chains, so a Builder rebuilds each client on a
// goroutine of its own, as many at once as its Gate lets (GOMAXPROCS by
// default), and hands the results back in the order the difs ended in the
// capture. A chain's difs do not depend on its states, so each chain
// inflates them ahead of its builds on a second goroutine: a client
// rebuilt alone (the one a front end asks for first) takes two cores.
//
// The package replays difs into states; it sends nothing. Sending a
// recording again over the network (`pmdump replay`) is package sender.
package replay

import (
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
)

// Status is the outcome of rebuilding one state.
type Status uint8

const (
	// OK: the state was rebuilt.
	OK Status = iota
	// MissingBase: the dif is whole but its base state was never rebuilt
	// (the capture started late, or the base's own dif was lost).
	MissingBase
	// Incomplete: pieces of the dif are missing.
	Incomplete
	// Corrupt: the dif's pieces disagree or it does not inflate to a state.
	Corrupt
	// Truncated: the capture cut pieces of the dif (snap length).
	Truncated
)

func (s Status) String() string {
	return [...]string{"ok", "missing-base", "incomplete", "corrupt", "truncated"}[s]
}

// Frame identifies a state of one client: frame numbers restart at every
// level change, which bumps the level-sequence number.
type Frame struct {
	SLSN int
	N    int32
}

// State is one rebuilt (or failed) state.
type State struct {
	Seq        int            // order in which its dif ended in the capture, from 0
	Client     netip.AddrPort // the client it was sent to
	Conv       int            // the conversation (see reassemble.Chain), 0 when not known
	BaseSeq    int            // Seq of the state it was rebuilt on (OK, src ≠ 0); -1 for none
	Player     int            // the client's player number, -1 if unknown
	SLSN       int            // level sequence (inferred for the legacy era)
	Src, Dst   int32
	TS         time.Time // capture time of the dif's last piece
	N          int       // capture frame number of the dif's last piece
	Size       int       // state size in bytes (OK)
	Compressed int       // compressed dif bytes
	Pieces     int       // pieces received
	Count      int       // pieces the dif has
	Status     Status
	Err        error
	Sum        [32]byte      // sha256 of the state (OK, with Options.SHA256)
	Hash       statedif.Hash // the state's Hash, to tell states apart in this process (OK)
	Data       []byte        // the state itself, when the Builder keeps states
	Checkpoint []byte        // the state compressed (S2), for a checkpoint (see Options)
	Dif        []byte        // the dif's zlib stream (the message's; do not modify)
	Extra      any           // set by Options.Inspect
}

// Keyframe reports whether the state was sent against an all-zero base.
func (s *State) Keyframe() bool { return s.Src == 0 }

// Line is the chain the state belongs to.
func (s *State) Line() reassemble.Chain { return reassemble.Chain{Conv: s.Conv, Client: s.Client} }
