// Package report makes pmdump's report: one self-contained HTML page that
// replays a captured game in 2D from the rebuilt states, plots each
// client's netgame health over time and lists the analysis' findings.
//
// Its job is the report's data contract (Data, embedded in the page as
// JSON in <script type="application/json" id="pmdump-report">, so users
// and tests can read it without a browser) and the page itself (Write).
// A Collector gathers the data while an engine runs: the players'
// positions of every rebuilt state through the state's schema, and
// snapshots of the level (levelmap) with its enemies, items, lifts and
// shots; the health series and findings come from the engine as they are.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Version is the version of the data contract; it changes when a field
// changes meaning or goes away (new fields may be added within a version).
const Version = 1

// ElementID is the id of the <script> element that holds the data.
const ElementID = "pmdump-report"

// Data is everything the page shows, as embedded in it.
type Data struct {
	Version       int            `json:"version"`
	Generator     string         `json:"generator"`
	Summary       Summary        `json:"summary"`
	Conversations []Conversation `json:"conversations"`
	Levels        []Level        `json:"levels"`
	Findings      []Finding      `json:"findings"`
}

// Summary describes the capture as a whole.
type Summary struct {
	Inputs    []string       `json:"inputs"`
	First     *time.Time     `json:"first,omitempty"` // the capture's first packet: t = 0
	Duration  float64        `json:"duration_s"`
	Games     int            `json:"games"` // distinct game servers (listening endpoints)
	Eras      map[string]int `json:"eras"`  // conversations per era
	Packets   int            `json:"packets"`
	Malformed int            `json:"malformed"`
	Unknown   int            `json:"unknown"`
	Problems  []string       `json:"problems"` // what the capture got wrong, as pmdump stats says it
	// Thinned says how the replay was thinned ("" when every acknowledged
	// state is in it).
	Thinned string `json:"thinned,omitempty"`
}

// Conversation is one client's conversation with the server: who it is,
// its replay and its health.
type Conversation struct {
	ID       int    `json:"id"`
	Client   string `json:"client"`
	Server   string `json:"server,omitempty"`
	Player   *int   `json:"player"`
	Era      string `json:"era"`
	Hostname string `json:"hostname,omitempty"`
	Color    int    `json:"color"`
	Schema   string `json:"schema,omitempty"`
	States   int    `json:"states"` // states rebuilt ok (acknowledged or not)
	Acked    int    `json:"acked"`  // of which the client acknowledged
	// Colors are the players' colors (the game's palette, 1–15) by player
	// number, as the states last showed them.
	Colors map[string]int `json:"colors"`
	// Levels maps each level sequence of the replay to its level in
	// Data.Levels.
	Levels map[string]int `json:"levels"`
	Replay Replay         `json:"replay"`
	Things Things         `json:"things"`
	Health Health         `json:"health"`
}

// Replay is the states a client acknowledged (the states it held), in the
// order it received them: parallel arrays, one entry per state.
type Replay struct {
	SLSN    []int            `json:"slsn"`
	Frame   []int32          `json:"frame"`
	T       Seconds          `json:"t"` // seconds since the capture's first packet (the dif's last piece)
	Players map[string]Track `json:"players"`
}

// Track is one player's position in each state of a replay, in pixels as
// pmdump state --json prints it; NaN (JSON null) where the player is not
// active.
type Track struct {
	X Coords `json:"x"`
	Y Coords `json:"y"`
}

// Things are snapshots of the enemies, items, lifts and shots of some of
// a replay's states: I[k] is the replay entry of snapshot k; each
// snapshot is a flat list of pixel positions x0,y0,x1,y1,… (rounded).
// Items are null in a snapshot where they did not change since the
// previous one.
type Things struct {
	I       []int   `json:"i"`
	Enemies [][]int `json:"enemies"`
	Items   [][]int `json:"items"`
	Lifts   [][]int `json:"lifts"`
	Shots   [][]int `json:"shots"`
}

// Level is a level's blocks as the level map reads them: Tiles has W×H
// digits, row by row from the top, each a levelmap.Tile.
type Level struct {
	W     int    `json:"w"`
	H     int    `json:"h"`
	Block int    `json:"block"` // pixels per block
	Tiles string `json:"tiles"`
}

// Health is a conversation's per-second health (engine.Second) as
// parallel columns; NaN (null) where a second has no sample.
type Health struct {
	T                []int  `json:"t"`
	DifBytes         Coords `json:"dif_bytes"`
	AckMs            Coords `json:"ack_ms"`
	PingMs           Coords `json:"ping_ms"` // ping → pong at the capture point
	Incomplete       Coords `json:"incomplete"`
	LateInputs       Coords `json:"late_inputs"`
	Corrections      Coords `json:"corrections"` // modern: local correction px (max); legacy: dif corrections
	RemoteCorrection Coords `json:"remote_correction"`
	ChaseFPS         Coords `json:"chase_fps"`
	BaseResets       Coords `json:"base_resets"`
	Jumps            Coords `json:"position_jumps"`
}

// Finding is an engine.Finding as the page shows it; times in seconds
// since the capture's first packet.
type Finding struct {
	Kind     string             `json:"kind"`
	Severity string             `json:"severity"` // info, warning, error
	Start    float64            `json:"start"`
	End      float64            `json:"end"`
	Conv     int                `json:"conv"` // 0: the whole capture
	Client   string             `json:"client,omitempty"`
	Player   int                `json:"player"` // -1: not one player's
	Summary  string             `json:"summary"`
	Figures  map[string]float64 `json:"figures,omitempty"`
}

// Coords are numbers written in the shortest form that reads back as the
// same float64 (as encoding/json writes them, so pmdump state --json
// prints the same), NaN as null.
type Coords struct {
	V []float64
}

// MarshalJSON writes the numbers as a JSON array.
func (c Coords) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(c.V)*8)
	b = append(b, '[')
	for i, v := range c.V {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, ']'), nil
}

// Seconds are times in seconds, written to the microsecond.
type Seconds []float64

// MarshalJSON writes the times as a JSON array.
func (s Seconds) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(s)*10)
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, math.Round(v*1e6)/1e6, 'f', -1, 64)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads a JSON array of numbers, null as NaN.
func (c *Coords) UnmarshalJSON(b []byte) error {
	var vs []*float64
	if err := json.Unmarshal(b, &vs); err != nil {
		return err
	}
	c.V = make([]float64, len(vs))
	for i, v := range vs {
		if v == nil {
			c.V[i] = math.NaN()
		} else {
			c.V[i] = *v
		}
	}
	return nil
}

// Read returns the data embedded in a report page.
func Read(page []byte) (*Data, error) {
	open := []byte(`<script type="application/json" id="` + ElementID + `">`)
	i := bytes.Index(page, open)
	if i < 0 {
		return nil, errors.New("report: no pmdump report data in the page")
	}
	rest := page[i+len(open):]
	j := bytes.Index(rest, []byte("</script>"))
	if j < 0 {
		return nil, errors.New("report: the report data is cut short")
	}
	var d Data
	if err := json.Unmarshal(rest[:j], &d); err != nil {
		return nil, fmt.Errorf("report data: %w", err)
	}
	if d.Version != Version {
		return &d, fmt.Errorf("report data version %d; this pmdump reads version %d", d.Version, Version)
	}
	return &d, nil
}
