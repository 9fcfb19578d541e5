package drive

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/schema"
)

// Divergence is the first state the server sent that differs from the
// recorded one.
type Divergence struct {
	Client int           `json:"client"`
	Player int           `json:"player"`
	At     Key           `json:"at"`
	Fields []FieldChange `json:"fields"`
	Total  int           `json:"total"` // values that differ
	// Input is the input (or join) that was probably read in another
	// frame than in the recording; Sent is the frame it was sent for.
	Input *Action `json:"input,omitempty"`
	Sent  *Key    `json:"sent,omitempty"`
	Text  string  `json:"text"`
}

// FieldChange is one value that differs, named through the schema.
type FieldChange struct {
	Path     string `json:"path"`             // psyn[1].x
	Player   int    `json:"player"`           // the player it belongs to, -1 for none
	Field    string `json:"field"`            // x
	Value    string `json:"value"`            // as the server sent it
	Recorded string `json:"recorded"`         // as recorded
	Note     string `json:"note,omitempty"`   // what the schema says it means
	Region   string `json:"region,omitempty"` // psyn
}

// maxFields bounds the fields a divergence lists, maxText those its text
// names.
const (
	maxFields = 40
	maxText   = 12
)

// diverge describes the difference of a live state from the recorded one
// of client c at k.
func (r *Recording) diverge(c *Client, player int, k Key, live []byte, sent map[*Action]Key) *Divergence {
	dv := &Divergence{Client: c.N, Player: player, At: k}
	recorded, err := r.recordedState(c, k)
	if err != nil || r.Schema == nil || len(recorded) != len(live) {
		dv.Text = fmt.Sprintf("frame %d: the state differs (%s)", k.Frame, describeErr(err, r.Schema == nil))
		return dv
	}
	changes, err := schema.Diff(r.Schema, recorded, live)
	if err != nil {
		dv.Text = fmt.Sprintf("frame %d: the state differs (%v)", k.Frame, err)
		return dv
	}
	dv.Total = len(changes)
	players := map[int]bool{}
	for _, ch := range changes {
		fc := FieldChange{Path: ch.Path(), Player: -1, Field: ch.Field, Region: ch.Region, Note: ch.Note,
			Value: value(ch.New, ch.NewText, ch.Type), Recorded: value(ch.Old, ch.OldText, ch.Type)}
		if ch.Region == "psyn" && len(ch.Index) > 0 {
			fc.Player = ch.Index[0]
			players[fc.Player] = true
		}
		if len(dv.Fields) < maxFields {
			dv.Fields = append(dv.Fields, fc)
		}
	}
	dv.Input = r.suspect(k, recorded, live, players)
	if dv.Input != nil {
		if s, ok := sent[dv.Input]; ok {
			dv.Sent = &s
		}
	}
	dv.Text = dv.text()
	return dv
}

func describeErr(err error, noSchema bool) string {
	if noSchema {
		return "no schema names the fields of a state of this size"
	}
	if err != nil {
		return err.Error()
	}
	return "the recorded state is not of the same size"
}

// value formats a state value: whole numbers as integers, float32 values
// at their shortest.
func value(v float64, text string, t schema.Type) string {
	if text != "" || t == schema.Chars {
		return strconv.Quote(text)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 32)
}

// text is the divergence in one line: "frame 230: player 1 x 985.39
// (recorded 984.12), right_xinc, up; Ef[3] x 40 (recorded 41)".
func (dv *Divergence) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "frame %d:", dv.At.Frame)
	group := ""
	for i, f := range dv.Fields[:min(len(dv.Fields), maxText)] {
		g := f.Region
		name := f.Field
		if f.Player >= 0 {
			g = fmt.Sprintf("player %d", f.Player)
		}
		if name == "" || f.Player < 0 {
			name = f.Path
		}
		switch {
		case g != group:
			if i > 0 {
				b.WriteString(";")
			}
			if f.Player >= 0 {
				fmt.Fprintf(&b, " %s %s %s (recorded %s)", g, name, f.Value, f.Recorded)
			} else {
				fmt.Fprintf(&b, " %s %s (recorded %s)", name, f.Value, f.Recorded)
			}
			group = g
		default:
			fmt.Fprintf(&b, ", %s", name)
		}
	}
	if dv.Total > min(len(dv.Fields), maxText) {
		fmt.Fprintf(&b, " … %d values in all", dv.Total)
	}
	if dv.Input != nil {
		fmt.Fprintf(&b, "; probably read in another frame: %s", dv.Input)
		if dv.Sent != nil && dv.Input.At.Less(*dv.Sent) {
			fmt.Fprintf(&b, ", sent late for frame %d", dv.Sent.Frame)
		} else if dv.Sent != nil && dv.Sent.Less(dv.Input.At) {
			fmt.Fprintf(&b, ", sent early for frame %d", dv.Sent.Frame)
		}
	}
	return b.String()
}

// suspect names the input most probably read in another frame than in
// the recording, for a state k that differs: an input of a player whose
// fields differ, whose controls the recorded state shows and the live one
// does not (read too late) or the other way round (read too early), the
// nearest to the frame the state was made in; failing that, the newest
// input of such a player read by then, or the newest input at all.
func (r *Recording) suspect(k Key, recorded, live []byte, players map[int]bool) *Action {
	made := k.Add(-1) // the frame the state was made in
	reg := r.Schema.Region("psyn")
	byPlayer := map[int]int{}
	for _, c := range r.Clients {
		byPlayer[c.N] = c.Player
	}
	var best *Action
	bestDist := int32(math.MaxInt32)
	for _, a := range r.Actions {
		if a.Kind != Input || a.At.SLSN != k.SLSN || !players[byPlayer[a.Client]] || reg == nil {
			continue
		}
		p := byPlayer[a.Client]
		rc, ok1 := controls(reg, recorded[reg.Offset:reg.Offset+reg.Size], p)
		lc, ok2 := controls(reg, live[reg.Offset:reg.Offset+reg.Size], p)
		if !ok1 || !ok2 || rc == lc || (a.Move&0x3f != rc && a.Move&0x3f != lc) {
			continue
		}
		d := a.At.Frame - made.Frame
		if d < 0 {
			d = -d
		}
		if d < bestDist {
			best, bestDist = a, d
		}
	}
	if best != nil {
		return best
	}
	for _, a := range r.Actions {
		if (a.Kind == Input || a.Kind == Join) && !made.Less(a.At) && (len(players) == 0 || players[byPlayer[a.Client]]) {
			best = a
		}
	}
	return best
}

// recordedState rebuilds the state the recording's client c was sent at k.
func (r *Recording) recordedState(c *Client, k Key) ([]byte, error) {
	i := r.eng.Find(c.line, k.SLSN, k.Frame, false)
	if i < 0 {
		return nil, fmt.Errorf("the recorded state %v is not in the timeline", k)
	}
	es := r.eng.Entries(nil, c.line, i, i+1)
	if len(es) != 1 || es[0].N != k.Frame {
		return nil, fmt.Errorf("the recorded state %v is not in the timeline", k)
	}
	return r.eng.State(nil, c.line, i)
}
