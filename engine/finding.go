package engine

import (
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// The kinds of Finding (Finding.Kind); the README describes each, its
// threshold and its figures.
const (
	KindJoin           = "join"           // a client joined (handshake seen)
	KindJoinFailed     = "join-failed"    // a client asked to join and no join reply reached it
	KindMidGame        = "mid-game"       // a conversation whose handshake is not in the capture
	KindRejoin         = "rejoin"         // a client endpoint shook hands again
	KindLeave          = "leave"          // a client stopped before the capture's end, or quit
	KindDropped        = "player-dropped" // the server dropped a player (legacy sdat state 70/71)
	KindSilentClient   = "silent-client"  // the client sent nothing while the server kept sending
	KindSilentServer   = "silent-server"  // the server sent nothing to a client that kept sending
	KindOutage         = "outage"         // nothing went either way, then the game went on
	KindLevelChange    = "level-change"   // a new level sequence began
	KindLoss           = "loss"           // datagrams lost, per direction: an estimate and what is proven
	KindLossBurst      = "loss-burst"     // a window of concentrated loss, per direction
	KindLatency        = "latency"        // ack latency baseline, spikes and jitter; ping round trip
	KindSlowClient     = "slow-client"    // chase fps below the server's rate
	KindLateInputs     = "late-inputs"    // inputs that reached the server after their frame
	KindCorrections    = "corrections"    // the client's simulation overwritten by the server's states
	KindResetStorm     = "base-reset-storm"
	KindDesync         = "desync" // two clients acknowledged different states of one frame
	KindCaptureEnd     = "capture-ends-mid-dif"
	KindSnapLength     = "snap-length"     // frames cut by the capture's snap length
	KindCaptureDrops   = "capture-drops"   // frames the kernel or the capture tool dropped
	KindSharedEndpoint = "shared-endpoint" // two games in one capture share a client endpoint
	KindIdleClient     = "idle-client"     // a client that sent (almost) no input
	KindFileTransfer   = "file-transfer"   // a file the server sent a client (sfil)
	KindNoVersion      = "no-version"      // a conversation whose packets fit no known version
)

// The thresholds, derived from the game's own rates: 40 frames a second;
// a legacy dif every 5 server frames (round robin), a modern one every
// frame; a modern ping every second; a client acknowledges what it applies
// and answers every sdat.
const (
	// GameFPS is the game's frame rate.
	GameFPS = decode.FrameRate
	// SilentAfter is the silence (40 frames) after which a client (or the
	// server) that sends nothing while the other side keeps sending is
	// reported: a playing client sends a stak or an sdak several times a
	// frame-second and a modern one pings every second.
	SilentAfter = time.Second
	// DropAfter is the silence that breaks the game for a player (an
	// error): 100 frames, after which the legacy server drops a client
	// that sent no sdak.
	DropAfter = 2500 * time.Millisecond
	// SlowFPS is the chase frame rate below which a client is slow: three
	// quarters of the server's 40.
	SlowFPS = 30
	// StormResets is the base resets in one second that make a storm
	// second (an eighth of the modern server's 40 difs a second); a storm
	// of StormSeconds seconds or more in a row is a warning (a join or a
	// level change, while a slow client loads the level, brings up to 6 on
	// the real captures).
	StormResets  = 5
	StormSeconds = 10
	// LossWarn is the loss rate of a direction that makes loss a warning
	// once the estimate's interval lies above it (below it, info); a run
	// of lost difs covering BurstFrames frames or more is a warning too.
	LossWarn    = 0.02
	BurstFrames = GameFPS / 2
	// BurstRate is the loss rate of a window of concentrated loss (a
	// loss-burst finding) from which it is a warning.
	BurstRate = 0.1
	// OutageWarn is the share of a conversation's time spent in windows
	// where nothing arrived either way (each at least 10 frames and 8 times
	// the usual gap) that makes loss a warning.
	OutageWarn = 0.05
	// LateWarn is the share of a client's inputs arriving LateFrames or
	// more late that makes a warning: 1 in 10 (a busy client machine that
	// stalls for a few frames now and then makes some late on its own).
	LateWarn = 0.1
	// LatencyWarnMs is the 95th percentile of the ack latency from which
	// latency is a warning: 6 frames, 150 ms, where players of action
	// games feel lag.
	LatencyWarnMs = 6 * 1000 / GameFPS
	// IdleEvery: a client that sent fewer than one input per IdleEvery
	// over at least twice that of play is idle (a playing client changes
	// its controls several times a second).
	IdleEvery = 5 * time.Second
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
