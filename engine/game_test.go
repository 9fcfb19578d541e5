package engine_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/filter"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/source"
)

// game feeds an engine the datagrams of a hand-made game: one server and
// its clients, with the packets built from decode's tables.
type game struct {
	t      testing.TB
	e      *engine.Engine
	era    decode.Version
	n      int
	ts     time.Time
	listen netip.AddrPort
	buf    []byte
}

func newGame(t testing.TB, e *engine.Engine, era decode.Version) *game {
	return &game{t: t, e: e, era: era, ts: time.Date(2024, 2, 20, 12, 0, 0, 0, time.UTC),
		listen: netip.MustParseAddrPort("10.0.0.1:24785")}
}

// send feeds one packet, 1 ms after the previous one.
func (g *game) send(from, to netip.AddrPort, p *decode.Packet) {
	g.n++
	g.ts = g.ts.Add(time.Millisecond)
	g.buf = decode.Encode(g.buf[:0], p)
	payload := append([]byte(nil), g.buf...)
	g.e.Feed(&source.Datagram{N: g.n, TS: g.ts, Src: from, Dst: to, Payload: payload, Length: len(payload)})
}

func (g *game) packet(name string) *decode.Packet { return decode.MustNew(g.era, name) }

// join makes client join from server port sport as player.
func (g *game) join(client netip.AddrPort, sport uint16, player int) (server netip.AddrPort) {
	server = netip.AddrPortFrom(g.listen.Addr(), sport)
	g.send(client, g.listen, g.packet("1234"))
	g.send(server, client, g.packet("5678"))
	if g.era == decode.Legacy {
		g.send(client, server, g.packet("CJON").Set("color", 3).SetBytes("hostname", []byte("pc")))
		g.send(server, client, g.packet("SJON").Set("level", 1).Set("frame", 10).Set("player", int64(player)).Set("color", 3))
	} else {
		g.send(client, server, g.packet("cjon").Set("color", 3).SetBytes("hostname", []byte("pc")))
		g.send(server, client, g.packet("sjon").Set("level", 1).Set("frame", 10).Set("player", int64(player)).Set("color", 3))
	}
	return server
}

// dif sends the dif base → next from frame src to dst in pieces (all of
// them, or those keep says).
func (g *game) dif(server, client netip.AddrPort, slsn int, src, dst int32, base, next []byte, keep func(seq int) bool) {
	d := make([]byte, len(next))
	for i := range d {
		if base != nil {
			d[i] = base[i] - next[i]
		} else {
			d[i] = -next[i]
		}
	}
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, 7)
	w.Write(d)
	w.Close()
	zb := z.Bytes()
	count := len(zb)/decode.Modern.PieceSize() + 1
	for seq := range count {
		if keep != nil && !keep(seq) {
			continue
		}
		lo, hi := min(seq*decode.Modern.PieceSize(), len(zb)), min((seq+1)*decode.Modern.PieceSize(), len(zb))
		p := g.packet("stdf").Set("src", int64(src)).Set("dst", int64(dst)).Set("seq", int64(seq)).Set("count", int64(count)).
			Set("start", int64(lo)).SetBytes("data", zb[lo:hi])
		if g.era == decode.Modern {
			p.Set("slsn", int64(slsn))
		}
		g.send(server, client, p)
	}
}

// states returns n states of size bytes, each a small change of the one
// before.
func states(seed uint64, n, size int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	s := make([]byte, size)
	for i := range s {
		if r.IntN(4) == 0 {
			s[i] = byte(r.Uint32())
		}
	}
	out := [][]byte{s}
	for len(out) < n {
		next := bytes.Clone(out[len(out)-1])
		for range 20 {
			next[r.IntN(size)] = byte(r.Uint32())
		}
		out = append(out, next)
	}
	return out
}

// collect records an engine's state events.
type collect struct{ states []*replay.State }

func (c *collect) on(ev engine.Event) {
	if s, ok := ev.(engine.StateEvent); ok {
		c.states = append(c.states, s.State)
	}
}

func mustFilter(t testing.TB, expr string) *filter.Filter {
	t.Helper()
	f, err := filter.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func asAmbiguous(err error, target **engine.AmbiguousError) bool { return errors.As(err, target) }
