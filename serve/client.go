package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// client is one peer that shook hands: its socket, and once it has joined,
// its own bases and what it owes in acknowledgements.
type client struct {
	s    *Server
	conn *net.UDPConn
	// shared: conn is the server's one socket (the versions without a
	// handshake), read by Serve and not closed with the client.
	shared bool
	addr   netip.AddrPort
	seq    int // order of its handshake
	ctx    context.Context
	cancel context.CancelFunc
	joined atomic.Bool
	closed atomic.Bool

	mu    sync.Mutex
	shook time.Time // its last 1234
	heard time.Time // its last packet
	// The states it was sent that may be bases of its next dif, all of
	// level sequence st.SentSLSN.
	bases statedif.Bases[[]byte]
	// What it was sent since its last acknowledgement: bytes, and since
	// when.
	owed      int
	owedSince time.Time
	proven    bool // it has acknowledged a state it was sent
	// Its frame from its last sdak (legacy) and when it came; the first
	// game-move entry of the last sdat sent, the entry after the newest one
	// sent, and after the newest one acknowledged (sdak).
	clientFrame                     int32
	clientFrameAt                   time.Time
	sdatStart, sdatEntry, sdakEntry int
	st                              ClientStatus
}

func (c *client) send(p []byte) int { n, _ := c.conn.WriteToUDPAddrPort(p, c.addr); return n }

func newClient(ctx context.Context, s *Server, conn *net.UDPConn, addr netip.AddrPort, now time.Time) *client {
	c := &client{s: s, conn: conn, addr: addr, shook: now, heard: now}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.st = ClientStatus{Client: addr, Server: conn.LocalAddr().(*net.UDPAddr).AddrPort(), Player: s.rec.Player, AckFrame: -1}
	return c
}

func (c *client) status() ClientStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	st.Joined, st.Closed = c.joined.Load(), c.closed.Load()
	if st.AckFrame >= 0 && st.AckSLSN == st.SentSLSN {
		st.Behind = st.SentAt - st.AckFrame
	} else {
		st.Behind = -1
	}
	return st
}

// expired says why the client is to be dropped now, or endNone.
func (c *client) expired(now time.Time) endReason {
	lim := &c.s.lim
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.joined.Load():
		if now.Sub(c.shook) > lim.Handshake {
			return endTimedOut
		}
	case !c.owedSince.IsZero() && now.Sub(c.owedSince) > lim.AckTimeout:
		return endNoAck
	case now.Sub(c.heard) > lim.Idle:
		if c.st.Done {
			return endFinished
		}
		return endSilent
	}
	return endNone
}

// read answers the client's packets on its own socket, and ends the client
// when it has timed out.
func (c *client) read() {
	defer c.s.wg.Done()
	buf := make([]byte, 2048)
	var pk decode.Packet
	for {
		c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if c.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
			return
		}
		now := time.Now()
		if r := c.expired(now); r != endNone {
			c.s.end(c, r)
			return
		}
		if err != nil || netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != c.addr {
			continue
		}
		c.handle(&pk, buf[:n], now)
	}
}

// The fields handle reads, by their roles where the versions differ.
var (
	ackSLSN    = decode.MustKindRoleRef(decode.KindDifAck, decode.RoleLevelSeq)
	movesEntry = decode.MustKindRef(decode.KindGameMovesAck, "entry_pos")
	probeT0    = decode.MustKindRef(decode.KindProbe, "t0")
	saveOff    = func() int64 {
		v, _ := decode.SaveResults.Value("transfer_off")
		return v
	}()
)

// handle answers one datagram from the client.
func (c *client) handle(pk *decode.Packet, b []byte, now time.Time) {
	v := c.s.rec.Era
	c.mu.Lock()
	c.heard = now
	c.mu.Unlock()
	if decode.Decode(pk, b, v) != nil {
		return
	}
	switch pk.Layout.Kind {
	case decode.KindJoinRequest:
		c.join(pk)
	case decode.KindDifAck:
		if fr, ok := pk.Frame(); ok && c.joined.Load() {
			if seq, ok := ackSLSN.Int(pk); ok && !c.ofLevel(int(seq)) {
				return // the server drops a stak of another level sequence
			}
			c.acked(int32(fr))
		}
	case decode.KindGameMovesAck:
		if fr, ok := pk.Frame(); ok && c.joined.Load() {
			entry, _ := movesEntry.Int(pk)
			c.sdak(int32(fr), int(entry), now)
		}
	case decode.KindProbe:
		t0, ok := probeT0.Value(pk)
		if !ok || !c.joined.Load() {
			return
		}
		p := decode.MustNewKind(v, decode.KindProbeReply)
		p.SetFloat("t0", t0.Float).SetFloat("t1", time.Since(c.s.start).Seconds())
		c.send(decode.Encode(nil, p))
	case decode.KindFileRequest:
		// The versions that answer a file request say whether a file
		// follows: none does here, as with the game's shipped settings.
		if c.joined.Load() && v.Has(decode.KindSaveResult) {
			c.send(decode.Encode(nil, decode.MustNewKind(v, decode.KindSaveResult).Set("result", saveOff)))
		}
	}
}

// ofLevel reports whether level sequence n (as an acknowledgement carries
// it) is the one of the states last sent.
func (c *client) ofLevel(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.Sent == 0 || n == c.st.SentSLSN
}

// join answers a join request with the recorded join reply of the player,
// or with player 99 when the game is full.
func (c *client) join(req *decode.Packet) {
	s := c.s
	rec := s.rec
	v := rec.Era
	var p decode.Packet
	if rec.Join == nil || decode.Decode(&p, rec.Join, v) != nil {
		p = *decode.MustNewKind(v, decode.KindJoinReply)
		p.Set("color", req.Int("color"))
		p.SetIf("fps", decode.FrameRate)
	}
	first := rec.States[s.opt.Start]
	p.SetRole(decode.RoleFrame, int64(first.Frame)).SetRole(decode.RolePlayer, int64(rec.Player))
	if v.LevelSeqOn(decode.KindJoinReply) {
		sp := stateSender{p: decode.MustNewKind(v, decode.KindDifPiece)}
		p.SetRole(decode.RoleLevelSeq, int64(sp.wire(first.SLSN)))
	}
	if first.Number != 0 {
		p.SetRole(decode.RoleLevel, int64(first.Number))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.closed.Load() {
		return
	}
	if c.joined.Load() {
		c.send(decode.Encode(nil, &p)) // its reply was lost
		return
	}
	old := s.joined[c.addr]
	taken := len(s.joined)
	if old != nil {
		taken-- // the endpoint's earlier client makes way
	}
	if taken >= MaxClients {
		p.Set("player", 99)
		c.send(decode.Encode(nil, &p))
		s.endLocked(c, endRefused)
		return
	}
	if old != nil {
		s.endLocked(old, endReplaced)
	}
	c.conn.SetWriteBuffer(1 << 20)
	delete(s.pending, c.addr)
	s.joined[c.addr] = c
	s.counts.Joins++
	c.joined.Store(true)
	c.send(decode.Encode(nil, &p))
	s.wg.Add(1)
	go c.play()
	if !s.noisy(logJoined) {
		s.logf("client %s: joined as player %d", c.addr, rec.Player)
	}
}

// acked takes a stak: the state of that frame becomes the client's base if
// the server still has it, otherwise the next dif is a keyframe (as the game
// does). An acknowledged state the server sent earns the client what it is
// sent next (see Limits.Burst), as does a frame it was sent and the server
// no longer keeps (its acknowledgement was slow).
func (c *client) acked(frame int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Acks++
	kept := c.bases.Ack(frame)
	if kept && (frame > c.st.AckFrame || c.st.AckSLSN != c.st.SentSLSN) {
		c.st.AckFrame, c.st.AckSLSN = frame, c.st.SentSLSN
	}
	if kept || c.st.Sent > 0 && frame >= 0 && frame <= c.st.SentAt {
		c.paidUp() // a frame it was sent, though maybe no longer a base
		c.proven = true
	}
}

// sdak takes a legacy game-move acknowledgement. One that acknowledges the
// game moves of the last sdat sent (the entry after the last one it
// holds, between that sdat's first entry and the newest entry sent) keeps
// the client from being dropped, as in the legacy game, and earns what it
// is sent next; its frame tells where the client is.
func (c *client) sdak(frame int32, entry int, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sdatEntry == 0 || entry < c.sdatStart || entry > c.sdatEntry {
		return
	}
	c.sdakEntry = max(c.sdakEntry, entry)
	c.clientFrame, c.clientFrameAt = frame, now
	c.paidUp()
}

// sentSdat notes the game moves a legacy sdat sends: an sdak may
// acknowledge up to its last entry.
func (c *client) sentSdat(p []byte) {
	if len(p) < 13 {
		return
	}
	start := int(binary.BigEndian.Uint32(p[8:]))
	c.mu.Lock()
	c.sdatStart = start
	c.sdatEntry = max(c.sdatEntry, start+int(p[12]))
	c.mu.Unlock()
}

// paidUp clears what the client owes; c.mu is held.
func (c *client) paidUp() {
	c.owed, c.owedSince = 0, time.Time{}
}

// earned reports whether the client may be sent something now: anything
// when it owes no acknowledgement, else only within the burst
// (Limits.Burst, or Window once it has acknowledged, and BurstTime).
func (c *client) earned() bool {
	lim := &c.s.lim
	c.mu.Lock()
	defer c.mu.Unlock()
	burst := lim.Burst
	if c.proven {
		burst = lim.Window
	}
	ok := c.owed == 0 || c.owed < burst && time.Since(c.owedSince) < lim.BurstTime
	if !ok {
		c.st.Held++
	}
	return ok
}

// sendOwed sends p as something the client owes an acknowledgement for.
// It counts p first: the acknowledgement may come before the send returns.
func (c *client) sendOwed(p []byte) int {
	c.mu.Lock()
	if c.owed == 0 {
		c.owedSince = time.Now()
	}
	c.owed += len(p)
	c.st.Bytes += len(p)
	c.mu.Unlock()
	return c.send(p)
}
