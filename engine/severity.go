package engine

import (
	"fmt"
	"strconv"
)

// Threshold is one rule of severity, in terms a player feels: a finding of
// Kind whose figure Figure reaches Warn (Error) is a warning (an error),
// or, with Below, one whose figure falls to it or under. A rule with MinOf
// weighs only when the finding's figure MinOf is at least Min (a rate of
// 1 in 10 proves little). The rules are data, the one definition every
// era and version is judged by; the README prints them (a test keeps the
// two equal).
type Threshold struct {
	Kind   string  // the finding kind
	Figure string  // the Finding.Figures key it reads
	Warn   float64 // a warning from this value on
	Error  float64 // an error from this value on (0: never)
	Below  bool    // lower is worse: from this value down
	MinOf  string  // the rule weighs only when this figure ...
	Min    float64 // ... is at least Min
	Unit   string  // how the README prints Warn: "%" (a share), "s", "ms", "frames", "a minute" or ""
	Felt   string  // what the player feels at Warn
}

// What the thresholds are made of: the game's 40 frames a second, and what a
// player notices.
const (
	// LateFrames is how late an input must reach the server to count in the
	// late share where the protocol says how late (the legacy serr's
	// c_sync): 3 frames, 75 ms, past what a player feels as lag. Where it
	// does not (the modern late_cdats of the states), every late input
	// counts.
	LateFrames = 3
	// CorrectionPx is a correction a player sees as a jump: two tiles.
	CorrectionPx = 40
	// ShownFPS: a client that shows fewer frames a second than this (it
	// skips one in eight) stutters.
	ShownFPS = 35
)

// Thresholds are the severity rules of the kinds whose severity is a
// matter of degree; the other kinds have one severity each (the README's
// table of kinds).
var Thresholds = []Threshold{
	{Kind: KindLoss, Figure: "rate_low", Warn: LossWarn, Unit: "%",
		Felt: "at least 1 datagram in 50 lost (the lower end of the estimate's 95 % interval): a lost state or input every second or two"},
	{Kind: KindLoss, Figure: "longest_lost_frames", Warn: BurstFrames, Unit: "frames",
		Felt: "half a second of difs lost in a row: the game stops for the player"},
	{Kind: KindLoss, Figure: "outage_share", Warn: OutageWarn, Unit: "%",
		Felt: "5 % of the time in windows with nothing arriving either way: the game stutters"},
	{Kind: KindLossBurst, Figure: "rate", Warn: BurstRate, Unit: "%",
		Felt: "a window of concentrated loss: states and inputs lost one in ten or more, for seconds"},
	{Kind: KindLateInputs, Figure: "late_share", Warn: LateWarn, MinOf: "inputs", Min: minKindSent, Unit: "%",
		Felt: "1 input in 10 reached the server 3 frames (75 ms) or more after its frame: the player's own moves jump back, often"},
	{Kind: KindSlowClient, Figure: "slow_seconds", Warn: 3, Unit: "s",
		Felt: "3 s in a row under 30 fps (¾ of the server's 40): the game runs slow for the player"},
	{Kind: KindSlowClient, Figure: "rewinds", Warn: 2, Unit: "",
		Felt: "the acknowledged frame went back twice: the player saw the game jump back"},
	{Kind: KindSlowClient, Figure: "skipped_share", Warn: 1 - ShownFPS/float64(GameFPS), Unit: "%",
		Felt: "1 frame in 8 skipped (fewer than 35 shown a second): the screen stutters"},
	{Kind: KindCorrections, Figure: "big_per_min", Warn: 30, MinOf: "acks", Min: minKindSent, Unit: "a minute",
		Felt: "a correction of 2 tiles (40 px) or more every 2 s: the player's world keeps jumping (the clean real games have up to 23 a minute)"},
	{Kind: KindLatency, Figure: "p95_ms", Warn: LatencyWarnMs, MinOf: "acks", Min: 20, Unit: "ms",
		Felt: "1 state in 20 acknowledged 150 ms or more after it was sent: the game lags"},
	{Kind: KindResetStorm, Figure: "seconds", Warn: StormSeconds, Unit: "s",
		Felt: "10 s in a row of keyframes only (a join or a level change brings a few): a thin link chokes and the states come late"},
}

// Judge is the severity the Thresholds give a finding of its kind and
// figures: the worst of the rules it meets, Info when it meets none.
func Judge(f *Finding) Severity {
	sev := SeverityInfo
	for _, t := range Thresholds {
		if t.Kind != f.Kind {
			continue
		}
		v, ok := f.Figures[t.Figure]
		if !ok {
			continue
		}
		if t.MinOf != "" && f.Figures[t.MinOf] < t.Min {
			continue
		}
		meets := func(at float64) bool {
			if t.Below {
				return v <= at
			}
			return v >= at
		}
		if t.Error != 0 && meets(t.Error) {
			sev = max(sev, SeverityError)
		} else if meets(t.Warn) {
			sev = max(sev, SeverityWarning)
		}
	}
	return sev
}

// ThresholdText prints a rule's threshold as the README and doctor's help
// say it: "from 2 %", "from 150 ms", "at 30 or below".
func ThresholdText(t Threshold) string {
	v := strconv.FormatFloat(t.Warn, 'f', -1, 64)
	if t.Unit == "%" {
		v = strconv.FormatFloat(100*t.Warn, 'f', -1, 64) + " %"
	} else if t.Unit != "" {
		v += " " + t.Unit
	}
	s := "warning from " + v
	if t.Below {
		s = "warning at " + v + " or below"
	}
	if t.MinOf != "" {
		s += fmt.Sprintf(" (with `%s` %s or more)", t.MinOf, strconv.FormatFloat(t.Min, 'f', -1, 64))
	}
	return s
}
