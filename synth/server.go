package synth

import (
	"bytes"
	"fmt"
	"net/netip"
	"runtime"
	"sync"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// Game settings of the simulated server.
const (
	legacyLevel     = 4  // the game-moves server plays level 4, as in the real captures
	modernLevel     = 1  // the rewind servers start on the overworld
	modernNextLevel = 64 // and walk into level 64
	maxSdatEntries  = 100
	levelDoneFrames = 20 // frames of the level-done phase before a level change
	// The server drops a client it got no acknowledgement from for the
	// version's drop rule (decode.DropRule: its frames, after its frame of
	// the level; a join counts as its grace ahead), dropLead frames later,
	// as the game's server_proc_player_drop does.
	dropLead = 4
)

// gameMove is one entry of the legacy game-move list.
type gameMove struct {
	frame       int32
	typ, d1, d2 int32
}

// sclient is the server's view of one client.
type sclient struct {
	player int
	addr   netip.AddrPort // the client's endpoint
	local  netip.AddrPort // the server's per-client endpoint
	joined bool
	color  int32
	// The last states sent, as bases of the next dif (those of the
	// current level sequence).
	bases       statedif.Bases[*snapshot]
	entryAck    int // legacy: the next game-move entry the client needs
	lastSdat    int32
	clientFrame int32
	late        int32
	// the server frame of the last acknowledgement (modern stak, legacy
	// sdak), and when a drop for want of them takes effect (-1: none)
	lastStak int32
	dropAt   int32
}

type server struct {
	g       *gen
	addr    netip.AddrPort
	ib      inbox
	in      []msg
	world   *world
	slsn    uint8
	clients []*sclient // in order of their 1234
	byAddr  map[netip.AddrPort]*sclient
	ports   map[uint16]bool
	snaps   *snapStore
	comp    statedif.Compressor
	comps   []*statedif.Compressor // for prepareDifs, one per worker
	// per-frame cache of compressed difs by src: clients with the same base
	// share one compression.
	cacheKey uint64
	cache    map[int32][]byte
	arena    []byte
	moves    []gameMove // legacy game-move list from index movesBase
	base     int
	rr       int
	clock0   float64 // the server program's clock at t = 0
	// modern level change
	changeTime  int64
	doneStarted bool
	changed     bool
	changeFrame int32
}

func newServer(g *gen) (*server, error) {
	lay := layoutFor(g.era)
	wrng := rng(g.cfg.Seed, 4)
	level := int32(modernLevel)
	if g.moves {
		level = legacyLevel
	}
	s := &server{
		g:      g,
		addr:   netip.AddrPortFrom(ServerAddr, ListenPort),
		world:  newWorld(lay, wrng, level),
		byAddr: map[netip.AddrPort]*sclient{},
		ports:  map[uint16]bool{},
		snaps:  newSnapStore(lay.size),
		cache:  map[int32][]byte{},
		clock0: 3 + wrng.Float64()*4,
	}
	s.changeTime = -1
	if !g.moves && g.cfg.LevelChange >= 0 {
		s.changeTime = int64(g.cfg.LevelChange)
		if s.changeTime == 0 {
			s.changeTime = int64(g.cfg.Duration) / 2
		}
	}
	// The server's own player 0 stands at its spawn point.
	s.world.join(0, 8, 3)
	if g.moves {
		s.moves = append(s.moves, gameMove{0, 1, 0, 8})
	}
	g.owners[s.addr] = &s.ib
	return s, nil
}

func (s *server) tickOffset() int64 { return 0 }

func (s *server) frame() int32 { return s.world.frame }

func (s *server) tick(now int64) error {
	g := s.g
	s.in = s.ib.take(now, s.in)
	for i := range s.in {
		if err := s.handle(&s.in[i]); err != nil {
			return err
		}
	}
	if !g.moves && s.changeTime >= 0 {
		s.levelChange(now)
	}
	s.world.step()
	g.sum.Frames++
	s.dropSilent()
	if g.moves {
		return s.sendLegacy()
	}
	if err := s.prepareDifs(); err != nil {
		return err
	}
	for _, c := range s.clients {
		if c.joined {
			if err := s.sendDif(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// levelChange runs the level change of a rewind version: a level-done phase, then a new
// level with slsn + 1 and frame numbers restarting at 0.
func (s *server) levelChange(now int64) {
	if !s.doneStarted && now >= s.changeTime-int64(levelDoneFrames)*int64(FrameTime) {
		s.doneStarted = true
		s.changeFrame = s.frame() + levelDoneFrames
		s.world.beginLevelDone(levelDoneFrames, s.changeFrame, modernNextLevel)
	}
	if s.doneStarted && !s.changed && s.frame() >= s.changeFrame {
		s.changed = true
		s.slsn++
		s.world.slsn = s.slsn
		old := s.frame()
		s.world.startLevel(modernNextLevel)
		for _, c := range s.clients {
			// The frames start again: keep the time since the last stak.
			c.lastStak -= old - s.frame()
			if c.dropAt >= 0 {
				c.dropAt -= old - s.frame()
			}
			for i, h := range c.bases.Kept() {
				s.snaps.unref(h.Value)
				c.bases.Kept()[i].Value = nil
			}
			c.bases.Reset()
		}
		s.g.sum.LevelChanges++
	}
}

func (s *server) handle(m *msg) error {
	g := s.g
	switch m.kind {
	case mHello:
		c := s.byAddr[m.from]
		if c == nil {
			port := uint16(0)
			for port == 0 || s.ports[port] {
				port = uint16(32768 + g.netRNG.IntN(61000-32768))
			}
			s.ports[port] = true
			c = &sclient{addr: m.from, local: netip.AddrPortFrom(ServerAddr, port), lastSdat: -100}
			s.byAddr[m.from] = c
			s.clients = append(s.clients, c)
			g.owners[c.local] = &s.ib
		}
		return g.send(c.local, c.addr, g.packet("5678"), msg{kind: mHelloBack}, true)
	case mJoin:
		c := s.byAddr[m.from]
		if c == nil && !g.handshake {
			// No handshake: the client's cjon comes straight to the
			// server's one socket, which answers it and sends it all.
			c = &sclient{addr: m.from, local: s.addr, lastSdat: -100}
			s.byAddr[m.from] = c
			s.clients = append(s.clients, c)
		}
		if c == nil {
			return nil
		}
		if !c.joined {
			s.join(c, m.a)
		}
		return s.sendJoin(c)
	}
	c := s.byAddr[m.from]
	if c == nil || !c.joined {
		return nil
	}
	if m.hasSLSN && m.slsn != s.slsn {
		return nil // the server drops a cdat or stak of another level sequence
	}
	switch m.kind {
	case mCdat:
		return s.cdat(c, m.b, byte(m.c))
	case mSdak:
		c.entryAck = max(c.entryAck, int(m.c))
		c.clientFrame = m.b
		c.lastStak = s.frame() // the legacy server drops on sdaks
		s.trimMoves()
	case mStak:
		c.bases.Ack(m.b)
		c.lastStak = s.frame()
	case mPing:
		p := g.kind(decode.KindProbeReply).SetFloat("t0", m.f0).SetFloat("t1", s.clock0+seconds(g.now))
		return g.send(c.local, c.addr, p, msg{kind: mPong, f0: m.f0, f1: s.clock0 + seconds(g.now)}, false)
	}
	return nil
}

// join gives the client the next free player number and a color.
func (s *server) join(c *sclient, color int32) {
	taken := map[int32]bool{}
	used := map[int]bool{0: true}
	for _, o := range s.clients {
		if o.joined {
			taken[o.color] = true
			used[o.player] = true
		}
	}
	for p := 1; p <= MaxClients; p++ {
		if !used[p] {
			c.player = p
			break
		}
	}
	for taken[color] || color < 1 || color > 15 {
		color = color%15 + 1
	}
	c.joined, c.color = true, color
	c.lastStak, c.dropAt = s.frame()+int32(s.g.era.Drop().Grace), -1
	s.world.join(c.player, color, 2)
	if s.g.moves {
		c.entryAck = s.base + len(s.moves)
		s.moves = append(s.moves, gameMove{s.frame(), 1, int32(c.player), color})
	}
}

func (s *server) sendJoin(c *sclient) error {
	g := s.g
	m := msg{kind: mJoinBack, a: int32(c.player), b: s.frame(), c: int32(c.entryAck), d: s.world.level, e: c.color, slsn: s.slsn}
	if !g.moves {
		// The versions that handle a join on arrival, between frames,
		// name the frame that ran last; it takes effect in this one.
		f := s.frame()
		if g.era.Info().JoinOnArrival {
			f--
		}
		p := g.kind(decode.KindJoinReply).Set("level", int64(s.world.level)).Set("frame", int64(f)).
			Set("player", int64(c.player)).Set("color", int64(c.color)).Set("slsn", int64(s.slsn))
		return g.send(c.local, c.addr, p, m, true)
	}
	p := g.packet("SJON").Set("level", int64(s.world.level)).Set("frame", int64(s.frame())).
		Set("entry_pos", int64(c.entryAck)).Set("fps", 40).Set("player", int64(c.player)).
		Set("color", int64(c.color)).Set("dm_bullets", 0).Set("dm_damage", 1005).Set("suicide_bullets", 0)
	if err := g.send(c.local, c.addr, p, m, true); err != nil {
		return err
	}
	// The legacy server follows the join with a sync and the first state.
	if err := s.sendSdat(c); err != nil {
		return err
	}
	return s.sendDif(c)
}

func (s *server) cdat(c *sclient, frame int32, move byte) error {
	g := s.g
	pl := &s.world.players[c.player]
	if !g.moves {
		// A rewind server rewinds and replays, so late input still counts.
		if frame < s.frame()-1 {
			pl.lateCdats++
		}
		pl.move = move
		return nil
	}
	if frame <= s.frame() {
		// Too late for the legacy server: dropped, and the client is told.
		c.late++
		csync := int64(frame - s.frame() - 1)
		p := g.packet("serr").Set("err_type", 1).Set("frame", int64(s.frame()+1)).
			Set("c_sync", int64(decode.EncodeNegative(csync))).Set("late_total", int64(c.late))
		return g.send(c.local, c.addr, p, msg{kind: mSerr, b: s.frame() + 1}, false)
	}
	s.moves = append(s.moves, gameMove{frame, 5, int32(c.player), int32(move)})
	q := append(pl.queue, timedMove{frame, move})
	for i := len(q) - 1; i > 0 && q[i-1].frame > q[i].frame; i-- {
		q[i-1], q[i] = q[i], q[i-1]
	}
	pl.queue = q
	return nil
}

// trimMoves forgets the game moves every client has acknowledged.
func (s *server) trimMoves() {
	lo := s.base + len(s.moves)
	for _, c := range s.clients {
		if c.joined {
			lo = min(lo, c.entryAck)
		}
	}
	if n := lo - s.base; n > 256 {
		s.moves = append(s.moves[:0], s.moves[n:]...)
		s.base = lo
	}
}

// sendLegacy sends a game-moves server's per-frame packets: sdat where
// needed and, every DifEvery frames, one dif to the next client in turn.
func (s *server) sendLegacy() error {
	var joined []*sclient
	for _, c := range s.clients {
		if !c.joined {
			continue
		}
		joined = append(joined, c)
		pending := s.base + len(s.moves) - c.entryAck
		interval := int32(2)
		if c.clientFrame >= s.frame()-2 {
			interval = 20 // in sync: only an occasional sync sdat
		}
		if pending > 0 || s.frame()-c.lastSdat >= interval {
			if err := s.sendSdat(c); err != nil {
				return err
			}
		}
	}
	if len(joined) > 0 && s.frame()%int32(s.g.era.Info().DifEvery) == 0 {
		s.rr = (s.rr + 1) % len(joined)
		return s.sendDif(joined[s.rr])
	}
	return nil
}

func (s *server) sendSdat(c *sclient) error {
	g := s.g
	start := max(c.entryAck, s.base)
	n := min(s.base+len(s.moves)-start, maxSdatEntries)
	p := g.packet("sdat").Set("frame", int64(s.frame())).Set("start_entry", int64(start)).Set("n", 0)
	for _, mv := range s.moves[start-s.base : start-s.base+n] {
		p.AddEntry(int64(mv.frame), int64(mv.typ), int64(mv.d1), int64(mv.d2))
	}
	c.lastSdat = s.frame()
	return g.send(c.local, c.addr, p, msg{kind: mSdat, b: s.frame(), c: int32(start), d: int32(n)}, false)
}

// difBase returns the state the next dif to c is built on: its last
// acknowledged state if the server still has it, else nil (zeros, src 0).
// Unlike the game (and serve), synth takes the base before it keeps the
// new state, so the base may be any of the last statedif.History states
// sent before it.
func (s *server) difBase(c *sclient) (int32, *snapshot) {
	src, b, ok := c.bases.Base()
	if !ok {
		return 0, nil
	}
	return src, b
}

// prepareDifs compresses, in parallel, the difs of this frame for every
// distinct base the joined clients need, so that sendDif finds them in the
// cache. The result does not depend on the scheduling.
func (s *server) prepareDifs() error {
	s.resetCache()
	type job struct {
		src  int32
		base []byte
		out  []byte
		err  error
	}
	var jobs []*job
	seen := map[int32]bool{}
	for _, c := range s.clients {
		if !c.joined {
			continue
		}
		src, b := s.difBase(c)
		if seen[src] {
			continue
		}
		seen[src] = true
		j := &job{src: src}
		if b != nil {
			j.base = b.data
		}
		jobs = append(jobs, j)
	}
	if len(jobs) < 2 {
		return nil // sendDif compresses a single one itself
	}
	for len(s.comps) < min(len(jobs), runtime.GOMAXPROCS(0)) {
		s.comps = append(s.comps, &statedif.Compressor{})
	}
	var wg sync.WaitGroup
	next := make(chan *job, len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)
	for _, comp := range s.comps[:min(len(jobs), len(s.comps))] {
		wg.Go(func() {
			for j := range next {
				out, err := comp.Compress(j.base, s.world.st)
				j.out, j.err = bytes.Clone(out), err
			}
		})
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return j.err
		}
		s.cache[j.src] = j.out
	}
	return nil
}

// resetCache empties the dif cache when the frame changes.
func (s *server) resetCache() {
	if key := snapKey(s.slsn, s.frame()); s.cacheKey != key {
		s.cacheKey = key
		clear(s.cache)
		s.arena = s.arena[:0]
	}
}

// sendDif sends the client one dif of the current state, against its last
// acknowledged state if the server still has it, else against zeros.
func (s *server) sendDif(c *sclient) error {
	g := s.g
	dst := s.frame()
	key := snapKey(s.slsn, dst)
	src, base := s.difBase(c)
	s.resetCache()
	z, ok := s.cache[src]
	if !ok {
		var b []byte
		if base != nil {
			b = base.data
		}
		out, err := s.comp.Compress(b, s.world.st)
		if err != nil {
			return err
		}
		if cap(s.arena)-len(s.arena) < len(out) {
			s.arena = make([]byte, 0, max(2*cap(s.arena), len(out), 64<<10))
		}
		n := len(s.arena)
		s.arena = append(s.arena, out...)
		z = s.arena[n:len(s.arena):len(s.arena)]
		s.cache[src] = z
	}
	snap := s.snaps.put(key, s.world.st)
	if h := c.bases.Add(dst); *h != snap {
		if *h != nil {
			s.snaps.unref(*h)
		}
		snap.refs++
		*h = snap
	}
	count := g.era.Pieces(len(z))
	if count > decode.MaxPieces {
		return fmt.Errorf("dif of %d bytes needs %d pieces, more than a dif can have", len(z), count)
	}
	info := &difInfo{src: src, dst: dst, count: count, slsn: s.slsn, level: s.world.level, sha: snap.sha, doneAt: -1}
	if s.world.done {
		info.doneAt, info.doneNext = s.world.doneAt, s.world.doneNext
	}
	g.sum.Difs++
	if src == 0 {
		g.sum.Keyframes++
	}
	if g.sink != nil {
		row := ServerRow{Player: c.player, Src: src, Dst: dst, CompressedSize: len(z), Pieces: count,
			SHA256: snap.sha, SLSN: int(s.slsn), Level: int(s.world.level)}
		if err := g.sink.ServerDif(row); err != nil {
			return err
		}
	}
	return statedif.EachPiece(g.kind(decode.KindDifPiece), statedif.Dif{SLSN: int32(s.slsn), Src: src, Dst: dst, Level: int32(s.world.level)}, z, func(seq int, p *decode.Packet) error {
		return g.send(c.local, c.addr, p, msg{kind: mStdf, dif: info, seq: uint8(seq)}, false)
	})
}
