package synth

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// Client behaviour.
const (
	helloRetry    = 120 * time.Millisecond // 1234 is retried this often
	helloTries    = 5
	controlChange = 0.2       // chance per frame that a player's controls change
	stallChance   = 1.0 / 250 // chance per frame that a client stalls (busy machine)
	stallMin      = 4         // frames
	stallMax      = 16
	legacyLead    = 2 // legacy cdat frame = client frame + control lead frames
	maxPending    = 64
)

type clientPhase uint8

const (
	cIdle clientPhase = iota
	cHello
	cJoin
	cPlaying
)

// pendDif is a dif whose pieces are arriving.
type pendDif struct {
	info *difInfo
	got  [4]uint64
	have int
}

func (p *pendDif) complete() bool { return p.have == p.info.count }

type heldState struct {
	frame int32
	sha   [32]byte
}

type client struct {
	g        *gen
	n        int // client number, 1-based
	addr     netip.AddrPort
	server   netip.AddrPort // where it sends: the listening port, then its own server port
	ib       inbox
	in       []msg
	rng      *rand.Rand
	offset   int64
	phase    clientPhase
	joinAt   int64
	tries    int
	nextTry  int64
	hostname string
	name     string // the player's name (sent in the join request of the versions that send one)
	player   int
	color    int32
	frame    int32
	slsn     uint8
	level    int32
	move     byte
	busy     float64 // chance per frame of not reading the network
	slowAcc  float64 // a slow client's frames owed (see Slow)
	forgotAt int64   // 1 + the time of the last Forget done, 0 before
	stall    int     // frames left in a stall
	missed   int     // frames missed in the current stall
	caughtUp bool    // the last frame ended a stall

	pend        []*pendDif
	held        []heldState // the last statedif.History states applied, oldest first
	applied     bool
	lastApplied int32
	changeAt    int32 // server frame at which the level ends, -1 if none known
	nextLevel   int32
	nextSeen    int // stdf pieces of the next slsn seen while still on this one
	nextDst     int32

	// legacy
	entryPos int32
	sdaks    int
	stdfLate int32
	skipped  int32
	// modern
	clock0   float64
	nextPing int64
	staks    int
	dsync    float64
}

func newClient(g *gen, n int, offset, joinAt int64, r *rand.Rand) *client {
	c := &client{
		g: g, n: n, addr: ClientAddrIn(g.era, n), rng: r, offset: offset, joinAt: joinAt,
		server:   netip.AddrPortFrom(ServerAddr, ListenPort),
		hostname: fmt.Sprintf("lan-pc%d", n),
		name:     fmt.Sprintf("p%d", n),
		color:    int32(1 + r.IntN(15)),
		busy:     0.05 + r.Float64()*0.25,
		clock0:   1 + r.Float64()*2,
		changeAt: -1,
	}
	g.owners[c.addr] = &c.ib
	return c
}

func (c *client) tickOffset() int64 { return c.offset }

func (c *client) tick(now int64) error {
	g := c.g
	switch c.phase {
	case cIdle:
		if now >= c.joinAt {
			if !g.handshake {
				c.phase = cJoin
				return c.join()
			}
			c.phase = cHello
			return c.hello(now)
		}
		return nil
	case cHello, cJoin:
		c.in = c.ib.take(now, c.in)
		for i := range c.in {
			m := &c.in[i]
			switch {
			case c.phase == cPlaying:
				// Packets that came right behind the join reply.
				if err := c.handle(m); err != nil {
					return err
				}
			case m.kind == mHelloBack && c.phase == cHello:
				c.server = m.from
				c.phase = cJoin
				if err := c.join(); err != nil {
					return err
				}
			case m.kind == mJoinBack && c.phase == cJoin:
				c.player, c.frame, c.color, c.level, c.slsn = int(m.a), m.b, m.e, m.d, m.slsn
				c.entryPos = m.c
				c.phase = cPlaying
				c.nextPing = now + int64(time.Second) - int64(c.rng.IntN(300))*int64(time.Millisecond)
			}
		}
		if c.phase == cPlaying {
			return c.apply()
		}
		if c.phase == cHello && now >= c.nextTry && c.tries < helloTries {
			return c.hello(now)
		}
		return nil
	}
	return c.play(now)
}

// join sends the join request, to the server's per-client port after a
// handshake, else straight to its listening port.
func (c *client) join() error {
	p := c.g.kind(decode.KindJoinRequest).Set("color", int64(c.color)).SetBytes("hostname", []byte(c.hostname))
	if p.HasField("name") {
		p.SetBytes("name", []byte(c.name))
	}
	return c.g.send(c.addr, c.server, p, msg{kind: mJoin, a: c.color}, true)
}

// log sends a clog for one netgame log line, in the version whose clients
// send one for every line: of type typ (decode.LogTypes) at the client's
// frame.
func (c *client) log(typ int64, text string) error {
	if !c.g.logs {
		return nil
	}
	p := c.g.kind(decode.KindLog).Set("log_type", typ).Set("sub_type", 0).Set("frame", int64(c.frame)).
		SetFloat("time", widen(c.clock0+seconds(c.g.now))).SetBytes("text", []byte(text))
	return c.g.send(c.addr, c.server, p, msg{kind: mLog}, false)
}

// logType is the number of a log type of decode.LogTypes.
func logType(name string) int64 {
	v, ok := decode.LogTypes.Value(name)
	if !ok {
		panic("synth: no log type " + name)
	}
	return v
}

var (
	logStdfPiece = logType("stdf_pieces")
	logDifApply  = logType("dif_apply")
	logStak      = logType("stak")
	logCdat      = logType("cdat")
)

func (c *client) hello(now int64) error {
	c.tries++
	c.nextTry = now + int64(helloRetry)
	listen := netip.AddrPortFrom(ServerAddr, ListenPort)
	return c.g.send(c.addr, listen, c.g.kind(decode.KindHandshake), msg{kind: mHello}, true)
}

// play is one frame of a joined client. A client that was stalled first
// runs the frames it missed, all at once (their input changes reach the
// server late); then it reads the network, unless it is busy this frame,
// applies the newest dif it can, and runs the frame.
func (c *client) play(now int64) error {
	if c.g.faults {
		c.forgetNow(now)
		if c.slowSkip(now) {
			return nil
		}
	}
	if c.stall > 0 {
		c.stall--
		c.missed++
		return nil
	}
	c.caughtUp = c.missed > 0
	c.skipped += int32(c.missed)
	for ; c.missed > 0; c.missed-- {
		if err := c.runFrame(); err != nil {
			return err
		}
	}
	if c.caughtUp || c.rng.Float64() >= c.busy {
		c.in = c.ib.take(now, c.in)
		for i := range c.in {
			if err := c.handle(&c.in[i]); err != nil {
				return err
			}
		}
		if err := c.apply(); err != nil {
			return err
		}
	}
	if err := c.runFrame(); err != nil {
		return err
	}
	if !c.g.moves && now >= c.nextPing {
		c.nextPing += int64(time.Second)
		t0 := c.clock0 + seconds(now)
		if err := c.g.send(c.addr, c.server, c.g.kind(decode.KindProbe).SetFloat("t0", t0), msg{kind: mPing, f0: t0}, false); err != nil {
			return err
		}
	}
	if c.rng.Float64() < stallChance {
		c.stall = stallMin + c.rng.IntN(stallMax-stallMin+1)
	}
	return nil
}

// runFrame advances the client one frame and sends a cdat if its
// controls change.
func (c *client) runFrame() error {
	c.frame++
	c.checkLevelChange()
	if c.rng.Float64() < controlChange {
		return c.changeControls()
	}
	return nil
}

// chase moves a client that lags behind the server forward to frame f.
func (c *client) chase(f int32) {
	if c.frame < f {
		c.frame = f
	}
}

func (c *client) changeControls() error {
	g := c.g
	mv := byte(c.rng.IntN(64))
	if mv == c.move {
		mv ^= byte(1 << c.rng.IntN(6))
	}
	c.move = mv
	frame := c.frame
	if g.moves {
		frame += legacyLead
	}
	p := g.kind(decode.KindInput).Set("player", int64(c.player)).Set("frame", int64(frame)).Set("move", int64(mv)).
		SetRole(decode.RoleLevelSeq, int64(c.slsn))
	seq := p.Layout.FieldByRole(decode.RoleLevelSeq) >= 0
	if err := g.send(c.addr, c.server, p, msg{kind: mCdat, a: int32(c.player), b: frame, c: int32(mv), slsn: c.slsn, hasSLSN: seq}, false); err != nil {
		return err
	}
	return c.log(logCdat, fmt.Sprintf("tx cdat frame %d move %d", frame, mv))
}

// checkLevelChange follows the server to the next level once the level-done
// phase it saw in a state is over, or, if it missed that phase, once it
// keeps getting pieces of the next level.
func (c *client) checkLevelChange() {
	switch {
	case c.changeAt >= 0 && c.frame > c.changeAt:
		c.frame -= c.changeAt + 1
	case c.nextSeen >= c.g.follow:
		c.frame = c.nextDst
	default:
		return
	}
	c.slsn++
	c.level = c.nextLevel
	c.changeAt, c.nextSeen = -1, 0
	c.pend = c.pend[:0]
	c.held = c.held[:0]
	c.applied, c.lastApplied = false, 0
}

func (c *client) handle(m *msg) error {
	g := c.g
	switch m.kind {
	case mSdat:
		c.chase(m.b - 1)
		c.entryPos = max(c.entryPos, m.c+m.d)
		p := g.kind(decode.KindGameMovesAck).Set("player", int64(c.player)).Set("frame", int64(c.frame)).
			Set("entry_pos", int64(c.entryPos)).Set("stdf_late", int64(c.stdfLate)).Set("frames_skipped", int64(c.skipped))
		if c.sdaks == 0 {
			p.Drop("fps_chase") // the first sdak after the join is the short form
		} else {
			fps := int64(38 + c.rng.IntN(5))
			if c.caughtUp {
				fps = int64(55 + c.rng.IntN(16))
			}
			if s := c.slowFPS(); s > 0 {
				fps = int64(s)
			}
			p.Set("fps_chase", fps)
		}
		c.sdaks++
		return g.send(c.addr, c.server, p, msg{kind: mSdak, a: int32(c.player), b: c.frame, c: c.entryPos}, false)
	case mPong:
		return g.send(c.addr, c.server, g.kind(decode.KindProbeEcho).SetFloat("t1", m.f1), msg{kind: mPang, f1: m.f1}, false)
	case mStdf:
		c.piece(m.dif, m.seq)
		return c.log(logStdfPiece, fmt.Sprintf("rx stdf piece %d of %d, dif %d to %d", m.seq+1, m.dif.count, m.dif.src, m.dif.dst))
	}
	return nil
}

// piece files one stdf piece; pieces of another level are ignored.
func (c *client) piece(d *difInfo, seq uint8) {
	if d.slsn != c.slsn {
		if d.slsn == c.slsn+1 {
			c.nextSeen++
			c.nextDst = d.dst
			c.nextLevel = d.level
		}
		return
	}
	if c.applied && d.dst <= c.lastApplied {
		return
	}
	var p *pendDif
	for _, q := range c.pend {
		if q.info == d {
			p = q
			break
		}
	}
	if p == nil {
		if len(c.pend) >= maxPending {
			c.pend = append(c.pend[:0], c.pend[1:]...)
		}
		p = &pendDif{info: d}
		c.pend = append(c.pend, p)
	}
	w, b := seq/64, uint64(1)<<(seq%64)
	if p.got[w]&b == 0 {
		p.got[w] |= b
		p.have++
	}
}

func (c *client) holds(frame int32) bool {
	for _, h := range c.held {
		if h.frame == frame {
			return true
		}
	}
	return false
}

// apply applies the newest complete dif whose base the client holds. If
// complete difs are waiting but none has a base it holds, it re-acks its
// newest state (or 0) so the server picks another base.
func (c *client) apply() error {
	var best *pendDif
	missing := false
	for _, p := range c.pend {
		if !p.complete() || (c.applied && p.info.dst <= c.lastApplied) {
			continue
		}
		d := p.info
		if d.src != 0 && !c.holds(d.src) {
			missing = true
			continue
		}
		if best == nil || d.dst > best.info.dst || d.dst == best.info.dst && d.src > best.info.src {
			best = p
		}
	}
	if best == nil {
		if !missing {
			return nil
		}
		// Drop the difs that can never be applied and ask for another base.
		keep := c.pend[:0]
		for _, p := range c.pend {
			if !p.complete() {
				keep = append(keep, p)
			}
		}
		c.pend = keep
		ack := int32(0)
		if n := len(c.held); n > 0 {
			ack = c.held[n-1].frame
		}
		c.g.sum.ReAcks++
		return c.stak(ack, ack, false)
	}
	d := best.info
	if !c.g.moves {
		c.chase(d.dst - 1)
	}
	c.held = append(c.held, heldState{d.dst, d.sha})
	if len(c.held) > statedif.History {
		c.held = append(c.held[:0], c.held[1:]...)
	}
	c.applied, c.lastApplied = true, d.dst
	keep := c.pend[:0]
	for _, p := range c.pend {
		if p.info.dst > d.dst {
			keep = append(keep, p)
		}
	}
	c.pend = keep
	if d.doneAt >= 0 {
		c.changeAt, c.nextLevel = d.doneAt, d.doneNext
	}
	if c.g.moves && c.frame > d.dst+1 {
		c.stdfLate++
	}
	c.g.sum.Applied++
	if s := c.g.sink; s != nil {
		row := ClientRow{Player: c.player, Dst: d.dst, Src: d.src, SHA256: d.sha, SLSN: int(d.slsn), Level: int(d.level)}
		if err := s.ClientApplied(row); err != nil {
			return err
		}
	}
	if err := c.log(logDifApply, fmt.Sprintf("dif %d to %d applied", d.src, d.dst)); err != nil {
		return err
	}
	return c.stak(d.dst, d.dst, true)
}

// stak acknowledges frame ack; dst is the dif's dst (for the modern rewind
// field) and applied tells a real apply from a re-ack.
func (c *client) stak(ack, dst int32, applied bool) error {
	g := c.g
	m := msg{kind: mStak, a: int32(c.player), b: ack}
	if g.moves {
		corr := int64(0)
		if applied && c.rng.IntN(3) == 0 {
			corr = 1 // the client's own simulation differed and was overwritten
		}
		p := g.kind(decode.KindDifAck).Set("player", int64(c.player)).Set("corr", corr).Set("frame", int64(ack))
		return g.send(c.addr, c.server, p, m, false)
	}
	chase := 0.0
	if c.staks > 0 {
		chase = widen(40 + c.rng.NormFloat64()*0.8)
		if c.caughtUp {
			chase = widen(58 + c.rng.Float64()*12)
		}
		if s := c.slowFPS(); s > 0 {
			chase = widen(s + c.rng.NormFloat64()*0.5)
		}
		c.dsync = 0.85*c.dsync + 0.15*(0.01+c.rng.Float64()*0.03)
	}
	c.staks++
	local, remote := 0.0, 0.0
	if c.rng.IntN(10) < 3 {
		local = widen(c.rng.Float64() * 6)
	}
	if g.cfg.Players > 1 && c.rng.IntN(10) < 4 {
		remote = widen(c.rng.Float64() * 4)
	}
	p := g.kind(decode.KindDifAck).Set("player", int64(c.player)).Set("ack_frame", int64(ack)).
		Set("client_frame", int64(c.frame)).SetFloat("chase_fps", chase).SetFloat("dsync", c.dsync).
		SetFloat("local_correction", local).
		SetFloat("remote_correction", remote).SetFloat("cpu", widen(8+c.rng.Float64()*25))
	rewind := int64(c.frame - dst)
	if p.Layout.Fields[p.Layout.Field("rewind")].Type == decode.S8 {
		rewind = int64(int8(rewind)) // the low 8 bits only
	}
	p.Set("rewind", rewind)
	if p.Layout.FieldByRole(decode.RoleLevelSeq) >= 0 {
		p.SetRole(decode.RoleLevelSeq, int64(c.slsn))
		m.slsn, m.hasSLSN = c.slsn, true
	}
	if err := g.send(c.addr, c.server, p, m, false); err != nil {
		return err
	}
	return c.log(logStak, fmt.Sprintf("tx stak ack %d frame %d", ack, c.frame))
}
