package engine_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

var client1 = netip.MustParseAddrPort("10.0.0.2:24785")

// Two games read together whose client reuses one ip:port stay apart: each
// conversation has its own dif figures, and no stak of the second game
// matches a dif of the first (that gave ack latencies of minutes).
func TestTwoGamesShareEndpoints(t *testing.T) {
	legacy := realcap.Path(t, "legacy/basic/capture.pcap")
	modern := realcap.Path(t, "modern/basic/basic.pcap")
	e := engine.New(engine.Config{Work: engine.States})
	defer e.Close()
	if err := e.Run(context.Background(), legacy, modern); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if len(st.Difs) != 2 {
		t.Fatalf("dif figures of %d conversations, want 2", len(st.Difs))
	}
	for i, want := range []int{472, 2169} {
		d := st.Difs[i]
		if d.Conv != i+1 || *d.OK != want || d.Acked == 0 {
			t.Errorf("conversation %d: conv %d, %d ok, %d acked; want %d ok", i+1, d.Conv, *d.OK, d.Acked, want)
		}
		// Every real ack latency is under a second (the MANIFESTs).
		if d.AckMs.Max > 1000 {
			t.Errorf("conversation %d: ack latency up to %.0f ms", d.Conv, d.AckMs.Max)
		}
	}
}

// A legacy keyframe with an absurd dst (2^31 - 1) must not be taken as a
// level restart that leaves every later dif without its base; it is
// counted.
func TestImplausibleLegacyFrame(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.States})
	defer e.Close()
	var c collect
	e2 := engine.New(engine.Config{Work: engine.States, OnEvent: c.on, SHA256: true})
	defer e2.Close()
	g := newGame(t, e2, decode.Legacy)
	server := g.join(client1, 40000, 1)
	st := states(1, 4, 4000)
	g.dif(server, client1, 0, 0, 300, nil, st[0], nil)
	g.dif(server, client1, 0, 0, math.MaxInt32, nil, st[1], nil)
	g.dif(server, client1, 0, 0, 310, nil, st[2], nil) // a restart, were the newest frame 2^31 - 1
	g.dif(server, client1, 0, 300, 305, st[0], st[3], nil)
	e2.Finish()
	if len(c.states) != 4 {
		t.Fatalf("%d states", len(c.states))
	}
	last := c.states[3]
	if last.Status != replay.OK || last.Sum != sha256.Sum256(st[3]) {
		t.Errorf("300→305 after the absurd keyframe: %v %v", last.Status, last.Err)
	}
	if got := e2.Stats().Dropped.ImplausibleDifs; got != 1 {
		t.Errorf("implausible frames counted: %d, want 1", got)
	}
}

// Tick moves a quiet live capture on: an unfinished dif is abandoned and a
// dif waiting for a base that never comes is given up, so their states show
// without more packets.
func TestTickShowsQuietStream(t *testing.T) {
	var c collect
	e := engine.New(engine.Config{Work: engine.Timeline, OnEvent: c.on})
	defer e.Close()
	g := newGame(t, e, decode.Modern)
	server := g.join(client1, 40000, 1)
	st := states(2, 3, 20000)
	g.dif(server, client1, 0, 0, 10, nil, st[0], nil)
	g.dif(server, client1, 0, 7, 11, st[1], st[2], nil)                                  // its base 7 never comes
	g.dif(server, client1, 0, 0, 12, nil, st[1], func(seq int) bool { return seq == 0 }) // pieces lost
	if len(c.states) > 1 {
		t.Fatalf("before Tick: %d states shown, want at most the keyframe", len(c.states))
	}
	e.Tick(g.ts.Add(3 * time.Second))
	want := []replay.Status{replay.OK, replay.MissingBase, replay.Incomplete}
	if len(c.states) != len(want) {
		t.Fatalf("after Tick: %d states, want %d", len(c.states), len(want))
	}
	for i, s := range c.states {
		if s.Status != want[i] {
			t.Errorf("state %d (%d→%d): %v, want %v", i, s.Src, s.Dst, s.Status, want[i])
		}
	}
	if c.states[2].Compressed == 0 {
		t.Errorf("incomplete dif shows 0 compressed bytes received")
	}
}

// States come in capture order of their last piece, also when a dif is
// abandoned long after its last piece came.
func TestStatesInCaptureOrder(t *testing.T) {
	incomplete := 0
	for _, in := range []string{"sample:modern", "sample:legacy", realcap.Path(t, "legacy/lossy/capture.pcap")} {
		var c collect
		e := engine.New(engine.Config{Work: engine.States, OnEvent: c.on})
		if err := e.Run(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		e.Close()
		for i, s := range c.states {
			if i > 0 && s.N < c.states[i-1].N {
				t.Errorf("%s: state %d (capture frame %d) after capture frame %d", in, i, s.N, c.states[i-1].N)
			}
			if s.Status == replay.Incomplete {
				incomplete++
			}
		}
	}
	if incomplete == 0 {
		t.Errorf("no incomplete dif: the test shows nothing")
	}
}

// Every packet of the index decodes again to what was read the first time:
// from the capture file when it is a pcap or pcapng file (nothing spooled),
// from the spool for a sample, a compressed file or several of them; and
// with the inputs read together, each packet from its own input.
func TestIndexDecodesAgain(t *testing.T) {
	gzipped := filepath.Join(t.TempDir(), "basic.pcap.gz")
	writeGzip(t, gzipped, realcap.Path(t, "modern/basic/basic.pcap"))
	for _, tt := range []struct {
		name    string
		inputs  []string
		spooled bool
	}{
		{"sample", []string{"sample:legacy"}, true},
		{"pcapng", []string{realcap.Path(t, "modern/basic_pcapng/basic.pcapng")}, false},
		{"pcap", []string{realcap.Path(t, "modern/basic/basic.pcap")}, false},
		{"gzip", []string{gzipped}, true},
		{"two files", []string{realcap.Path(t, "legacy/basic/capture.pcap"), realcap.Path(t, "modern/basic/basic.pcap")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var first [][]byte
			e := engine.New(engine.Config{Work: engine.Index, MemoryBudget: 64 << 10, OnEvent: func(ev engine.Event) {
				if p, ok := ev.(engine.PacketEvent); ok {
					first = append(first, packetText(p.Keep()))
				}
			}})
			defer e.Close()
			if err := e.Run(context.Background(), tt.inputs...); err != nil {
				t.Fatal(err)
			}
			x := e.Index()
			if x.Len() != len(first) || x.Len() == 0 {
				t.Fatalf("index has %d packets, %d were read", x.Len(), len(first))
			}
			if spooled := x.SpoolBytes() > 0; spooled != tt.spooled {
				t.Errorf("%d bytes spooled; want spooled %v", x.SpoolBytes(), tt.spooled)
			}
			for i := range x.Len() {
				p, err := x.Packet(i)
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if got := packetText(p); !bytes.Equal(got, first[i]) {
					t.Fatalf("packet %d decodes again as\n%s\nwas\n%s", i, got, first[i])
				}
			}
			if n := x.Search(int(x.Entry(10).N)); n != 10 {
				t.Errorf("Search of packet 10's frame: %d", n)
			}
		})
	}
}

// A capture file that changes after it was indexed: its packets no longer
// decode again, with an error that says so, and nothing else happens.
func TestIndexFileChanged(t *testing.T) {
	data, err := os.ReadFile(realcap.Path(t, "modern/basic/basic.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "basic.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Work: engine.Index})
	defer e.Close()
	if err := e.Run(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	x := e.Index()
	last := x.Len() - 1
	if _, err := x.Packet(last); err != nil {
		t.Fatalf("before the change: %v", err)
	}
	// The same file, overwritten in place with other bytes, then cut.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{0xee}, len(data)-24), 24)
	f.Close()
	if _, err := x.Packet(last); !errors.Is(err, source.ErrReread) {
		t.Errorf("overwritten: %v, want an error wrapping source.ErrReread", err)
	}
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Packet(last); !errors.Is(err, source.ErrReread) {
		t.Errorf("cut: %v, want an error wrapping source.ErrReread", err)
	}
}

// writeGzip writes a gzip-compressed copy of file src to dst.
func writeGzip(t *testing.T, dst, src string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func packetText(p *engine.Packet) []byte {
	b := []byte(p.Src.String() + " " + p.Dst.String() + " " + p.TS.Format(time.RFC3339Nano) + " " + p.Kind.String() + " ")
	b = p.Packet.AppendJSONFields(b)
	if p.Packet.Err != nil {
		b = append(b, p.Packet.Err.Error()...)
	}
	return b
}

// A capture cut by the snap length: the difs are counted from their
// headers, and their cut pieces as truncated, not lost.
func TestSnapLength(t *testing.T) {
	full := realcap.Path(t, "modern/basic/basic.pcap")
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	snap(t, full, cut, 120)
	var figures []engine.DifStats
	for _, in := range []string{full, cut} {
		e := engine.New(engine.Config{Work: engine.Difs})
		if err := e.Run(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		figures = append(figures, e.Stats().Difs...)
		e.Close()
	}
	f, c := figures[0], figures[1]
	if c.Difs != f.Difs || c.Keyframes != f.Keyframes || c.BaseResets != f.BaseResets {
		t.Errorf("cut capture: %d difs, %d keyframes, %d resets; whole: %d, %d, %d", c.Difs, c.Keyframes, c.BaseResets, f.Difs, f.Keyframes, f.BaseResets)
	}
	if c.LostPieces != 0 || c.Truncated != c.Difs || c.TruncatedPieces == 0 {
		t.Errorf("cut capture: %d lost pieces, %d truncated difs of %d, %d truncated pieces", c.LostPieces, c.Truncated, c.Difs, c.TruncatedPieces)
	}
}

// snap writes in to out with every frame cut to n bytes.
func snap(t *testing.T, in, out string, n int) {
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	o, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	w := pcapgo.NewWriter(o)
	if err := w.WriteFileHeader(uint32(n), r.LinkType()); err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if len(data) > n {
			data = data[:n]
		}
		ci.CaptureLength = len(data)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ci.Timestamp, CaptureLength: len(data), Length: ci.Length}, data); err != nil {
			t.Fatal(err)
		}
	}
}

// A client's NaN in a stak is no sample: JSON null, never an error.
func TestHealthNaN(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Health})
	defer e.Close()
	g := newGame(t, e, decode.Modern)
	server := g.join(client1, 40000, 1)
	st := states(3, 1, 2000)
	g.dif(server, client1, 0, 0, 10, nil, st[0], nil)
	p := g.packet("stak").Set("player", 1).Set("ack_frame", 10).Set("client_frame", 10).SetFloat("chase_fps", math.NaN()).SetFloat("cpu", math.Inf(1))
	g.send(client1, server, p)
	e.Finish()
	st2 := e.Stats()
	b, err := json.Marshal(st2)
	if err != nil {
		t.Fatalf("stats with a NaN in a stak: %v", err)
	}
	if !strings.Contains(string(b), `"chase_fps":null`) || !strings.Contains(string(b), `"cpu":null`) {
		t.Errorf("NaN and Inf are not null in %s", b)
	}
	if h := st2.Health[0].Seconds; len(h) == 0 || h[0].Acks != 1 {
		t.Errorf("the stak is not counted: %+v", h)
	}
}

// Conversations past the bound share one overflow conversation: counted,
// never printed as an invalid endpoint.
func TestManyConversations(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Difs})
	defer e.Close()
	g := newGame(t, e, decode.Modern)
	for i := range session.MaxConversations + 10 {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 24785)
		g.join(c, uint16(30000+i%20000), 1)
	}
	st := e.Stats()
	if st.Untracked.Conversations != 10 {
		t.Errorf("untracked conversations %d, want 10", st.Untracked.Conversations)
	}
	for _, c := range st.Convs {
		if strings.Contains(c.Client, "invalid") {
			t.Fatalf("conversation %d printed as %q", c.ID, c.Client)
		}
	}
}

// A line's states are found by selector; a selector that matches several
// conversations is refused with the candidates.
func TestLineOfAmbiguous(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Timeline})
	defer e.Close()
	g := newGame(t, e, decode.Modern)
	st := states(4, 2, 2000)
	s1 := g.join(client1, 40000, 1)
	g.dif(s1, client1, 0, 0, 10, nil, st[0], nil)
	s2 := g.join(client1, 40001, 1) // the same endpoint joins again
	g.dif(s2, client1, 0, 0, 10, nil, st[1], nil)
	e.Finish()
	_, err := e.LineOf(engine.Selector{Player: 1})
	var amb *engine.AmbiguousError
	if !asAmbiguous(err, &amb) || len(amb.Candidates) != 2 {
		t.Fatalf("--player 1 of two conversations: %v", err)
	}
	// The engine names the problem; a front end adds how to settle it.
	if msg := err.Error(); !strings.Contains(msg, "2 conversations: 1 (10.0.0.2:24785), 2 (10.0.0.2:24785)") || strings.Contains(msg, "--") {
		t.Errorf("error %q: want the conversations and no flag", msg)
	}
	l, err := e.LineOf(engine.Selector{Player: -1, Conv: 2})
	if err != nil || l != (reassemble.Chain{Conv: 2, Client: client1}) {
		t.Fatalf("conversation 2: %v %v", l, err)
	}
	got, err := e.State(nil, l, 0)
	if err != nil || !bytes.Equal(got, st[1]) {
		t.Errorf("state of conversation 2: %v", err)
	}
}

// When the temporary files cannot be written, the engine says it failed
// itself (the front end exits with its own status and a hint).
func TestTemporaryFilesFail(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Timeline | engine.Index, MemoryBudget: 1024, TempDir: filepath.Join(t.TempDir(), "absent")})
	defer e.Close()
	e.Run(context.Background(), "sample:modern")
	if err := e.Err(); !errors.Is(err, engine.ErrInternal) {
		t.Errorf("Err() = %v, want ErrInternal", err)
	}
}

// Progress goes up to the input's size, never back, for a large pcap file
// and for a compressed one alike, and the last report says it is done.
func TestProgress(t *testing.T) {
	gzipped := filepath.Join(t.TempDir(), "multi.pcap.gz")
	writeGzip(t, gzipped, realcap.Path(t, "modern/multi/multi.pcap"))
	for _, in := range []string{realcap.Path(t, "modern/multi/multi.pcap"), gzipped} {
		var evs []engine.ProgressEvent
		e := engine.New(engine.Config{OnEvent: func(ev engine.Event) {
			if p, ok := ev.(engine.ProgressEvent); ok {
				evs = append(evs, p)
			}
		}})
		if err := e.Run(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		e.Close()
		st, err := os.Stat(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			t.Fatalf("%s: no progress", in)
		}
		for i, p := range evs {
			if p.Total != st.Size() || p.Read > p.Total || i > 0 && p.Read < evs[i-1].Read {
				t.Errorf("%s: progress %d: %d of %d (size %d)", in, i, p.Read, p.Total, st.Size())
			}
		}
		if last := evs[len(evs)-1]; !last.Done || last.Read != st.Size() {
			t.Errorf("%s: last progress %+v, want done at %d", in, last, st.Size())
		}
	}
}

// Snapshots and the packet index can be used from other goroutines while
// the engine reads (run with -race to check the locking).
func TestSnapshotsWhileRunning(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Index | engine.Difs | engine.Health})
	defer e.Close()
	done := make(chan error)
	// The paths are found here: realcap fails or skips the test, which
	// only the test's own goroutine may do.
	multi, basic := realcap.Path(t, "modern/multi/multi.pcap"), realcap.Path(t, "modern/basic_pcapng/basic.pcapng")
	go func() {
		done <- e.Run(context.Background(), multi, basic)
	}()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r session.Record
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g == 0 {
					e.Stats()
					e.Health()
					continue
				}
				x := e.Index()
				if n := x.Len(); n > 0 {
					if err := x.Record((i*7919)%n, &r); err != nil {
						t.Errorf("packet %d of %d: %v", (i*7919)%n, n, err)
						return
					}
				}
			}
		}()
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	close(stop)
	wg.Wait()
}
