package engine

import (
	"maps"
	"sort"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// captureFigures are the figures of the inputs themselves.
type captureFigures struct {
	inputs        []string
	formats       []string
	unreadable    []string
	damaged       []string // inputs that ended at a damaged record
	emptyInputs   []error  // inputs of which nothing could be read, for Run
	counters      source.Counters
	linkTypes     map[string]int
	baseLinkTypes map[string]int
	first, last   time.Time
	warnings      []string
	timelineErr   error
	namesDropped  int
}

func (c *captureFigures) see(ts time.Time) {
	if c.first.IsZero() || ts.Before(c.first) {
		c.first = ts
	}
	if ts.After(c.last) {
		c.last = ts
	}
}

// Stats is a snapshot of what an engine has seen; its JSON form is what
// pmdump stats --json prints.
type Stats struct {
	Inputs           []string          `json:"inputs"`
	Frames           int               `json:"frames"`
	UDP              int               `json:"udp_datagrams"`
	NonUDP           int               `json:"non_udp_frames"`
	BadFrames        int               `json:"bad_frames"`
	Fragments        int               `json:"ip_fragments"`
	Reassembled      int               `json:"reassembled_datagrams"`
	Truncated        int               `json:"truncated_datagrams"`
	FragmentsDropped int               `json:"ip_fragments_dropped"`
	Unsupported      int               `json:"unsupported_link_frames"`
	KernelReceived   uint64            `json:"kernel_received,omitempty"`
	KernelDropped    uint64            `json:"kernel_dropped,omitempty"`
	LinkTypes        map[string]int    `json:"link_types"`
	First            *time.Time        `json:"first,omitempty"`
	Last             *time.Time        `json:"last,omitempty"`
	Duration         float64           `json:"duration_s"`
	Game             session.Count     `json:"game"`
	Malformed        session.Count     `json:"malformed"`
	Unknown          session.Count     `json:"unknown"`
	NonGame          session.Count     `json:"non_game_skipped"`
	Eras             map[string]int    `json:"eras"`
	Convs            []ConvStats       `json:"conversations"`
	Packets          []NameStats       `json:"packets"`
	Difs             []DifStats        `json:"difs"`
	Rebuilt          bool              `json:"states_rebuilt"` // difs were inflated and their states rebuilt (ok, missing_base, ratio are known)
	Dropped          DroppedStats      `json:"not_tracked"`
	Untracked        session.Untracked `json:"untracked"`
	Warnings         []string          `json:"warnings,omitempty"`
	Unreadable       []string          `json:"unreadable,omitempty"`
	Damaged          []string          `json:"damaged,omitempty"` // inputs cut in the middle of a record or stopped at one that cannot be read: the figures are those of what came before
	Health           []*ClientHealth   `json:"health,omitempty"`
	Findings         *FindingCounts    `json:"findings,omitempty"` // with the Findings work
	Formats          []string          `json:"-"`
}

// DroppedStats counts what the engine did not track one by one, to bound
// its memory against hostile captures.
type DroppedStats struct {
	Names            int `json:"packet_names"`       // packets of unknown names past the per-conversation cap
	Conversations    int `json:"conversations"`      // packets of clients past the conversation cap
	HeaderlessPieces int `json:"headerless_pieces"`  // stdf pieces cut before their header ended
	ImplausibleDifs  int `json:"implausible_frames"` // legacy difs whose frames are too large to be real
}

// ConvStats is one conversation in Stats.
type ConvStats struct {
	ID       int         `json:"id"`
	Client   string      `json:"client"`
	Server   string      `json:"server,omitempty"`
	Listen   string      `json:"listen,omitempty"`
	Era      string      `json:"era"`
	Player   *int        `json:"player,omitempty"`
	Hostname string      `json:"hostname,omitempty"`
	Color    int         `json:"color,omitempty"`
	Level    int         `json:"level,omitempty"`
	Packets  int         `json:"packets"`
	Bytes    int         `json:"bytes"`
	First    time.Time   `json:"first"`
	Last     time.Time   `json:"last"`
	ByName   []NameStats `json:"by_name"`
	// Unrecognised says why the conversation is of no known version (its
	// Era is then "unknown"; NoVersion says it in words), "" when it is
	// not.
	Unrecognised string `json:"unrecognised,omitempty"`
}

// NameStats counts the packets of one name and direction.
type NameStats struct {
	Type    string `json:"type"`
	Dir     string `json:"dir"`
	Packets int    `json:"packets"`
	Bytes   int    `json:"bytes"`
}

func nameStats(m map[session.NameDir]*session.Count) []NameStats {
	out := make([]NameStats, 0, len(m))
	for k, c := range m {
		out = append(out, NameStats{Type: k.Name, Dir: k.Dir.String(), Packets: c.Packets, Bytes: c.Bytes})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Dir < out[j].Dir
	})
	return out
}

// Stats returns a snapshot of the engine's figures.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.trackMu.Lock() // until the tracker's figures are in: not for the reports after them
	st := &e.tracker.Stats
	c := e.cap.counters
	r := Stats{
		Inputs: append([]string(nil), e.cap.inputs...), Frames: c.Frames, UDP: c.Datagrams, NonUDP: c.NonUDP, BadFrames: c.BadFrames,
		Fragments: c.Fragments, Reassembled: c.Reassembled, Truncated: c.Truncated, LinkTypes: maps.Clone(e.cap.linkTypes),
		FragmentsDropped: c.FragmentsDropped, Unsupported: c.Unsupported, KernelReceived: c.KernelReceived, KernelDropped: c.KernelDropped,
		Game: st.Game, Malformed: st.Malformed, Unknown: st.Unknown, NonGame: st.NonGame,
		Eras: map[string]int{}, Warnings: append([]string(nil), e.cap.warnings...), Formats: append([]string(nil), e.cap.formats...),
		Unreadable: append([]string(nil), e.cap.unreadable...), Damaged: append([]string(nil), e.cap.damaged...), Rebuilt: e.builder != nil,
	}
	r.Dropped.Names = e.cap.namesDropped
	r.Untracked = st.Untracked
	r.Dropped.HeaderlessPieces = e.difs.headerless
	for _, lv := range e.levels {
		r.Dropped.ImplausibleDifs += lv.Implausible
	}
	if !e.cap.first.IsZero() {
		f, l := e.cap.first.UTC(), e.cap.last.UTC()
		r.First, r.Last = &f, &l
		r.Duration = l.Sub(f).Seconds()
	}
	for era, n := range st.Eras {
		if n > 0 {
			r.Eras[decode.Version(era).String()] = n
		}
	}
	for _, cv := range e.tracker.Conversations() {
		cr := ConvStats{
			ID: cv.ID, Client: addrString(cv.Client), Server: addrString(cv.Server), Listen: addrString(cv.Listen),
			Era: cv.Version.String(), Hostname: cv.Hostname, Color: cv.Color, Level: cv.Level,
			Packets: cv.Packets, Bytes: cv.Bytes, First: cv.First.UTC(), Last: cv.Last.UTC(),
			ByName: nameStats(e.perConv[cv.ID].names()), Unrecognised: cv.Unrecognised,
		}
		if cv.ID == 0 {
			r.Dropped.Conversations += cv.Packets
		}
		if cv.Player >= 0 {
			pl := cv.Player
			cr.Player = &pl
		}
		r.Convs = append(r.Convs, cr)
	}
	r.Packets = nameStats(st.ByName)
	e.trackMu.Unlock()
	r.Difs = e.difs.report(e.builder != nil)
	if e.health != nil {
		r.Health = e.health.report(e.pendingStates)
	}
	if e.finds != nil {
		r.Findings = countFindings(e.findings)
	}
	return r
}

// Health returns the per-second netgame health of every conversation so
// far (nil unless the engine does Health work).
func (e *Engine) Health() []*ClientHealth {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.health == nil {
		return nil
	}
	return e.health.report(e.pendingStates)
}

// pendingStates is the number of line l's states the rebuild behind the
// fast pass has still to count in the figures, counted of them counted
// (under the engine's lock); 0 without a rebuild behind.
func (e *Engine) pendingStates(l reassemble.Chain, counted int) int {
	if e.bh == nil {
		return 0
	}
	return max(e.bh.queued[l]-counted, 0)
}

func addrString(a interface {
	IsValid() bool
	String() string
}) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// names is the conversation's counts by name; nil for none.
func (cc *convCounts) names() map[session.NameDir]*session.Count {
	if cc == nil {
		return nil
	}
	return cc.byName
}
