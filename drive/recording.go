// Package drive replays a recorded game's clients against a live game
// server, frame for frame, and checks that the server sends the recorded
// states again.
//
// Load reads a capture with the engine and derives the schedule from it
// alone: when each recorded client joined (the server frame of its join
// reply), and in which server frame the server read each of its inputs
// (cdat, crfl): the newest state sent before the input arrived says the
// frame, and the recorded states confirm it, since a player's controls show
// up in the state made in the frame the server read them. Run then joins a
// remote-control client to the server, whose snfo clock gives the server's
// frame, joins each recorded client and sends each input as soon as the
// server has finished the frame before the input's, acknowledges every
// state as the game's client does, rebuilds every state the server sends
// and compares it with the recorded state of the same level sequence and
// frame.
package drive

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
	"github.com/pmdump/pmdump/session"
)

// Key names a state: level sequence and frame.
type Key struct {
	SLSN  int   `json:"slsn"`
	Frame int32 `json:"frame"`
}

// Less orders keys in game time.
func (k Key) Less(o Key) bool {
	return k.SLSN < o.SLSN || k.SLSN == o.SLSN && k.Frame < o.Frame
}

// Add returns the key n frames later in the same level sequence.
func (k Key) Add(n int32) Key { return Key{k.SLSN, k.Frame + n} }

func (k Key) String() string { return fmt.Sprintf("%d:%d", k.SLSN, k.Frame) }

// Client is one recorded client.
type Client struct {
	N        int            `json:"client"` // 1-based, in the order of the recorded joins
	Conv     int            `json:"conv"`   // the recording's conversation number
	Addr     netip.AddrPort `json:"addr"`   // its endpoint in the recording
	Player   int            `json:"player"` // player number the server gave it
	Color    int            `json:"color"`  // color requested in the join (cjon)
	Hostname string         `json:"hostname"`
	Join     Key            `json:"join"` // the frame the server read its join in (the join reply's)
	Last     Key            `json:"last"` // the frame the server read its last packet in
	line     reassemble.Chain
	states   map[Key][32]byte // the states the server sent it, by key
}

// Kind is what an action sends.
type Kind string

// The actions of a schedule.
const (
	Join  Kind = "cjon" // join request
	Input Kind = "cdat" // control change
	File  Kind = "crfl" // file request
)

// Check is what the recorded states say about an input's frame.
type Check string

// The outcomes of an input's check.
const (
	// Confirmed: the player's controls show the input in the state made
	// in the frame the packet order gives.
	Confirmed Check = "confirmed"
	// Moved: they show it only some frames later; the input was read
	// then (it came in during a frame, or the server stalled) and the
	// schedule says so.
	Moved Check = "moved"
	// Unchecked: the states cannot show when it was read, and nothing in
	// them depends on it (a file request, an input that changes no
	// control).
	Unchecked Check = "unchecked"
	// Uncertain: the states cannot say (a state is missing from the
	// capture, the input was overridden at once, or it never shows).
	Uncertain Check = "uncertain"
)

// Action is one packet of a recorded client the server acts on, with the
// frame the server read it in.
type Action struct {
	Client  int    `json:"client"` // Client.N
	Kind    Kind   `json:"packet"`
	N       int    `json:"n"`    // capture frame number
	At      Key    `json:"read"` // the frame the server read it in
	Ordered Key    `json:"order_read"`
	Move    byte   `json:"move,omitempty"`  // cdat's control bits
	Frame   int32  `json:"frame,omitempty"` // cdat's frame
	Check   Check  `json:"check,omitempty"`
	Reason  string `json:"reason,omitempty"` // why it is uncertain
	Payload []byte `json:"-"`
}

func (a *Action) String() string {
	switch a.Kind {
	case Input:
		return fmt.Sprintf("cdat of client %d (capture frame %d, frame %d, move %s) read in frame %d", a.Client, a.N, a.Frame, Controls(a.Move), a.At.Frame)
	case Join:
		return fmt.Sprintf("join of client %d (capture frame %d) read in frame %d", a.Client, a.N, a.At.Frame)
	}
	return fmt.Sprintf("%s of client %d (capture frame %d) read in frame %d", a.Kind, a.Client, a.N, a.At.Frame)
}

// controlNames are the control bits of cdat, low bit first, named as the
// state's player fields.
var controlNames = []string{"left", "right", "up", "down", "jump", "fire"}

// Controls names control bits: "right,jump", or "none".
func Controls(m byte) string {
	var s []string
	for i, n := range controlNames {
		if m&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	if m&0x40 != 0 {
		s = append(s, "menu")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// Recording is a recorded game and the schedule derived from it.
type Recording struct {
	// Version is the game's wire version, as the capture tells it.
	Version  decode.Version
	Schema   *schema.Schema
	Clients  []*Client
	Actions  []*Action // in capture order
	End      Key       // the newest recorded state
	States   int       // recorded states (per client)
	Warnings []string

	eng     *engine.Engine
	players map[Key][]byte // the player region of every recorded state, by key
}

// LoadOptions choose the game of a capture.
type LoadOptions struct {
	// Conv, when not 0, picks the game that holds this conversation (as
	// pmdump stats numbers them); it is needed when a capture holds
	// several games.
	Conv int
	// Schema is a layout for a state size the built-in schemas do not know.
	Schema *schema.Schema
}

// packetRec is a client packet the schedule may use.
type packetRec struct {
	n       int
	conv    int
	kind    decode.Kind
	at      Key
	ok      bool // a state had been sent before it
	payload []byte
	move    byte
	frame   int32
	color   int
	host    string
}

// Load reads a capture (several files are read as one) and derives the
// schedule of one game in it.
func Load(ctx context.Context, inputs []string, opt LoadOptions) (*Recording, error) {
	rec := &Recording{}
	var (
		mu      sync.Mutex // guards gameOf and players, which Inspect uses
		servers = map[string]*serverTrack{}
		gameOf  = map[int]string{}            // conversation → game
		players = map[string]map[Key][]byte{} // game → the player region of its states
		packets []packetRec
		convs   = map[int]*session.Conversation{}
		sjon    = map[int]Key{}
		sjonN   = map[int]int{}
		states  = map[int]map[Key][32]byte{}
		lines   = map[int]reassemble.Chain{}
		era     decode.Version
	)
	cfg := engine.Config{Work: engine.Timeline, Schema: opt.Schema, SHA256: true}
	cfg.Inspect = func(s *replay.State, _, state []byte) {
		sch := schema.For(len(state), optSchema(opt.Schema)...)
		r := sch.Region("psyn")
		if r == nil {
			return
		}
		k := Key{s.SLSN, s.Dst}
		mu.Lock()
		defer mu.Unlock()
		g, ok := gameOf[s.Conv]
		if !ok {
			return
		}
		m := players[g]
		if m == nil {
			m = map[Key][]byte{}
			players[g] = m
		}
		if m[k] == nil {
			m[k] = slices.Clone(state[r.Offset : r.Offset+r.Size])
		}
	}
	cfg.OnEvent = func(ev engine.Event) {
		switch ev := ev.(type) {
		case engine.WarningEvent:
			rec.Warnings = append(rec.Warnings, ev.Message)
		case engine.StateEvent:
			s := ev.State
			if s.Status != replay.OK || s.Conv == 0 {
				return
			}
			m := states[s.Conv]
			if m == nil {
				m = map[Key][32]byte{}
				states[s.Conv] = m
				lines[s.Conv] = s.Line()
			}
			k := Key{s.SLSN, s.Dst}
			if _, dup := m[k]; !dup {
				m[k] = s.Sum
			}
		case engine.PacketEvent:
			r := ev.Record
			if r.Kind != session.Game || r.Conv == nil {
				return
			}
			if r.Version != decode.VersionUnknown {
				era = r.Version
			}
			c := *r.Conv
			convs[c.ID] = &c
			p := &r.Packet
			kind := p.Kind()
			sk := serverKey(&c)
			st := servers[sk]
			if st == nil {
				st = &serverTrack{}
				servers[sk] = st
			}
			mu.Lock()
			if _, ok := gameOf[c.ID]; !ok {
				gameOf[c.ID] = st.game(sk)
			}
			mu.Unlock()
			if r.Dir == decode.S2C {
				switch kind {
				case decode.KindDifPiece:
					k := Key{int(intOf(fieldLevelSeq, p)), int32(intOf(fieldFrame, p))}
					if !st.sent || st.newest.Less(k) {
						st.newest, st.sent = k, true
					}
				case decode.KindJoinReply:
					if _, ok := sjon[c.ID]; !ok {
						k := Key{int(intOf(fieldLevelSeq, p)), int32(intOf(fieldFrame, p))}
						if st.sent && k.Add(restartSlack).Less(st.newest) {
							// The server's frames started again: another
							// game (the server was restarted). A join
							// reply may name a frame or two before the
							// newest state (the versions that join on
							// arrival name the frame that ran last).
							st.gen++
							st.newest, st.sent = Key{}, false
						}
						sjon[c.ID], sjonN[c.ID] = k, r.N
						mu.Lock()
						gameOf[c.ID] = st.game(sk)
						mu.Unlock()
					}
				}
				return
			}
			pr := packetRec{n: r.N, conv: c.ID, kind: kind, at: st.newest, ok: st.sent, payload: slices.Clone(p.Raw)}
			switch kind {
			case decode.KindInput:
				pr.move, pr.frame = byte(intOf(fieldMove, p)), int32(intOf(fieldFrame, p))
			case decode.KindJoinRequest:
				pr.color = int(intOf(fieldColor, p))
				pr.host = cstring(valueOf(fieldHostname, p).Bytes)
			}
			packets = append(packets, pr)
		}
	}
	e := engine.New(cfg)
	rec.eng = e
	if err := e.Run(ctx, inputs...); err != nil {
		return nil, fmt.Errorf("drive: %w", err)
	}
	game, err := pickGame(convs, gameOf, opt.Conv)
	if err != nil {
		return nil, err
	}
	for id := range game {
		if v := convs[id].Version; v.Known() {
			era = v // the conversation's version as the whole capture settled it
		}
	}
	if era.Sync() == decode.GameMoves {
		return nil, fmt.Errorf("drive: the capture is of the %s version, which drive does not support yet (its server syncs inputs with sdat/sdak/serr; see the README)", era)
	}
	if !era.Known() {
		return nil, errors.New("drive: the capture's version of the game is not known")
	}
	rec.Version = era
	for id := range game {
		rec.players = players[gameOf[id]]
		break
	}
	if rec.players == nil {
		rec.players = map[Key][]byte{}
	}
	// Clients in the order of their joins.
	var ids []int
	for _, id := range slices.Sorted(maps.Keys(game)) {
		if _, ok := sjon[id]; ok {
			ids = append(ids, id)
		} else {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("conversation %d (%s) has no join reply in the capture: it is not driven", id, convs[id].Client))
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("drive: no client of the game joined in the capture (no join reply)")
	}
	first := map[int]int{}
	for _, p := range packets {
		if p.kind == decode.KindJoinRequest {
			if _, ok := first[p.conv]; !ok {
				first[p.conv] = p.n
			}
		}
	}
	for _, id := range ids {
		if _, ok := first[id]; !ok {
			first[id] = sjonN[id] // the join request was lost: the reply's place
		}
	}
	sort.Slice(ids, func(i, j int) bool { return first[ids[i]] < first[ids[j]] })
	byConv := map[int]*Client{}
	for i, id := range ids {
		c := convs[id]
		cl := &Client{N: i + 1, Conv: id, Addr: c.Client, Player: c.Player, Hostname: c.Hostname, Join: sjon[id],
			line: lines[id], states: states[id]}
		rec.Clients = append(rec.Clients, cl)
		byConv[id] = cl
		for k := range cl.states {
			rec.States++
			if rec.End.Less(k) {
				rec.End = k
			}
		}
	}
	for _, p := range packets {
		cl := byConv[p.conv]
		if cl == nil {
			continue
		}
		if p.ok && cl.Last.Less(p.at) {
			cl.Last = p.at
		}
		a := &Action{Client: cl.N, N: p.n, At: p.at, Ordered: p.at, Payload: p.payload}
		switch p.kind {
		case decode.KindJoinRequest:
			if a.N != first[p.conv] {
				continue // a repeated join request changes nothing
			}
			cl.Color = p.color
			a.Kind, a.At = Join, cl.Join
			if cl.Join.Less(a.Ordered) {
				a.Ordered = cl.Join // the previous game's frames: the server restarted
			}
		case decode.KindInput:
			a.Kind, a.Move, a.Frame = Input, p.move, p.frame
		case decode.KindFileRequest:
			a.Kind, a.Check = File, Unchecked
		default:
			continue
		}
		if !p.ok && a.Kind != Join {
			a.Check, a.Reason = Uncertain, "no state had been sent before it"
		}
		rec.Actions = append(rec.Actions, a)
	}
	for _, cl := range rec.Clients {
		rec.joinFromReply(cl, convs[cl.Conv])
	}
	if len(rec.Clients) > 0 {
		if sch := schema.ForVersion(rec.Version.String(), rec.stateSize(), optSchema(opt.Schema)...); sch != nil {
			rec.Schema = sch
		}
	}
	rec.check()
	return rec, nil
}

// joinFromReply makes the join request of a client whose request is not in
// the capture from its join reply: the color it was given, its host name.
func (r *Recording) joinFromReply(cl *Client, conv *session.Conversation) {
	for _, a := range r.Actions {
		if a.Client == cl.N && a.Kind == Join {
			return
		}
	}
	cl.Color = conv.Color
	p := decode.MustNewKind(r.Version, decode.KindJoinRequest).Set("color", int64(conv.Color)).SetBytes("hostname", []byte(conv.Hostname))
	if p.HasField("name") {
		p.SetBytes("name", []byte(conv.Name))
	}
	a := &Action{Client: cl.N, Kind: Join, At: cl.Join, Ordered: cl.Join, Payload: decode.Encode(nil, p),
		Check: Uncertain, Reason: "the join request is not in the capture: made from the join reply"}
	i := 0
	for i < len(r.Actions) && !cl.Join.Less(r.Actions[i].Ordered) {
		i++
	}
	r.Actions = slices.Insert(r.Actions, i, a)
}

func optSchema(s *schema.Schema) []*schema.Schema {
	if s == nil {
		return nil
	}
	return []*schema.Schema{s}
}

func cstring(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// stateSize is the size of the recorded states (the player regions were
// kept through a schema of that size).
func (r *Recording) stateSize() int {
	for _, c := range r.Clients {
		es := r.eng.Entries(nil, c.line, 0, 1)
		if len(es) > 0 && es[0].Size > 0 {
			return int(es[0].Size)
		}
	}
	return 0
}

// Close releases the engine's temporary files.
func (r *Recording) Close() error { return r.eng.Close() }
