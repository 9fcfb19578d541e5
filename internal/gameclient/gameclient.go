// Package gameclient is a game client for tests: it speaks the netgame the
// way the game's client does, written from the game's own descriptions of its
// netgame and its version history (not from pmdump's decoder: wire.go has its
// own description of each family of versions): it shakes hands (in the
// versions that do), joins, reassembles the
// server's stdf pieces, inflates each dif, applies it to its own base state
// (new = base − dif, bytewise), keeps the last 8 states it applied as bases,
// acknowledges every state it applies with stak, re-acknowledges its
// newest state when a dif's base is one it does not hold, and in the legacy
// era acknowledges each sdat with sdak.
package gameclient

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// history is how many applied states the client keeps as bases.
const history = 8

// maxState bounds an inflated dif whose size is not known yet.
const maxState = 4 << 20

// Options configure a client.
type Options struct {
	Era      decode.Version // the version to speak (its name picks one of wire.go's families)
	Name     string         // the player's name, in the versions that send one
	Color    int            // requested color
	Hostname string
	// Local, when valid, is the endpoint the client binds (a real client
	// binds 24785); otherwise an ephemeral port.
	Local netip.AddrPort
	// Drop, when set, is asked about every stdf piece received; true
	// drops it, as a lossy network would.
	Drop func(p Piece) bool
}

// Piece identifies one received stdf piece.
type Piece struct {
	SLSN       int
	Src, Dst   int32
	Seq, Count int
}

// Applied is one state the client applied.
type Applied struct {
	SLSN     int // level sequence (the wire's in the modern era; counted by the client in the legacy era)
	Level    int // level changes seen since the join
	Src, Dst int32
	Sum      [32]byte
}

type held struct {
	frame int32
	data  []byte
}

type difKey struct {
	slsn     int
	src, dst int32
}

type partial struct {
	count  int
	pieces map[int][]byte // by start byte
}

// Client is one connected game client.
type Client struct {
	conn   *net.UDPConn
	w      wire
	server netip.AddrPort // the server's socket for this client

	Player    int   // player number given by the server
	SLSN      int   // the level sequence the client is in
	JoinFrame int32 // server frame at join

	opt     Options
	hist    []held
	last    int32 // frame of the last state applied, -1 for none
	level   int
	size    int
	entry   uint32 // the game-move entry after the newest one received (legacy)
	pending map[difKey]*partial

	Applied  []Applied // every state applied, in order
	Reacks   int       // stak re-sent for a base the client did not hold
	Dropped  int       // pieces dropped by Options.Drop
	NotNewer int       // complete difs not applied because they were not newer
	Pongs    int
	Sdats    int
	// SdatFrame is the server frame of the last sdat (legacy); the client
	// reports it as its own frame in sdak.
	SdatFrame int32
	// SelfDifs counts complete difs whose base is their own frame.
	SelfDifs int
}

// Join shakes hands with the server listening at addr and joins the game.
func Join(ctx context.Context, addr string, opt Options) (*Client, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	local := &net.UDPAddr{IP: net.IP(ap.Addr().AsSlice())}
	if opt.Local.IsValid() {
		local = net.UDPAddrFromAddrPort(opt.Local)
	}
	conn, err := net.ListenUDP("udp", local)
	if err != nil {
		return nil, err
	}
	w, ok := wires[opt.Era.String()]
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("no wire for version %s", opt.Era)
	}
	conn.SetReadBuffer(8 << 20)
	c := &Client{conn: conn, w: w, opt: opt, last: -1, pending: map[difKey]*partial{}}
	if err := c.join(ctx, ap); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the client's socket.
func (c *Client) Close() error { return c.conn.Close() }

// LocalAddr is the client's endpoint.
func (c *Client) LocalAddr() netip.AddrPort { return c.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (c *Client) join(ctx context.Context, listen netip.AddrPort) error {
	buf := make([]byte, 2048)
	// 1234 to the listening port, up to 5 times; the 5678 comes from
	// the server's socket for this client. Without a handshake, that is
	// the listening port.
	c.server = listen
	for try := 0; c.w.handshake; try++ {
		if try == 5 {
			return errors.New("no 5678 from the server")
		}
		if _, err := c.conn.WriteToUDPAddrPort([]byte("1234"), listen); err != nil {
			return err
		}
		c.conn.SetReadDeadline(time.Now().Add(120 * time.Millisecond))
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if err == nil && n >= 4 && string(buf[:4]) == "5678" {
			c.server = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	req := c.w.joinRequest(c.opt.Color, c.opt.Hostname, c.opt.Name)
	for try := 0; ; try++ {
		if try == 10 {
			return errors.New("no join reply from the server")
		}
		c.send(req)
		c.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, _, err := c.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		frame, player, slsn, ok := c.w.joinReply(buf[:n])
		if !ok {
			continue // a state may come before the reply is read: ignore
		}
		c.JoinFrame, c.Player, c.SLSN = frame, player, slsn
		if c.Player == 99 {
			return errors.New("server full")
		}
		return nil
	}
}

func (c *Client) send(p []byte) { c.conn.WriteToUDPAddrPort(p, c.server) }

// Run receives and applies states until stop returns true (asked after
// every datagram), ctx ends or the server is silent for idle.
func (c *Client) Run(ctx context.Context, idle time.Duration, stop func(*Client) bool) error {
	buf := make([]byte, 2048)
	last := time.Now()
	nextPing := time.Now()
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !c.w.legacy && time.Now().After(nextPing) {
			p := make([]byte, 12)
			copy(p, "ping")
			binary.LittleEndian.PutUint64(p[4:], math.Float64bits(float64(time.Now().UnixNano())/1e9))
			c.send(p)
			nextPing = time.Now().Add(time.Second)
		}
		c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if time.Since(last) > idle {
					return fmt.Errorf("server silent for %v", idle)
				}
				continue
			}
			return err
		}
		if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != c.server || n < 4 {
			continue
		}
		last = time.Now()
		c.packet(buf[:n])
		if stop(c) {
			return nil
		}
	}
}

func (c *Client) packet(p []byte) {
	switch string(p[:4]) {
	case "stdf":
		c.piece(p)
	case "pong":
		if len(p) == 20 {
			c.Pongs++
		}
	case "sdat":
		c.sdat(p)
	}
}

// sdat takes a legacy game-move packet and acknowledges it with sdak, as
// the legacy client does: its frame and the next entry position.
func (c *Client) sdat(p []byte) {
	if !c.w.legacy || len(p) < 13 {
		return
	}
	c.Sdats++
	be := binary.BigEndian
	c.SdatFrame = int32(be.Uint32(p[4:]))
	// The entry after the newest game move held: it never goes back.
	c.entry = max(c.entry, be.Uint32(p[8:])+uint32(p[12]))
	a := make([]byte, 25)
	copy(a, "sdak")
	a[4] = byte(c.Player)
	be.PutUint32(a[5:], uint32(c.SdatFrame))
	be.PutUint32(a[9:], c.entry)
	be.PutUint32(a[21:], 40) // fps_chase
	c.send(a)
}

// piece takes one stdf piece.
func (c *Client) piece(p []byte) {
	pc, start, size, hdr, ok := c.w.piece(p)
	if !ok {
		return
	}
	if c.w.legacy {
		pc.SLSN = c.SLSN // the legacy pieces carry none
	}
	if size < 0 || hdr+size != len(p) || start < 0 || start > 255*c.w.pieceSize || pc.Count <= 0 || pc.Count > 255 || start != pc.Seq*c.w.pieceSize {
		return
	}
	// Pieces of another level sequence are ignored, but for the next one:
	// the server has changed level and the client follows.
	if pc.SLSN != c.SLSN && pc.SLSN != c.w.nextSLSN(c.SLSN) {
		return
	}
	if c.w.int32s && pc.SLSN != c.SLSN {
		// From 2024-06 the client goes to the next level as soon as a
		// piece of it comes (it loads the level the piece names).
		c.levelChange(pc.SLSN)
	}
	if c.opt.Drop != nil && c.opt.Drop(pc) {
		c.Dropped++
		return
	}
	k := difKey{pc.SLSN, pc.Src, pc.Dst}
	m := c.pending[k]
	if m == nil {
		if len(c.pending) >= 64 {
			clear(c.pending) // unfinished difs that never will be
		}
		m = &partial{count: pc.Count, pieces: map[int][]byte{}}
		c.pending[k] = m
	}
	if m.count != pc.Count {
		return
	}
	m.pieces[start] = bytes.Clone(p[hdr:])
	if len(m.pieces) < m.count {
		return
	}
	delete(c.pending, k)
	if k.src == k.dst {
		c.SelfDifs++
	}
	var z []byte
	for len(m.pieces) > 0 {
		b, ok := m.pieces[len(z)]
		if !ok {
			return // pieces that do not tile the dif
		}
		delete(m.pieces, len(z))
		z = append(z, b...)
		if len(b) == 0 {
			break
		}
	}
	c.apply(k, z)
}

// apply applies one whole dif, as the game's client does.
func (c *Client) apply(k difKey, z []byte) {
	if k.slsn != c.SLSN {
		if k.src != 0 {
			return // the next level starts with a keyframe
		}
		c.levelChange(k.slsn)
	} else if c.w.legacy && k.src == 0 && k.dst < c.last {
		// The legacy era has no level sequence on the wire: a
		// keyframe whose frame went back starts the next level.
		c.levelChange(c.SLSN + 1)
	}
	if k.dst <= c.last {
		c.NotNewer++
		return
	}
	var base []byte
	if k.src != 0 {
		for _, h := range c.hist {
			if h.frame == k.src {
				base = h.data
			}
		}
		if base == nil {
			// Not a base the client holds: ask again from its newest.
			c.Reacks++
			c.stak(c.newest())
			return
		}
	}
	limit := maxState
	if c.size > 0 {
		limit = c.size
	}
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return
	}
	dif, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil || len(dif) > limit || c.size > 0 && len(dif) != c.size {
		return
	}
	c.size = len(dif)
	state := make([]byte, len(dif))
	statedif.Sub(state, base, dif) // a nil base: zeros
	c.keep(k.dst, state)
	c.last = k.dst
	c.Applied = append(c.Applied, Applied{SLSN: c.SLSN, Level: c.level, Src: k.src, Dst: k.dst, Sum: sha256.Sum256(state)})
	c.stak(k.dst)
}

func (c *Client) levelChange(slsn int) {
	c.SLSN = slsn
	c.level++
	c.hist = c.hist[:0]
	c.last = -1
	clear(c.pending)
}

// keep adds a state to the history: over one with the same frame, else
// over the oldest.
func (c *Client) keep(frame int32, state []byte) {
	for i := range c.hist {
		if c.hist[i].frame == frame {
			c.hist[i].data = state
			return
		}
	}
	if len(c.hist) < history {
		c.hist = append(c.hist, held{frame, state})
		return
	}
	old := 0
	for i := range c.hist {
		if c.hist[i].frame < c.hist[old].frame {
			old = i
		}
	}
	c.hist[old] = held{frame, state}
}

// newest is the frame of the newest state held, 0 if none.
func (c *Client) newest() int32 {
	var n int32
	for _, h := range c.hist {
		n = max(n, h.frame)
	}
	return n
}

// stak acknowledges frame.
func (c *Client) stak(frame int32) { c.send(c.w.ack(c.Player, c.SLSN, frame)) }
