// Package gameserver is a game server for tests: it plays the netgame of
// the rewind versions (modern and after, as decode describes each; the
// version is an option) the way the game's server does, on the synthetic world of package
// synth, so that a schedule of joins and inputs gives a known sequence of
// states. It keeps the game's timing rules: one frame every 25 ms (40
// frames a second; tests may run it faster), inputs read at the start of a
// frame, states sent as provisional difs (dst = frame + 1) to every joined
// client against the newest of the last 8 states that client acknowledged,
// an input that arrives after its frame entered at that frame with the
// game rewound and simulated again, and for a remote-control client
// (cjrc) an snfo with the server's frame number after every frame.
//
// Game is the server's logic without a network or a clock; Server runs it
// over UDP in real time and Record runs it in simulated time with scripted
// clients to make a recording.
package gameserver

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"net/netip"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
	"github.com/pmdump/pmdump/synth"
)

// Rules of the game's server.
const (
	// MaxClients is how many players a server takes (the server is player 0).
	MaxClients = 7
	// RewindFrames is how many frames back a late input can still be
	// entered; an older one is entered at the oldest frame kept.
	RewindFrames = 200
	// FileResend is how many frames the server waits for an sfak before it
	// sends a file again, at most FileTries times in all.
	FileResend = 10
	// FileTries bounds the sends of one file.
	FileTries = 4
	// LevelDoneFrames is how long the level-done phase lasts, and
	// NextLevel the level it leads to (as synth's server plays them).
	LevelDoneFrames = 20
	NextLevel       = 64
)

// Rule is how the server enters an input.
type Rule uint8

const (
	// AtFrame is the game's rule: an input is entered at its own frame,
	// later if that is still to come, or at once by going back to it and
	// simulating the frames since again.
	AtFrame Rule = iota
	// AtRead is the rule of the server of synth's generator: an input
	// takes effect in the frame the server reads it in, and one for a
	// frame before the previous one counts as late (late_cdats). With
	// it the server plays a game synth.Generate recorded (modern era, no
	// level change) again.
	AtRead
)

// Sender puts a datagram on the wire to a client endpoint (from the server
// socket that talks to it).
type Sender func(to netip.AddrPort, payload []byte)

// event is something that happens to the world at the start of a frame.
type event struct {
	join   bool
	late   bool // AtRead: count a late input
	player int
	color  int32
	move   byte
}

type transfer struct {
	id      int32
	pieces  [][]byte
	acked   bool
	tries   int
	nextTry int32
}

type client struct {
	addr   netip.AddrPort
	rc     bool // a remote-control client: snfo, no player
	player int  // 0 until joined
	color  int32
	bases  statedif.Bases[[]byte] // the last states sent, as bases
	files  []*transfer
	last   int32 // frame of the last datagram received
}

// Game is the server's logic: Receive hands it a datagram that arrived
// during the current frame, Step runs the frame. It is not safe for
// concurrent use.
type Game struct {
	v       decode.Version
	send    Sender
	rule    Rule
	sim     *synth.Sim // the world at the start of the current frame
	hist    map[int32]*synth.Sim
	events  map[int32][]event
	clients map[netip.AddrPort]*client
	order   []*client
	slsn    uint8
	nextID  int32
	comp    statedif.Compressor
	// level change: the frame the level-done phase starts in (0: none),
	// and the frame the next level starts in once it has
	doneAt, changeAt int32
	// Rewinds counts the late inputs that made the server simulate
	// frames again.
	Rewinds int
}

// ChangeLevel makes the level-done phase start in frame at of the first
// level, and the next level (64, with the next level sequence) start
// LevelDoneFrames later, as synth's server does at its Config.LevelChange.
func (g *Game) ChangeLevel(at int32) { g.doneAt = at }

// levelChange runs the level change in the current frame when it is due.
func (g *Game) levelChange() {
	switch now := g.Frame(); {
	case g.doneAt > 0 && g.changeAt == 0 && now >= g.doneAt:
		g.changeAt = now + LevelDoneFrames
		g.sim.BeginLevelDone(LevelDoneFrames, g.changeAt, NextLevel)
	case g.changeAt > 0 && now >= g.changeAt:
		g.changeAt, g.doneAt = -1, 0
		g.slsn++
		g.sim.StartLevel(NextLevel, g.slsn)
		// Frames start again: the old level's states are no bases and
		// no rewind goes back into it.
		clear(g.hist)
		clear(g.events)
		for _, c := range g.order {
			c.bases.Reset()
		}
	}
}

// NewGame returns the server of a new game of version v (modern when
// VersionUnknown) on level 1 at frame 0; seed picks the level (the level of
// synth.Generate's server for the same seed), rule how inputs are entered.
func NewGame(v decode.Version, seed int64, rule Rule, send Sender) *Game {
	if !v.Known() {
		v = decode.Modern
	}
	return &Game{
		v:       v,
		send:    send,
		rule:    rule,
		sim:     synth.NewSim(v, seed),
		hist:    map[int32]*synth.Sim{},
		events:  map[int32][]event{},
		clients: map[netip.AddrPort]*client{},
		nextID:  0x1234,
	}
}

// Frame is the current server frame: the frame whose inputs are being
// read; Step makes the state of Frame()+1.
func (g *Game) Frame() int32 { return g.sim.Frame() }

// State is the newest state (of frame Frame()).
func (g *Game) State() []byte { return g.sim.State() }

func encode(p *decode.Packet) []byte { return decode.Encode(nil, p) }

// levelSeq is the level sequence of a client's input or acknowledgement,
// in the versions that carry it.
var levelSeq = decode.MustRoleRef(decode.RoleLevelSeq, "cdat", "stak")

// saved is the save result of a file the server saves and sends.
var saved = func() int64 {
	v, _ := decode.SaveResults.Value("saved")
	return v
}()

// packet is an empty packet of kind k of the game's version.
func (g *Game) packet(k decode.Kind) *decode.Packet { return decode.MustNewKind(g.v, k) }

// Version is the game's wire version.
func (g *Game) Version() decode.Version { return g.v }

// remote reports whether a remote-control client has joined.
func (g *Game) remote() bool {
	for _, c := range g.order {
		if c.rc {
			return true
		}
	}
	return false
}

// Hello registers a client endpoint after its 1234 (the transport answers
// with 5678 from the client's own server socket), or, in the versions
// without a handshake, when its first join request comes.
func (g *Game) Hello(from netip.AddrPort) {
	if g.clients[from] == nil {
		c := &client{addr: from, last: g.Frame()}
		g.clients[from] = c
		g.order = append(g.order, c)
	}
}

// Receive handles one datagram from a client endpoint, read in the
// current frame.
func (g *Game) Receive(from netip.AddrPort, payload []byte) {
	k := decode.KindOf(payload)
	if g.clients[from] == nil && !g.v.Has(decode.KindHandshake) && (k == decode.KindJoinRequest || k == decode.KindRemoteJoin) {
		g.Hello(from)
	}
	c := g.clients[from]
	if c == nil || len(payload) < 4 {
		return
	}
	c.last = g.Frame()
	var p decode.Packet
	if err := decode.Decode(&p, payload, g.v); err != nil || p.Layout == nil {
		return
	}
	if seq, ok := levelSeq.Int(&p); ok && (k == decode.KindInput || k == decode.KindDifAck) && seq != int64(g.slsn) {
		return // the server drops a cdat or stak of another level sequence
	}
	switch k {
	case decode.KindJoinRequest:
		g.join(c, int32(p.Int("color")))
	case decode.KindRemoteJoin:
		c.rc = true
		g.send(c.addr, encode(g.packet(decode.KindRemoteJoinReply).SetFloat("value", 0)))
	case decode.KindInput:
		if c.player > 0 {
			g.input(c.player, int32(p.Int("frame")), byte(p.Int("move")))
		}
	case decode.KindDifAck:
		if c.player > 0 {
			c.bases.Ack(int32(p.Int("ack_frame")))
		}
	case decode.KindProbe:
		if c.player > 0 || c.rc {
			t1 := float64(g.Frame()) * synth.FrameTime.Seconds()
			g.send(c.addr, encode(g.packet(decode.KindProbeReply).SetFloat("t0", p.Values[p.Layout.Field("t0")].Float).SetFloat("t1", t1)))
		}
	case decode.KindFileRequest:
		if c.player > 0 {
			if g.v.Has(decode.KindSaveResult) {
				g.send(c.addr, encode(g.packet(decode.KindSaveResult).Set("result", saved)))
			}
			g.sendFile()
		}
	case decode.KindFileAck:
		id := int32(p.Int("id"))
		for _, t := range c.files {
			if t.id == id {
				t.acked = true
			}
		}
	}
}

// join gives the client the lowest free player number and its color (the
// next one that no other client has, among 1..15) and enters it in the
// game at this frame.
func (g *Game) join(c *client, color int32) {
	if c.player == 0 {
		used := map[int]bool{}
		taken := map[int32]bool{}
		for _, o := range g.order {
			if o.player > 0 {
				used[o.player], taken[o.color] = true, true
			}
		}
		p := 99
		for n := 1; n <= MaxClients; n++ {
			if !used[n] {
				p = n
				break
			}
		}
		if p == 99 {
			g.send(c.addr, encode(g.packet(decode.KindJoinReply).Set("level", int64(g.sim.Level())).Set("frame", int64(g.joinFrame())).Set("player", 99)))
			return
		}
		for taken[color] || color < 1 || color > 15 {
			color = color%15 + 1
		}
		c.player, c.color = p, color
		g.enter(g.Frame(), event{join: true, player: p, color: color})
	}
	g.send(c.addr, encode(g.packet(decode.KindJoinReply).Set("level", int64(g.sim.Level())).Set("frame", int64(g.joinFrame())).
		Set("player", int64(c.player)).Set("color", int64(c.color)).Set("slsn", int64(g.slsn))))
}

// joinFrame is the frame a join reply names: the versions that handle a
// join on arrival, between frames, name the frame that ran last (the
// join takes effect in the next, this one).
func (g *Game) joinFrame() int32 {
	if info := g.v.Info(); info != nil && info.JoinOnArrival {
		return g.Frame() - 1
	}
	return g.Frame()
}

// input enters a control change as the rule says: at its frame (now or
// later as it says, or in the past, and then the game goes back to that
// frame and simulates it again up to now), or now.
func (g *Game) input(player int, frame int32, move byte) {
	if g.rule == AtRead {
		now := g.Frame()
		g.events[now] = append(g.events[now], event{player: player, move: move, late: frame < now-1})
		return
	}
	g.enter(frame, event{player: player, move: move})
}

func (g *Game) enter(frame int32, ev event) {
	now := g.Frame()
	if frame >= now {
		g.events[frame] = append(g.events[frame], ev)
		return
	}
	frame = max(frame, now-RewindFrames, 0)
	if g.hist[frame] == nil { // not kept (the level started later)
		for frame < now && g.hist[frame] == nil {
			frame++
		}
		if frame == now {
			g.events[now] = append(g.events[now], ev)
			return
		}
	}
	g.events[frame] = append(g.events[frame], ev)
	g.Rewinds++
	sim := g.hist[frame].Clone()
	for f := frame; f < now; f++ {
		g.hist[f] = sim.Clone()
		apply(sim, g.events[f])
		sim.Step()
	}
	g.sim = sim
}

func apply(sim *synth.Sim, evs []event) {
	for _, ev := range evs {
		switch {
		case ev.join:
			sim.Join(ev.player, ev.color)
		case sim.Active(ev.player):
			sim.SetMove(ev.player, ev.move)
			if ev.late {
				sim.CountLate(ev.player)
			}
		}
	}
}

// Step runs the current frame: the inputs entered for it take effect, the
// world moves on one frame, every joined client gets the new state as a
// dif and every remote-control client an snfo of the frame run.
func (g *Game) Step() error {
	now := g.Frame()
	g.hist[now] = g.sim.Clone()
	delete(g.hist, now-RewindFrames-1)
	delete(g.events, now-RewindFrames-1)
	apply(g.sim, g.events[now])
	g.levelChange()
	now = g.Frame()
	g.sim.Step()
	for _, c := range g.order {
		if c.player > 0 {
			if err := g.sendState(c); err != nil {
				return err
			}
		}
	}
	g.resendFiles()
	// The frame is over: the clock last.
	for _, c := range g.order {
		if c.rc {
			if err := g.sendInfo(c, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendState sends the client the newest state as a dif against its newest
// acknowledged state among the last ones sent, or against zeros.
func (g *Game) sendState(c *client) error {
	st := g.sim.State()
	dst := g.Frame()
	// As synth's server: the base is taken before the new state is kept.
	src, base, _ := c.bases.Base() // src 0 and no base: zeros
	z, err := g.comp.Compress(base, st)
	if err != nil {
		return err
	}
	h := c.bases.Add(dst)
	*h = append((*h)[:0], st...)
	return statedif.EachPiece(g.packet(decode.KindDifPiece), statedif.Dif{SLSN: int32(g.slsn), Src: src, Dst: dst, Level: g.sim.Level()}, z, func(_ int, p *decode.Packet) error {
		g.send(c.addr, encode(p))
		return nil
	})
}

// sendInfo sends a remote-control client the frame just run and the
// players' part of the state.
func (g *Game) sendInfo(c *client, frame int32) error {
	z, err := g.comp.Deflate(g.sim.State()[:2304])
	if err != nil {
		return err
	}
	n := g.v.Pieces(len(z))
	p := g.packet(decode.KindRemoteInfo).Set("frame", int64(frame)).Set("count", int64(n))
	for seq := range n {
		p.Set("seq", int64(seq)).Set("start", int64(seq*g.v.PieceSize())).SetBytes("data", g.v.Piece(z, seq))
		g.send(c.addr, encode(p))
	}
	return nil
}

// sendFile sends every joined client the game's moves file, as the game
// does on a crfl: zlib (default level) of a 128-byte header holding the
// file name and the file, in sfil pieces.
func (g *Game) sendFile() {
	var body bytes.Buffer
	fmt.Fprintf(&body, "game moves up to frame %d\n", g.Frame())
	var buf bytes.Buffer
	hdr := make([]byte, 128)
	copy(hdr, "savegame/moves.gm")
	zw := zlib.NewWriter(&buf)
	zw.Write(hdr)
	zw.Write(body.Bytes())
	zw.Close()
	z := buf.Bytes()
	for _, c := range g.order {
		if c.player == 0 {
			continue
		}
		g.nextID++
		t := &transfer{id: g.nextID}
		n := g.v.Pieces(len(z))
		p := g.packet(decode.KindFilePiece).Set("id", int64(t.id)).Set("count", int64(n)).Set("file_size", int64(body.Len()))
		for seq := range n {
			p.Set("seq", int64(seq)).Set("start", int64(seq*g.v.PieceSize())).SetBytes("data", g.v.Piece(z, seq))
			t.pieces = append(t.pieces, encode(p))
		}
		c.files = append(c.files, t)
		g.sendTransfer(c, t)
	}
}

func (g *Game) sendTransfer(c *client, t *transfer) {
	t.tries++
	t.nextTry = g.Frame() + FileResend
	for _, b := range t.pieces {
		g.send(c.addr, b)
	}
}

func (g *Game) resendFiles() {
	for _, c := range g.order {
		for _, t := range c.files {
			if !t.acked && t.tries < FileTries && g.Frame() >= t.nextTry {
				g.sendTransfer(c, t)
			}
		}
	}
}
