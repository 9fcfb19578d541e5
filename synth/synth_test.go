package synth_test

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/synth"
)

// generate runs Generate into an in-memory capture and returns the capture
// bytes, the ground truth and the summary.
func generate(t testing.TB, cfg synth.Config, f synth.Format) ([]byte, *synth.Truth, *synth.Summary) {
	t.Helper()
	var buf bytes.Buffer
	cw, err := synth.NewCaptureWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	truth := synth.NewTruth(cfg)
	sum, err := synth.Generate(cfg, cw, truth)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", cfg, err)
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), truth, sum
}

// packet is a decoded game packet of a capture, copied out of the reader's
// reused buffers.
type packet struct {
	n        int
	ts       time.Time
	src, dst netip.AddrPort
	client   netip.AddrPort
	player   int
	name     string
	era      decode.Version
	raw      []byte
	ints     map[string]int64
	data     []byte
}

// readCapture runs a capture through the project's pipeline (source reader
// and session tracker, era inferred) and fails the test on any datagram
// that is not a clean game packet.
func readCapture(t testing.TB, data []byte) ([]packet, *session.Tracker) {
	t.Helper()
	rd, err := source.NewReader(bytes.NewReader(data), "synth")
	if err != nil {
		t.Fatal(err)
	}
	tr := session.NewTracker(decode.VersionUnknown)
	var out []packet
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading capture: %v", err)
		}
		r := tr.Process(d)
		if r.Kind != session.Game {
			t.Fatalf("frame %d (%s → %s, %q): kind %v, error %v", d.N, d.Src, d.Dst, d.Payload[:min(4, len(d.Payload))], r.Kind, r.Err())
		}
		p := packet{n: d.N, ts: d.TS, src: d.Src, dst: d.Dst, client: r.Conv.Client, player: r.Player,
			name: r.Packet.NameString(), era: r.Version, raw: slices.Clone(d.Payload), ints: map[string]int64{}}
		for i, f := range r.Packet.Layout.Fields {
			if i >= len(r.Packet.Values) {
				break
			}
			switch f.Type {
			case decode.Data:
				p.data = slices.Clone(r.Packet.Values[i].Bytes)
			case decode.U8, decode.S8, decode.U16, decode.I32:
				p.ints[f.Name] = r.Packet.Values[i].Int
			}
		}
		out = append(out, p)
	}
	c := rd.Counters()
	if c.NonUDP != 0 || c.BadFrames != 0 || c.Truncated != 0 {
		t.Fatalf("capture has non-UDP, bad or truncated frames: %+v", c)
	}
	return out, tr
}

func TestDeterministic(t *testing.T) {
	tests := []struct {
		era    decode.Version
		format synth.Format
		loss   float64
	}{
		{decode.Legacy, synth.Pcap, 0},
		{decode.Legacy, synth.Pcapng, 0.1},
		{decode.Modern, synth.Pcap, 0.05},
		{decode.Modern, synth.Pcapng, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%s_%v", tt.era, tt.format, tt.loss), func(t *testing.T) {
			cfg := synth.Config{Era: tt.era, Players: 3, Duration: 3 * time.Second, Loss: tt.loss, Seed: 11}
			a, ta, _ := generate(t, cfg, tt.format)
			b, tb, _ := generate(t, cfg, tt.format)
			if !bytes.Equal(a, b) {
				t.Fatalf("same seed gave different captures (%d and %d bytes)", len(a), len(b))
			}
			if !slices.Equal(ta.Server, tb.Server) {
				t.Fatal("same seed gave different server ground truth")
			}
			cfg.Seed = 12
			c, _, _ := generate(t, cfg, tt.format)
			if bytes.Equal(a, c) {
				t.Fatal("different seeds gave the same capture")
			}
		})
	}
}

func TestDecodesCleanly(t *testing.T) {
	tests := []struct {
		era     decode.Version
		players int
		format  synth.Format
		loss    float64
	}{
		{decode.Legacy, 1, synth.Pcap, 0},
		{decode.Legacy, 7, synth.Pcapng, 0.05},
		{decode.Modern, 1, synth.Pcapng, 0},
		{decode.Modern, 7, synth.Pcap, 0.05},
	}
	for _, v := range decode.Versions()[2:] {
		tests = append(tests, struct {
			era     decode.Version
			players int
			format  synth.Format
			loss    float64
		}{v, 4, synth.Pcap, 0.05})
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%d_%s", tt.era, tt.players, tt.format), func(t *testing.T) {
			cfg := synth.Config{Era: tt.era, Players: tt.players, Duration: 4 * time.Second, Loss: tt.loss, Seed: 5}
			data, _, sum := generate(t, cfg, tt.format)
			pkts, tr := readCapture(t, data)
			if len(pkts) != sum.Sent-sum.Lost {
				t.Errorf("capture has %d packets, summary says %d sent and %d lost", len(pkts), sum.Sent, sum.Lost)
			}
			if want := synth.Epoch(cfg.Seed); pkts[0].ts.Before(want) || pkts[0].ts.After(want.Add(time.Second)) {
				t.Errorf("first packet at %v, want within a second of %v", pkts[0].ts, want)
			}
			// The packets alone tell the version but for its siblings,
			// which only the state size tells apart (the engine does).
			family := tt.era.Siblings()
			largest := tt.era.Kind(decode.KindDifPiece).MinLen() + tt.era.PieceSize()
			for i, p := range pkts {
				// Only a conversation's very first 1234 fits both eras and
				// cannot tell which it is.
				// A conversation's first packets may not tell yet (a cjon of
				// 2024-04 is the same in 2024-05b): decoded as the version
				// does, in a version that has the same layout for it.
				same := p.era.Known() && p.era.Layout(p.name) == tt.era.Layout(p.name)
				if !family.Has(p.era) && !same && !(p.name == "1234" && p.era == decode.VersionUnknown) {
					t.Fatalf("packet %d (%s): version %v, want %v", p.n, p.name, p.era, tt.era)
				}
				if i > 0 && p.ts.Before(pkts[i-1].ts) {
					t.Fatalf("packet %d goes back in time", p.n)
				}
				if len(p.raw) > largest {
					t.Fatalf("packet %d (%s) is %d bytes", p.n, p.name, len(p.raw))
				}
			}
			convs := tr.Conversations()
			if len(convs) != tt.players {
				t.Fatalf("%d conversations, want %d", len(convs), tt.players)
			}
			ports := map[uint16]bool{}
			handshake := tt.era.Has(decode.KindHandshake)
			listen := netip.AddrPortFrom(synth.ServerAddr, synth.ListenPort)
			for i, c := range convs {
				if !family.Has(c.Version) {
					t.Errorf("conversation %d: version %v, want %v", c.ID, c.Version, tt.era)
				}
				if c.Player != i+1 {
					t.Errorf("conversation %d: player %d, want %d", c.ID, c.Player, i+1)
				}
				if c.Client != synth.ClientAddrIn(tt.era, i+1) || handshake != (c.Client.Port() == synth.ListenPort) {
					t.Errorf("conversation %d: client %v, want %v", c.ID, c.Client, synth.ClientAddrIn(tt.era, i+1))
				}
				switch {
				case handshake && c.Listen != listen:
					t.Errorf("conversation %d: 1234 went to %v", c.ID, c.Listen)
				case handshake && (c.Server.Port() == synth.ListenPort || ports[c.Server.Port()]):
					t.Errorf("conversation %d: server port %d is not a fresh per-client port", c.ID, c.Server.Port())
				case !handshake && (c.Listen.IsValid() || c.Server != listen):
					t.Errorf("conversation %d: handshake to %v, server %v; want none, and the one socket %v", c.ID, c.Listen, c.Server, listen)
				}
				ports[c.Server.Port()] = true
			}
			// The handshake: 1234 to the listening port, 5678 from the
			// client's server port, then the era's join packets; or the
			// join packets alone.
			want := []string{"1234", "5678", "cjon", "sjon"}
			switch {
			case tt.era.Has(decode.KindGameMoves):
				want = []string{"1234", "5678", "CJON", "SJON"}
			case !handshake:
				want = want[2:]
			}
			for _, c := range convs {
				var got []string
				for _, p := range pkts {
					if p.client == c.Client && len(got) < len(want) && (p.name == "1234" || p.name == "5678" || strings.EqualFold(p.name, "cjon") || strings.EqualFold(p.name, "sjon")) {
						got = append(got, p.name)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("client %v handshake %v, want %v", c.Client, got, want)
				}
			}
		})
	}
}

// seqKey identifies one dif on the wire: the client it went to, the level
// sequence and its src and dst frames.
type seqKey struct {
	client   netip.AddrPort
	slsn     int64
	src, dst int64
}

type sequence struct {
	count  int
	pieces map[int64][]byte // by start byte
	done   bool
}

type rebuilt struct {
	key        seqKey
	player     int
	sha        [32]byte
	compressed int
	pieces     int
}

// rebuild reassembles every complete stdf sequence of a capture and applies
// it, independently of the generator: pieces are grouped per client by
// (slsn, src, dst), concatenated by start byte and inflated with the
// standard library, and new = base − dif bytewise, where the base is zeros
// (src = 0) or the state rebuilt before for that client, slsn and frame.
func rebuild(t *testing.T, pkts []packet, v decode.Version) []rebuilt {
	stateSize, ps := synth.StateSize(v), int64(v.PieceSize())
	t.Helper()
	seqs := map[seqKey]*sequence{}
	states := map[seqKey][]byte{} // src unused: (client, slsn, dst) → state
	var out []rebuilt
	for _, p := range pkts {
		if p.name != "stdf" {
			continue
		}
		k := seqKey{p.client, p.ints["slsn"], p.ints["src"], p.ints["dst"]}
		s := seqs[k]
		if s == nil {
			s = &sequence{count: int(p.ints["count"]), pieces: map[int64][]byte{}}
			seqs[k] = s
		}
		if s.done {
			t.Fatalf("dif %+v sent twice", k)
		}
		if int(p.ints["count"]) != s.count {
			t.Fatalf("dif %+v: piece count changes from %d to %d", k, s.count, p.ints["count"])
		}
		if p.ints["start"] != p.ints["seq"]*ps || int64(len(p.data)) > ps {
			t.Fatalf("dif %+v: piece %d starts at %d with %d bytes", k, p.ints["seq"], p.ints["start"], len(p.data))
		}
		s.pieces[p.ints["start"]] = p.data
		if len(s.pieces) < s.count {
			continue
		}
		s.done = true
		var z []byte
		for i := 0; i < s.count; i++ {
			z = append(z, s.pieces[int64(i)*ps]...)
		}
		if v.Pieces(len(z)) != s.count {
			t.Fatalf("dif %+v: %d compressed bytes in %d pieces", k, len(z), s.count)
		}
		if len(z) < 2 || z[0] != 0x78 || z[1] != 0xda {
			t.Fatalf("dif %+v: zlib header % x, want 78 da (level 7)", k, z[:min(2, len(z))])
		}
		zr, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("dif %+v: %v", k, err)
		}
		dif, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("dif %+v: inflating: %v", k, err)
		}
		if len(dif) != stateSize {
			t.Fatalf("dif %+v inflates to %d bytes, want %d", k, len(dif), stateSize)
		}
		state := make([]byte, stateSize)
		if k.src != 0 {
			base := states[seqKey{k.client, k.slsn, 0, k.src}]
			if base == nil {
				t.Fatalf("dif %+v: base state %d was never rebuilt from the capture", k, k.src)
			}
			copy(state, base)
		}
		for i := range state {
			state[i] -= dif[i]
		}
		states[seqKey{k.client, k.slsn, 0, k.dst}] = state
		out = append(out, rebuilt{key: k, player: p.player, sha: sha256.Sum256(state), compressed: len(z), pieces: s.count})
	}
	return out
}

func TestDifsRebuildFromCapture(t *testing.T) {
	tests := []struct {
		era     decode.Version
		players int
		loss    float64
	}{
		{decode.Legacy, 2, 0},
		{decode.Legacy, 3, 0.05},
		{decode.Modern, 2, 0},
		{decode.Modern, 3, 0.05},
	}
	for _, v := range decode.Versions()[2:] {
		tests = append(tests, struct {
			era     decode.Version
			players int
			loss    float64
		}{v, 3, 0.05})
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%d_%v", tt.era, tt.players, tt.loss), func(t *testing.T) {
			cfg := synth.Config{Era: tt.era, Players: tt.players, Duration: 8 * time.Second, Loss: tt.loss, Seed: 3}
			data, truth, sum := generate(t, cfg, synth.Pcap)
			pkts, _ := readCapture(t, data)
			seqs := rebuild(t, pkts, tt.era)

			type skey struct {
				player         int
				slsn, src, dst int64
			}
			server := map[skey]synth.ServerRow{}
			for _, r := range truth.Server {
				server[skey{r.Player, int64(r.SLSN), int64(r.Src), int64(r.Dst)}] = r
			}
			if len(server) != len(truth.Server) || len(truth.Server) != sum.Difs {
				t.Fatalf("%d server rows, %d distinct, %d difs", len(truth.Server), len(server), sum.Difs)
			}
			// Every complete dif in the capture is a server row with the
			// same state hash, size and piece count.
			byState := map[skey]rebuilt{}
			for _, s := range seqs {
				r, ok := server[skey{s.player, s.key.slsn, s.key.src, s.key.dst}]
				if !ok {
					t.Fatalf("dif %+v of player %d is not in the server ground truth", s.key, s.player)
				}
				if r.SHA256 != s.sha || r.CompressedSize != s.compressed || r.Pieces != s.pieces {
					t.Fatalf("dif %+v: rebuilt sha %x, %d bytes, %d pieces; server says %x, %d, %d",
						s.key, s.sha[:4], s.compressed, s.pieces, r.SHA256[:4], r.CompressedSize, r.Pieces)
				}
				byState[skey{s.player, s.key.slsn, 0, s.key.dst}] = s
			}
			if tt.loss == 0 && len(seqs) != len(truth.Server) {
				t.Errorf("no loss, but only %d of %d difs are complete in the capture", len(seqs), len(truth.Server))
			}
			if tt.loss > 0 && len(seqs) >= len(truth.Server) {
				t.Errorf("with loss, all %d difs are complete", len(seqs))
			}
			// Every state a client applied is one rebuilt from the capture.
			applied := 0
			frames := int(cfg.Duration / synth.FrameTime)
			least := frames / 3 // modern: a dif every frame
			if every := tt.era.Info().DifEvery; every > 1 {
				least = frames / (every * tt.players) / 2 // one every 5 frames, in turn
			}
			for p := 1; p <= tt.players; p++ {
				rows := truth.Clients[p]
				if len(rows) < least {
					t.Errorf("player %d applied only %d difs, want at least %d", p, len(rows), least)
				}
				for _, r := range rows {
					s, ok := byState[skey{p, int64(r.SLSN), 0, int64(r.Dst)}]
					if !ok {
						t.Fatalf("player %d applied (slsn %d, dst %d) but the capture does not hold it", p, r.SLSN, r.Dst)
					}
					if s.sha != r.SHA256 || s.key.src != int64(r.Src) {
						t.Fatalf("player %d row (dst %d, src %d): rebuilt src %d sha %x, row sha %x", p, r.Dst, r.Src, s.key.src, s.sha[:4], r.SHA256[:4])
					}
					applied++
				}
			}
			if applied != sum.Applied {
				t.Errorf("%d client rows, summary says %d applied", applied, sum.Applied)
			}
		})
	}
}

func TestLossRate(t *testing.T) {
	tests := []struct {
		era  decode.Version
		loss float64
	}{
		{decode.Modern, 0},
		{decode.Modern, 0.02},
		{decode.Modern, 0.2},
		{decode.Legacy, 0.1},
		{decode.Legacy, 0.5},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%v", tt.era, tt.loss), func(t *testing.T) {
			cfg := synth.Config{Era: tt.era, Players: 3, Duration: 10 * time.Second, Loss: tt.loss, Seed: 9}
			data, truth, sum := generate(t, cfg, synth.Pcap)
			pkts, _ := readCapture(t, data)
			if len(pkts) != sum.Sent-sum.Lost {
				t.Fatalf("%d packets in the capture, %d sent, %d lost", len(pkts), sum.Sent, sum.Lost)
			}
			n := float64(sum.Sent - sum.Exempt)
			got := sum.LossRate()
			// Binomial: allow five standard deviations.
			tol := 5 * math.Sqrt(tt.loss*(1-tt.loss)/n)
			if math.Abs(got-tt.loss) > tol {
				t.Errorf("loss rate %.4f over %v datagrams, want %.4f ± %.4f", got, n, tt.loss, tol)
			}
			if tt.loss == 0 && sum.Lost != 0 {
				t.Errorf("%d lost without loss", sum.Lost)
			}
			if sum.Exempt != 4*cfg.Players {
				t.Errorf("%d exempt packets, want the 4 join packets of each of %d clients", sum.Exempt, cfg.Players)
			}
			lostTotal := 0
			for name, k := range sum.LostByName {
				lostTotal += k
				if name == "1234" || strings.EqualFold(name, "cjon") || strings.EqualFold(name, "sjon") || name == "5678" {
					t.Errorf("%d join packets %s lost", k, name)
				}
			}
			if lostTotal != sum.Lost {
				t.Errorf("lost by name adds up to %d, not %d", lostTotal, sum.Lost)
			}
			// Loss hits both directions.
			if tt.loss > 0 && (sum.LostByName["stdf"] == 0 || sum.LostByName["stak"]+sum.LostByName["cdat"] == 0) {
				t.Errorf("loss did not hit both directions: %v", sum.LostByName)
			}
			// Lost difs still have server rows: more rows than complete difs.
			if tt.loss >= 0.1 && len(truth.Server) <= len(truth.Clients[1]) {
				t.Errorf("%d server rows for %d applied", len(truth.Server), len(truth.Clients[1]))
			}
		})
	}
}

func TestModernLevelChange(t *testing.T) {
	tests := []struct {
		name   string
		change time.Duration
		want   int
	}{
		{"default half-way", 0, 1},
		{"explicit", 2 * time.Second, 1},
		{"none", -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := synth.Config{Era: decode.Modern, Players: 2, Duration: 6 * time.Second, Loss: 0.02, Seed: 4, LevelChange: tt.change}
			data, truth, sum := generate(t, cfg, synth.Pcapng)
			if sum.LevelChanges != tt.want {
				t.Fatalf("%d level changes, want %d", sum.LevelChanges, tt.want)
			}
			pkts, _ := readCapture(t, data)
			maxDst := map[int64]int64{}
			minDst := map[int64]int64{}
			var order []int64
			for _, p := range pkts {
				if p.name != "stdf" {
					continue
				}
				s := p.ints["slsn"]
				if _, ok := maxDst[s]; !ok {
					order = append(order, s)
					minDst[s] = p.ints["dst"]
				}
				maxDst[s] = max(maxDst[s], p.ints["dst"])
				minDst[s] = min(minDst[s], p.ints["dst"])
			}
			if tt.want == 0 {
				if !slices.Equal(order, []int64{0}) {
					t.Fatalf("slsn values %v, want [0]", order)
				}
				return
			}
			if !slices.Equal(order, []int64{0, 1}) {
				t.Fatalf("slsn values in order %v, want [0 1]", order)
			}
			if minDst[1] > 5 || maxDst[0] < 40 {
				t.Errorf("frames do not restart: slsn 0 up to %d, slsn 1 from %d", maxDst[0], minDst[1])
			}
			if tt.change > 0 {
				// dst of the last old-level dif ≈ the change time in frames.
				if want := int64(tt.change / synth.FrameTime); maxDst[0] < want-5 || maxDst[0] > want+5 {
					t.Errorf("old level ends at frame %d, want about %d", maxDst[0], want)
				}
			}
			// Every client follows: applied rows on both levels, the new
			// level starting with a keyframe.
			for p := 1; p <= cfg.Players; p++ {
				var levels []int
				first := true
				for _, r := range truth.Clients[p] {
					if r.SLSN == 1 && first {
						first = false
						if r.Src != 0 || r.Level != 64 {
							t.Errorf("player %d: first dif of slsn 1 is %d→%d on level %d", p, r.Src, r.Dst, r.Level)
						}
					}
					if len(levels) == 0 || levels[len(levels)-1] != r.SLSN {
						levels = append(levels, r.SLSN)
					}
				}
				if !slices.Equal(levels, []int{0, 1}) {
					t.Errorf("player %d applied slsn %v, want [0 1]", p, levels)
				}
			}
			// sjon carries slsn 0 (the clients joined before the change).
			for _, p := range pkts {
				if p.name == "sjon" && (p.ints["slsn"] != 0 || p.ints["level"] != 1) {
					t.Errorf("sjon slsn %d level %d", p.ints["slsn"], p.ints["level"])
				}
			}
		})
	}
}

func TestLegacyProtocol(t *testing.T) {
	cfg := synth.Config{Era: decode.Legacy, Players: 3, Duration: 30 * time.Second, Seed: 2}
	data, truth, _ := generate(t, cfg, synth.Pcap)
	pkts, _ := readCapture(t, data)
	sdaks := map[netip.AddrPort]int{}
	var serr, sdatEntries int
	lastDif := int64(-1)
	for _, p := range pkts {
		switch p.name {
		case "sdak":
			// The first sdak of each client is the 21-byte form.
			want := 25
			if sdaks[p.client] == 0 {
				want = 21
			}
			if len(p.raw) != want {
				t.Fatalf("sdak %d of %v is %d bytes, want %d", sdaks[p.client]+1, p.client, len(p.raw), want)
			}
			sdaks[p.client]++
		case "serr":
			serr++
			raw := p.ints["c_sync"]
			meant := decode.RecoverNegative(uint32(raw))
			if meant >= 0 || meant < -100 || raw != int64(decode.EncodeNegative(meant)) {
				t.Errorf("serr c_sync raw %d means %d", raw, meant)
			}
			if meant >= -255 && (raw < 1 || raw > 255) {
				t.Errorf("serr c_sync %d not encoded as 256+v: raw %d", meant, raw)
			}
		case "sdat":
			sdatEntries += int(p.ints["n"])
		case "stdf":
			// One dif every 5 frames (plus the first at each join).
			if p.ints["dst"]%5 != 0 && p.ints["src"] != 0 {
				t.Errorf("dif to frame %d outside the every-5-frames schedule", p.ints["dst"])
			}
			if p.ints["dst"] < lastDif {
				t.Errorf("dif dst goes back from %d to %d", lastDif, p.ints["dst"])
			}
			lastDif = p.ints["dst"]
		case "stak":
			if len(p.raw) != 10 {
				t.Errorf("stak is %d bytes", len(p.raw))
			}
		}
	}
	if len(sdaks) != cfg.Players {
		t.Errorf("sdak from %d clients, want %d", len(sdaks), cfg.Players)
	}
	if serr == 0 {
		t.Error("no serr in 30 s of legacy play")
	}
	if sdatEntries == 0 {
		t.Error("no sdat game-move entries")
	}
	// Round robin: once everyone has joined, consecutive server rows go to
	// the players in turn, 5 frames apart.
	var joined int32
	for _, p := range pkts {
		if p.name == "SJON" {
			joined = max(joined, int32(p.ints["frame"]))
		}
	}
	for i := 0; i+1 < len(truth.Server); i++ {
		a, b := truth.Server[i], truth.Server[i+1]
		if a.Dst <= joined {
			continue
		}
		if b.Dst-a.Dst != 5 || b.Player != a.Player%cfg.Players+1 {
			t.Fatalf("server rows %d and %d: player %d dst %d, then player %d dst %d", i, i+1, a.Player, a.Dst, b.Player, b.Dst)
		}
	}
}

func TestModernProtocol(t *testing.T) {
	cfg := synth.Config{Era: decode.Modern, Players: 2, Duration: 5 * time.Second, Seed: 8, LevelChange: -1}
	data, truth, _ := generate(t, cfg, synth.Pcap)
	pkts, _ := readCapture(t, data)
	count := map[string]int{}
	for _, p := range pkts {
		count[p.name]++
		if p.name == "stak" && len(p.raw) != 54 {
			t.Errorf("stak is %d bytes", len(p.raw))
		}
	}
	// ping, pong and pang once a second per client.
	for _, n := range []string{"ping", "pong", "pang"} {
		if c := count[n]; c < 2*4 || c > 2*5 {
			t.Errorf("%d %s in 5 s for 2 clients", c, n)
		}
	}
	// One dif per frame to every client, dst = server frame + 1.
	perPlayer := map[int][]int32{}
	for _, r := range truth.Server {
		perPlayer[r.Player] = append(perPlayer[r.Player], r.Dst)
	}
	for p, dsts := range perPlayer {
		for i := 1; i < len(dsts); i++ {
			if dsts[i] != dsts[i-1]+1 {
				t.Fatalf("player %d: dif dst %d follows %d", p, dsts[i], dsts[i-1])
			}
		}
	}
	var sjonFrame int64 = -1
	for _, p := range pkts {
		if p.name == "sjon" && p.player == 1 {
			sjonFrame = p.ints["frame"]
		}
	}
	if first := perPlayer[1][0]; int64(first) != sjonFrame+1 {
		t.Errorf("player 1 joined at frame %d, first dif dst %d", sjonFrame, first)
	}
	if count["cdat"] == 0 || count["stak"] == 0 {
		t.Errorf("packet counts %v", count)
	}
}

func TestValidate(t *testing.T) {
	ok := synth.Config{Era: decode.Modern, Players: 2, Duration: time.Second}
	tests := []struct {
		name string
		edit func(*synth.Config)
		bad  bool
	}{
		{"ok", func(*synth.Config) {}, false},
		{"legacy 7 players", func(c *synth.Config) { c.Era, c.Players = decode.Legacy, 7 }, false},
		{"unknown era", func(c *synth.Config) { c.Era = decode.VersionUnknown }, true},
		{"no players", func(c *synth.Config) { c.Players = 0 }, true},
		{"8 players", func(c *synth.Config) { c.Players = 8 }, true},
		{"zero duration", func(c *synth.Config) { c.Duration = 0 }, true},
		{"negative loss", func(c *synth.Config) { c.Loss = -0.1 }, true},
		{"total loss", func(c *synth.Config) { c.Loss = 1 }, true},
		{"NaN loss", func(c *synth.Config) { c.Loss = math.NaN() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if (err != nil) != tt.bad {
				t.Fatalf("Validate(%+v) = %v", c, err)
			}
			if tt.bad {
				if _, gerr := synth.Generate(c, &discard{}, nil); gerr == nil {
					t.Fatal("Generate accepted a bad config")
				}
			}
		})
	}
}

type discard struct{ n int }

func (d *discard) WriteDatagram(time.Time, netip.AddrPort, netip.AddrPort, []byte) error {
	d.n++
	return nil
}

type failAfter struct{ n int }

func (f *failAfter) WriteDatagram(time.Time, netip.AddrPort, netip.AddrPort, []byte) error {
	if f.n--; f.n < 0 {
		return errors.New("disk full")
	}
	return nil
}

func TestWriterErrorStops(t *testing.T) {
	cfg := synth.Config{Era: decode.Modern, Players: 2, Duration: 5 * time.Second, Seed: 1}
	_, err := synth.Generate(cfg, &failAfter{n: 50}, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v, want the writer's", err)
	}
}

func TestCSV(t *testing.T) {
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			dir := t.TempDir()
			cfg := synth.Config{Era: era, Players: 2, Duration: 2 * time.Second, Seed: 6}
			_, truth, _ := generate(t, cfg, synth.Pcap)
			capture := filepath.Join(dir, "game.pcap")
			if err := truth.WriteCSV(capture); err != nil {
				t.Fatal(err)
			}
			server, clients := synth.TruthPaths(capture, 2)
			if server != filepath.Join(dir, "game_server_gt.csv") || clients[1] != filepath.Join(dir, "game_c2_client_gt.csv") {
				t.Fatalf("paths %s %v", server, clients)
			}
			header := map[decode.Version][2]string{
				decode.Legacy: {"player,src,dst,compressed_size,num_pieces,dst_state_sha256", "dst_frame,src_frame,sha256"},
				decode.Modern: {"player,src,dst,compressed_size,num_pieces,sha256_of_dst_state,slsn,level", "dst_frame,src_frame,sha256,slsn,level"},
			}[era]
			check := func(path, head string, rows int, first string) {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
				if lines[0] != head {
					t.Errorf("%s header %q, want %q", path, lines[0], head)
				}
				if len(lines)-1 != rows {
					t.Errorf("%s has %d rows, want %d", path, len(lines)-1, rows)
				}
				if rows > 0 && lines[1] != first {
					t.Errorf("%s first row %q, want %q", path, lines[1], first)
				}
			}
			s := truth.Server[0]
			first := fmt.Sprintf("%d,%d,%d,%d,%d,%x", s.Player, s.Src, s.Dst, s.CompressedSize, s.Pieces, s.SHA256)
			if era == decode.Modern {
				first += fmt.Sprintf(",%d,%d", s.SLSN, s.Level)
			}
			check(server, header[0], len(truth.Server), first)
			for p := 1; p <= 2; p++ {
				c := truth.Clients[p][0]
				first := fmt.Sprintf("%d,%d,%x", c.Dst, c.Src, c.SHA256)
				if era == decode.Modern {
					first += fmt.Sprintf(",%d,%d", c.SLSN, c.Level)
				}
				check(clients[p-1], header[1], len(truth.Clients[p]), first)
			}
		})
	}
}

func TestFormatFor(t *testing.T) {
	tests := map[string]synth.Format{
		"a.pcap": synth.Pcap, "a.pcapng": synth.Pcapng, "dir.x/A.PCAPNG": synth.Pcapng, "noext": synth.Pcap, "a.cap": synth.Pcap,
	}
	for name, want := range tests {
		if got := synth.FormatFor(name); got != want {
			t.Errorf("FormatFor(%q) = %v, want %v", name, got, want)
		}
	}
}

func ExampleGenerate() {
	var capture bytes.Buffer
	cw, err := synth.NewCaptureWriter(&capture, synth.Pcap)
	if err != nil {
		panic(err)
	}
	cfg := synth.Config{Era: decode.Modern, Players: 2, Duration: 4 * time.Second, Seed: 42}
	truth := synth.NewTruth(cfg)
	sum, err := synth.Generate(cfg, cw, truth)
	if err != nil {
		panic(err)
	}
	if err := cw.Flush(); err != nil {
		panic(err)
	}
	fmt.Println("starts at", sum.Start.Format(time.DateOnly), "with", sum.ByName["1234"], "handshakes")
	fmt.Println("every dif in the ground truth:", len(truth.Server) == sum.Difs)
	fmt.Println("level changes:", sum.LevelChanges)
	// Output:
	// starts at 2026-01-01 with 2 handshakes
	// every dif in the ground truth: true
	// level changes: 1
}
