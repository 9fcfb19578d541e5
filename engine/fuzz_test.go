package engine_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/fuzzcorpus"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/source"
)

// fuzzEndpoints are the endpoints a FuzzEngine input's datagrams go
// between: a server's listening port, its per-client ports and clients.
var fuzzEndpoints = []netip.AddrPort{
	netip.MustParseAddrPort("10.0.0.1:24785"), netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.1:40001"),
	netip.MustParseAddrPort("10.0.0.2:24785"), netip.MustParseAddrPort("10.0.0.3:24785"), netip.MustParseAddrPort("10.0.0.2:24786"),
}

// fuzzDatagrams parses a FuzzEngine input: records of a byte of endpoints
// (source in the low nibble, destination in the high one, modulo the
// table), a byte of time steps (10 ms each; 255 calls Tick instead), a
// 2-byte big-endian length and the payload.
func fuzzDatagrams(data []byte, fn func(d *source.Datagram, tick bool)) {
	ts := time.Date(2024, 2, 20, 12, 0, 0, 0, time.UTC)
	n := 0
	for len(data) >= 4 {
		ep, step, l := data[0], data[1], int(binary.BigEndian.Uint16(data[2:4]))
		data = data[4:]
		l = min(l, len(data))
		payload := data[:l]
		data = data[l:]
		if step == 255 {
			fn(&source.Datagram{TS: ts.Add(3 * time.Second)}, true)
			continue
		}
		ts = ts.Add(time.Duration(step) * 10 * time.Millisecond)
		n++
		src, dst := fuzzEndpoints[int(ep&15)%len(fuzzEndpoints)], fuzzEndpoints[int(ep>>4)%len(fuzzEndpoints)]
		fn(&source.Datagram{N: n, TS: ts, Src: src, Dst: dst, Payload: payload, Length: len(payload)}, false)
	}
}

// runFuzz feeds an engine a FuzzEngine input, ticking it where the input
// says, and finishes it.
func runFuzz(e *engine.Engine, data []byte) {
	fuzzDatagrams(data, func(d *source.Datagram, tick bool) {
		if tick {
			e.Tick(d.TS)
			return
		}
		e.Feed(d)
	})
	e.Finish()
}

// fuzzEncode makes a FuzzEngine input from datagrams.
func fuzzEncode(dgs []source.Datagram) []byte {
	index := func(a netip.AddrPort) byte {
		for i, e := range fuzzEndpoints {
			if e == a {
				return byte(i)
			}
		}
		return 0
	}
	var b []byte
	var last time.Time
	for _, d := range dgs {
		step := 0
		if !last.IsZero() {
			step = min(int(d.TS.Sub(last)/(10*time.Millisecond)), 254)
		}
		last = d.TS
		b = append(b, index(d.Src)|index(d.Dst)<<4, byte(step))
		b = binary.BigEndian.AppendUint16(b, uint16(len(d.Payload)))
		b = append(b, d.Payload...)
	}
	return b
}

// FuzzEngine feeds the whole analysis (recognition, reassembly, rebuild,
// timeline, index, health) hostile datagrams and Ticks: it must not panic,
// hang or grow without bound, and every state it reports ok must rebuild
// from its index to the same bytes.
func FuzzEngine(f *testing.F) {
	for _, s := range engineSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Half the inputs rebuild behind the fast pass (as the TUI does),
		// with a backlog that spills at once.
		behind := len(data)%2 == 1
		e := engine.New(engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings, MemoryBudget: 4096, TempDir: t.TempDir(),
			RebuildBehind: behind,
			OnEvent: func(ev engine.Event) {
				if p, ok := ev.(engine.PacketEvent); ok {
					p.Keep()
				}
			}})
		defer e.Close()
		fed := 0
		fuzzDatagrams(data, func(d *source.Datagram, tick bool) {
			if tick {
				e.Tick(d.TS)
				return
			}
			e.Feed(d)
			// Behind, a line is asked for first now and then, as the
			// TUI's cursor moves.
			if fed++; behind && fed%8 == 0 {
				if ls := e.Progress().Lines; len(ls) > 0 {
					e.Prioritize(ls[fed/8%len(ls)].Line, fed/16*16-1)
				}
			}
		})
		e.Finish()
		e.Wait()
		if p := e.Progress(); !p.Done || p.Rebuilt != p.Difs {
			t.Fatalf("progress after Wait: %+v", p)
		}
		if _, err := json.Marshal(e.Stats()); err != nil {
			t.Fatalf("stats: %v", err)
		}
		if behind {
			// Behind or in step, the same findings and health in the end.
			plain := engine.New(engine.Config{Work: engine.Health | engine.Findings})
			runFuzz(plain, data)
			if got, want := endFigures(t, e), endFigures(t, plain); got != want {
				t.Fatalf("behind the fast pass:\n%s\nin step:\n%s", got, want)
			}
			plain.Close()
		}
		for i := range e.Index().Len() {
			if _, err := e.Index().Packet(i); err != nil {
				t.Fatalf("packet %d: %v", i, err)
			}
		}
		var buf []byte
		for _, l := range e.Lines() {
			for i, en := range e.Entries(nil, l, 0, -1) {
				if en.Status != replay.OK {
					continue
				}
				var err error
				if buf, err = e.State(buf[:0], l, i); err != nil {
					t.Fatalf("%v entry %d (%d→%d) rebuilt ok, not from the index: %v", l, i, en.Src, en.Frame.N, err)
				}
			}
		}
	})
}

// endFigures is an engine's findings, sorted as doctor lists them, and its
// health, as JSON.
func endFigures(t *testing.T, e *engine.Engine) string {
	b, err := json.Marshal(struct {
		F []engine.Finding
		H []*engine.ClientHealth
	}{engine.SortFindings(e.Findings()), e.Health()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// engineSeeds are FuzzEngine's seeds: a real game's first packets
// (handshakes, joins, difs, acks) and pieces of it.
func engineSeeds(t testing.TB) map[string][]byte {
	var dgs []source.Datagram
	e := engine.New(engine.Config{Work: engine.Index})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	x := e.Index()
	for i := 0; i < x.Len() && len(dgs) < 60; i++ {
		p, err := x.Packet(i)
		if err != nil {
			t.Fatal(err)
		}
		dgs = append(dgs, source.Datagram{TS: p.TS, Src: mapEndpoint(p.Src), Dst: mapEndpoint(p.Dst), Payload: p.Packet.Raw})
	}
	tick := []byte{0, 255, 0, 0}
	return map[string][]byte{
		"game":      fuzzEncode(dgs),
		"join":      fuzzEncode(dgs[:10]),
		"game-tick": append(append(fuzzEncode(dgs[:30]), tick...), fuzzEncode(dgs[30:])...),
		"handshake": {0x30, 0, 0, 4, '1', '2', '3', '4'},
	}
}

// TestEngineSeedCorpus keeps FuzzEngine's seed files in step.
func TestEngineSeedCorpus(t *testing.T) {
	fuzzcorpus.Sync(t, "FuzzEngine", engineSeeds(t))
}

// mapEndpoint maps the sample's endpoints onto the fuzz table.
func mapEndpoint(a netip.AddrPort) netip.AddrPort {
	switch {
	case a.Port() == 24785 && a.Addr() == netip.MustParseAddr("10.0.0.1"):
		return fuzzEndpoints[0]
	case a.Addr() == netip.MustParseAddr("10.0.0.1"):
		return fuzzEndpoints[1]
	case a.Addr() == netip.MustParseAddr("10.0.0.3"):
		return fuzzEndpoints[4]
	}
	return fuzzEndpoints[3]
}
