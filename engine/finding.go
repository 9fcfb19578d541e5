package engine

import (
	"net/netip"
	"time"
)

// Severity ranks a Finding: Info is worth knowing (a join, a level change),
// Warning hurt the game for someone (loss, lag, late inputs), Error broke it
// (a desync, a dropped player, a client that went silent).
type Severity uint8

// The severities, least first.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityError
)

// String is the severity's name: "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case SeverityInfo:
		return "info"
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	}
	return "unknown"
}

// Evidence is where a Finding can be seen: capture frame numbers (0 when
// none) and the game states concerned.
type Evidence struct {
	First, Worst, Last int          // capture frame numbers
	States             []StateRef   // the game states concerned, oldest first
	Frames             []FrameRange // game frame ranges concerned, per level sequence
}

// StateRef names one game state of a conversation: its level sequence and
// game frame.
type StateRef struct {
	SLSN  int
	Frame int32
}

// FrameRange is a run of game frames of one level sequence, both ends
// included.
type FrameRange struct {
	SLSN     int
	From, To int32
}

// Finding is one thing the analysis found in a netgame: what went wrong
// (or is worth knowing), when, for whom, in plain words, with the figures
// and the evidence. Findings are computed once, in the engine, from the
// figures it keeps; every front end shows the same ones.
type Finding struct {
	Kind       string // e.g. "silent-client", "loss", "desync"; see the README
	Severity   Severity
	Start, End time.Time
	Conv       int            // the conversation's number, 0 for the whole capture
	Client     netip.AddrPort // zero for the whole capture
	Player     int            // -1 when not known or not one player's
	Summary    string         // one line in plain words, with the numbers
	Figures    map[string]float64
	Evidence   Evidence
}

// FindingEvent reports a Finding as soon as the engine has found it (live
// capture shows them as they come); Engine.Findings gives them all.
type FindingEvent struct{ Finding *Finding }

func (FindingEvent) isEvent() {}

// Findings returns a copy of what the analysis has found so far, in the
// order found.
func (e *Engine) Findings() []Finding {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Finding(nil), e.findings...)
}
