package session_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

var (
	listen = netip.MustParseAddrPort("10.0.0.1:24785") // the server's listening socket
	eph1   = netip.MustParseAddrPort("10.0.0.1:50001") // its socket for client A
	eph2   = netip.MustParseAddrPort("10.0.0.1:50002") // its socket for client B
	cliA   = netip.MustParseAddrPort("10.0.0.2:24785") // clients bind 24785 too on a LAN
	cliB   = netip.MustParseAddrPort("10.0.0.3:24786")
	t0     = time.Date(2024, 2, 20, 12, 0, 0, 0, time.UTC)
)

// feeder numbers datagrams and spaces them 25 ms apart.
type feeder struct {
	t  *testing.T
	n  int
	tr *session.Tracker
}

func newFeeder(t *testing.T, force decode.Version) *feeder {
	return &feeder{t: t, tr: session.NewTracker(force)}
}

// send feeds one datagram and returns a copy of the interesting parts of
// its record.
func (f *feeder) send(src, dst netip.AddrPort, payload []byte) rec {
	f.n++
	d := &source.Datagram{N: f.n, TS: t0.Add(time.Duration(f.n) * 25 * time.Millisecond), Src: src, Dst: dst,
		Payload: payload, Length: len(payload)}
	return snapshot(f.tr.Process(d))
}

// sendCut feeds a datagram of which only the first n bytes were captured.
func (f *feeder) sendCut(src, dst netip.AddrPort, payload []byte, n int) rec {
	f.n++
	d := &source.Datagram{N: f.n, TS: t0, Src: src, Dst: dst, Payload: payload[:n], Length: len(payload)}
	return snapshot(f.tr.Process(d))
}

type rec struct {
	n      int
	kind   session.Kind
	era    decode.Version
	dir    decode.Dir
	conv   *session.Conversation
	player int
	name   string
	err    error
	frame  int64
	layout *decode.Layout
}

func snapshot(r *session.Record) rec {
	fr, _ := r.Packet.Frame()
	return rec{r.N, r.Kind, r.Version, r.Dir, r.Conv, r.Player, r.Packet.NameString(), r.Err(), fr, r.Packet.Layout}
}

func enc(era decode.Version, name string, set func(p *decode.Packet)) []byte {
	p := decode.MustNew(era, name)
	if set != nil {
		set(p)
	}
	return decode.Encode(nil, p)
}

// Packets of both eras.
var (
	L, M = decode.Legacy, decode.Modern

	lCJON = func(color int64, host string) []byte {
		return enc(L, "CJON", func(p *decode.Packet) { p.Set("color", color).SetBytes("hostname", []byte(host)) })
	}
	lSJON = func(player, color int64) []byte {
		return enc(L, "SJON", func(p *decode.Packet) {
			p.Set("level", 4).Set("frame", 200).Set("entry_pos", 2).Set("fps", 40).Set("player", player).
				Set("color", color).Set("dm_bullets", 0).Set("dm_damage", 1005).Set("suicide_bullets", 0)
		})
	}
	lCdat = func(player, frame int64) []byte {
		return enc(L, "cdat", func(p *decode.Packet) { p.Set("player", player).Set("frame", frame).Set("move", 17) })
	}
	lSdat = enc(L, "sdat", func(p *decode.Packet) {
		p.Set("frame", 300).Set("start_entry", 2).AddEntry(299, 5, 1, 17)
	})
	lStdf = func(size int) []byte {
		return enc(L, "stdf", func(p *decode.Packet) {
			p.Set("src", 0).Set("dst", 200).Set("seq", 0).Set("count", 1).Set("start", 0).SetBytes("data", make([]byte, size))
		})
	}
	mCjon = func(color int64, host string) []byte {
		return enc(M, "cjon", func(p *decode.Packet) { p.Set("color", color).SetBytes("hostname", []byte(host)) })
	}
	mSjon = func(player, color int64) []byte {
		return enc(M, "sjon", func(p *decode.Packet) {
			p.Set("level", 1).Set("frame", 127).Set("player", player).Set("color", color).Set("slsn", 3)
		})
	}
	mCdat = func(player, frame int64) []byte {
		return enc(M, "cdat", func(p *decode.Packet) { p.Set("player", player).Set("frame", frame).Set("move", 0x21) })
	}
	mStdf = func(size int) []byte {
		return enc(M, "stdf", func(p *decode.Packet) {
			p.Set("src", 0).Set("dst", 128).Set("seq", 0).Set("count", 1).Set("slsn", 3).Set("start", 0).SetBytes("data", make([]byte, size))
		})
	}
	mStak = func(player, frame int64) []byte {
		return enc(M, "stak", func(p *decode.Packet) {
			p.Set("player", player).Set("ack_frame", frame).Set("client_frame", frame+2).SetFloat("cpu", 50)
		})
	}
	mPing = enc(M, "ping", func(p *decode.Packet) { p.SetFloat("t0", 1.5) })
)

// dnsQuery is a DNS query for example.com: UDP that is not game traffic.
var dnsQuery = []byte("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01")

func TestRecognitionByContent(t *testing.T) {
	h1 := netip.MustParseAddrPort("192.168.7.1:40000")
	h2 := netip.MustParseAddrPort("192.168.7.2:41000")
	dns := netip.MustParseAddrPort("192.168.7.53:53")
	tests := []struct {
		name     string
		src, dst netip.AddrPort
		payload  []byte
		kind     session.Kind
		dir      decode.Dir
		client   netip.AddrPort // of the conversation, when there is one
		errIs    error
	}{
		{"legacy cdat on other ports", h1, h2, lCdat(1, 300), session.Game, decode.C2S, h1, nil},
		{"modern stak on other ports", h1, h2, mStak(2, 500), session.Game, decode.C2S, h1, nil},
		{"stdf on other ports", h2, h1, mStdf(100), session.Game, decode.S2C, h1, nil},
		{"dns query", h1, dns, dnsQuery, session.NonGame, decode.DirUnknown, netip.AddrPort{}, nil},
		{"dns answer", dns, h1, append(append([]byte(nil), dnsQuery...), 0xc0, 0x0c), session.NonGame, decode.DirUnknown, netip.AddrPort{}, nil},
		{"3 bytes", h1, h2, []byte("abc"), session.NonGame, decode.DirUnknown, netip.AddrPort{}, nil},
		{"empty", h1, h2, nil, session.NonGame, decode.DirUnknown, netip.AddrPort{}, nil},
		{"digits text", h1, h2, []byte("12345678\n"), session.NonGame, decode.DirUnknown, netip.AddrPort{}, nil},
		{"unknown name, no game ports", h1, h2, []byte("zlog\x00\x00\x00\x01"), session.NonGame, decode.DirUnknown, netip.AddrPort{}, nil},
		{"unknown name to the listen port", h1, listen, []byte("zlog\x00\x00\x00\x01"), session.Unknown, decode.DirUnknown, netip.AddrPort{}, decode.ErrUnknown},
		{"short stdf", h2, h1, mStdf(100)[:20], session.Malformed, decode.S2C, h1, decode.ErrShort},
		{"stdf size overruns", h2, h1, mStdf(100)[:90], session.Malformed, decode.S2C, h1, decode.ErrOverrun},
		{"digits to the listen port", h1, listen, []byte("12345678"), session.Malformed, decode.C2S, h1, decode.ErrLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFeeder(t, decode.VersionUnknown)
			r := f.send(tt.src, tt.dst, tt.payload)
			if r.kind != tt.kind || r.dir != tt.dir {
				t.Errorf("kind %s dir %s, want %s %s (err %v)", r.kind, r.dir, tt.kind, tt.dir, r.err)
			}
			if tt.client.IsValid() {
				if r.conv == nil || r.conv.Client != tt.client {
					t.Errorf("conversation %+v, want client %v", r.conv, tt.client)
				}
			} else if r.conv != nil {
				t.Errorf("conversation %+v for a %s datagram", r.conv, r.kind)
			}
			if tt.errIs == nil && r.err != nil || tt.errIs != nil && !errors.Is(r.err, tt.errIs) {
				t.Errorf("err %v, want %v", r.err, tt.errIs)
			}
			st := f.tr.Stats
			counts := map[session.Kind]session.Count{session.Game: st.Game, session.Malformed: st.Malformed,
				session.Unknown: st.Unknown, session.NonGame: st.NonGame}
			for k, c := range counts {
				want := session.Count{}
				if k == tt.kind {
					want = session.Count{Packets: 1, Bytes: len(tt.payload)}
				}
				if c != want {
					t.Errorf("Stats %s = %+v, want %+v", k, c, want)
				}
			}
			if tt.kind == session.NonGame && (len(st.ByName) != 0 || len(f.tr.Conversations()) != 0) {
				t.Errorf("non-game datagram counted by name %v or made a conversation", st.ByName)
			}
		})
	}
}

// TestUnknownOnConversation: a name no era knows, on a known game
// conversation, is Unknown and belongs to that conversation.
func TestUnknownOnConversation(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	f.send(cliB, listen, []byte("1234"))
	f.send(eph2, cliB, []byte("5678"))
	f.send(cliB, eph2, mCjon(8, "vm"))
	f.send(eph2, cliB, mSjon(2, 8))
	for _, tt := range []struct {
		src, dst netip.AddrPort
		dir      decode.Dir
	}{{cliB, eph2, decode.C2S}, {eph2, cliB, decode.S2C}} {
		r := f.send(tt.src, tt.dst, []byte("wxyz\x01\x02\x03\x04\x05"))
		if r.kind != session.Unknown || r.dir != tt.dir || r.conv == nil || r.conv.Client != cliB ||
			r.era != decode.Modern || r.player != 2 || r.name != "wxyz" || !errors.Is(r.err, decode.ErrUnknown) {
			t.Errorf("%v -> %v: %+v", tt.src, tt.dst, r)
		}
	}
	// Binary junk on the conversation is still not a game packet.
	if r := f.send(cliB, eph2, []byte("\x00\x01\x02\x03\x04")); r.kind != session.NonGame {
		t.Errorf("binary junk: %s", r.kind)
	}
	if got := f.tr.Stats.Unknown.Packets; got != 2 {
		t.Errorf("Stats.Unknown %d, want 2", got)
	}
	if c := f.tr.Stats.ByName[session.NameDir{Name: "wxyz", Dir: decode.S2C}]; c == nil || c.Packets != 1 {
		t.Errorf("ByName wxyz s2c %v", c)
	}
}

// TestNonGameRecord: a non-game record does not carry the previous
// packet.
func TestNonGameRecord(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	f.send(cliB, eph2, mStdf(10)[:20]) // malformed
	for _, p := range [][]byte{dnsQuery, []byte("ab")} {
		r := f.send(netip.MustParseAddrPort("10.9.9.9:53"), netip.MustParseAddrPort("10.9.9.8:53"), p)
		if r.kind != session.NonGame || r.err != nil || r.layout != nil || r.conv != nil || r.player != -1 {
			t.Errorf("non-game record %+v", r)
		}
	}
}

func TestTruncatedBySnaplen(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	f.send(cliA, listen, []byte("1234"))
	f.send(eph1, cliA, []byte("5678"))
	full := mStdf(900)
	for _, n := range []int{100, len(full) - 1} {
		r := f.sendCut(eph1, cliA, full, n)
		if r.kind != session.Malformed || r.err == nil || !strings.Contains(r.err.Error(), "snap length") {
			t.Errorf("cut to %d: kind %s err %v", n, r.kind, r.err)
		}
		if r.conv == nil || r.conv.Client != cliA || r.dir != decode.S2C {
			t.Errorf("cut to %d: conversation %+v dir %s", n, r.conv, r.dir)
		}
	}
	// A cut that still fits a layout (a 25-byte legacy sdak cut to 21
	// bytes) is malformed too, and is no evidence of its era.
	g := newFeeder(t, decode.VersionUnknown)
	sdak := enc(L, "sdak", func(p *decode.Packet) {
		p.Set("player", 1).Set("frame", 205).Set("entry_pos", 2).Set("stdf_late", 0).Set("frames_skipped", 0).Set("fps_chase", 40)
	})
	r := g.sendCut(cliA, eph1, sdak, 21)
	if r.kind != session.Malformed || r.conv.Version != decode.VersionUnknown {
		t.Errorf("cut sdak: kind %s, conversation era %s", r.kind, r.conv.Version)
	}
	if g.tr.Stats.Malformed.Packets != 1 || g.tr.Stats.Game.Packets != 0 {
		t.Errorf("stats %+v", g.tr.Stats)
	}
}

// legacySession is a legacy join and a little play of client A.
func legacySession(f *feeder) {
	f.send(cliA, listen, []byte("1234"))
	f.send(eph1, cliA, []byte("5678\x00"))
	f.send(cliA, eph1, lCJON(8, "alpha"))
	f.send(eph1, cliA, lSJON(1, 11))
	f.send(eph1, cliA, lStdf(500))
	f.send(cliA, eph1, lCdat(1, 300))
	f.send(eph1, cliA, lSdat)
}

// modernSession is a modern join and a little play of client B.
func modernSession(f *feeder) {
	f.send(cliB, listen, []byte("1234"))
	f.send(eph2, cliB, []byte("5678"))
	f.send(cliB, eph2, mCjon(5, "bravo.example.org"))
	f.send(eph2, cliB, mSjon(2, 6))
	f.send(eph2, cliB, mStdf(500))
	f.send(cliB, eph2, mStak(2, 128))
	f.send(cliB, eph2, mCdat(2, 300))
	f.send(cliB, eph2, mPing)
}

func TestConversations(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	legacySession(f)
	modernSession(f)
	convs := f.tr.Conversations()
	if len(convs) != 2 {
		t.Fatalf("%d conversations, want 2", len(convs))
	}
	a, b := convs[0], convs[1]
	if a.ID != 1 || a.Client != cliA || a.Server != eph1 || a.Listen != listen || a.Version != decode.Legacy ||
		a.Player != 1 || a.Hostname != "alpha" || a.Color != 11 || a.Level != 4 || a.Packets != 7 {
		t.Errorf("legacy conversation %+v", *a)
	}
	if b.ID != 2 || b.Client != cliB || b.Server != eph2 || b.Listen != listen || b.Version != decode.Modern ||
		b.Player != 2 || b.Hostname != "bravo.example.o" || b.Color != 6 || b.Level != 1 || b.SLSN != 3 || b.Packets != 8 {
		t.Errorf("modern conversation %+v", *b)
	}
	for id, want := range map[int]*session.Conversation{-1: nil, 0: nil, 1: a, 2: b, 3: nil} {
		if c := f.tr.Conversation(id); c != want {
			t.Errorf("Conversation(%d) = %p, want %p", id, c, want)
		}
	}
	if !a.First.Equal(t0.Add(25*time.Millisecond)) || !a.Last.Equal(t0.Add(7*25*time.Millisecond)) {
		t.Errorf("legacy conversation from %v to %v", a.First, a.Last)
	}
	if f.tr.Stats.Game.Packets != 15 || f.tr.Stats.Eras[decode.Legacy] < 6 || f.tr.Stats.Eras[decode.Modern] < 7 {
		t.Errorf("stats %+v", f.tr.Stats)
	}
}

// TestDirections: direction, player and era of every packet of the two
// sessions, interleaved.
func TestDirections(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	type step struct {
		src, dst netip.AddrPort
		payload  []byte
		dir      decode.Dir
		era      decode.Version // EraUnknown: not checked
		player   int
		frame    int64 // -1: not checked
	}
	steps := []step{
		{cliA, listen, []byte("1234"), decode.C2S, decode.VersionUnknown, -1, -1},
		{eph1, cliA, []byte("5678\x00"), decode.S2C, decode.Legacy, -1, -1},
		{cliB, listen, []byte("1234"), decode.C2S, decode.VersionUnknown, -1, -1},
		{cliA, eph1, lCJON(8, "alpha"), decode.C2S, decode.Legacy, -1, -1},
		{eph2, cliB, []byte("5678"), decode.S2C, decode.Modern, -1, -1},
		{eph1, cliA, lSJON(1, 11), decode.S2C, decode.Legacy, 1, 200},
		{cliB, eph2, mCjon(5, "bravo"), decode.C2S, decode.Modern, -1, -1},
		{eph2, cliB, mSjon(2, 6), decode.S2C, decode.Modern, 2, 127},
		// cdat fits both eras: each conversation decodes it in its own.
		{cliA, eph1, lCdat(1, 300), decode.C2S, decode.Legacy, 1, 300},
		{cliB, eph2, mCdat(2, 300), decode.C2S, decode.Modern, 2, 300},
		{eph1, cliA, lStdf(10), decode.S2C, decode.Legacy, 1, 200},
		{eph2, cliB, mStdf(10), decode.S2C, decode.Modern, 2, 128},
		{cliB, eph2, mStak(2, 128), decode.C2S, decode.Modern, 2, 128},
		{eph1, cliA, lSdat, decode.S2C, decode.Legacy, 1, 300},
	}
	for i, s := range steps {
		r := f.send(s.src, s.dst, s.payload)
		if r.kind != session.Game || r.dir != s.dir || s.era != decode.VersionUnknown && r.era != s.era ||
			r.player != s.player || s.frame >= 0 && r.frame != s.frame {
			t.Errorf("step %d %s %v -> %v: kind %s dir %s era %s player %d frame %d (err %v); want dir %s era %s player %d frame %d",
				i, r.name, s.src, s.dst, r.kind, r.dir, r.era, r.player, r.frame, r.err, s.dir, s.era, s.player, s.frame)
		}
	}
	if n := len(f.tr.Conversations()); n != 2 {
		t.Errorf("%d conversations", n)
	}
}

// TestDirectionFromAddresses: on a known conversation the addresses give
// the direction, not the name: a malformed stak the server sent is s2c.
func TestDirectionFromAddresses(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	modernSession(f)
	for _, tt := range []struct {
		name     string
		src, dst netip.AddrPort
		payload  []byte
		kind     session.Kind
		dir      decode.Dir
	}{
		{"malformed stak s→c", eph2, cliB, mStak(2, 130)[:20], session.Malformed, decode.S2C},
		{"stak s→c", eph2, cliB, mStak(2, 131), session.Malformed, decode.S2C}, // well formed, but a stak the server sent
		{"malformed stdf c→s", cliB, eph2, mStdf(10)[:20], session.Malformed, decode.C2S},
		{"stak c→s", cliB, eph2, mStak(2, 132), session.Game, decode.C2S},
		{"malformed stak c→s", cliB, eph2, mStak(2, 133)[:20], session.Malformed, decode.C2S},
	} {
		r := f.send(tt.src, tt.dst, tt.payload)
		if r.kind != tt.kind || r.dir != tt.dir || r.conv == nil || r.conv.Client != cliB || r.player != 2 {
			t.Errorf("%s: kind %s dir %s conv %v player %d; want %s %s on %v", tt.name, r.kind, r.dir, r.conv, r.player, tt.kind, tt.dir, cliB)
		}
		if tt.name == "stak s→c" && (r.err == nil || r.err.Error() != "stak is sent c→s; this one went s→c") {
			t.Errorf("%s: error %v", tt.name, r.err)
		}
	}
	if n := len(f.tr.Conversations()); n != 1 {
		t.Errorf("%d conversations, want 1", n)
	}
}

// TestEraInference: a conversation seen mid-game (no join) gets its era
// from its packets.
func TestEraInference(t *testing.T) {
	tests := []struct {
		name    string
		packets [][]byte // client -> server first, then alternate
		era     decode.Version
	}{
		{"legacy stdf", [][]byte{lCdat(1, 1000), lStdf(300)}, decode.Legacy},
		{"modern stdf", [][]byte{mCdat(1, 1000), mStdf(300)}, decode.Modern},
		{"modern stak", [][]byte{mStak(1, 77)}, decode.Modern},
		{"legacy sdat", [][]byte{lCdat(1, 1000), lSdat}, decode.Legacy},
		{"legacy 5678", [][]byte{[]byte("1234"), []byte("5678\x00")}, decode.Legacy},
		{"modern 5678", [][]byte{[]byte("1234"), []byte("5678")}, decode.Modern},
	}
	for _, tt := range tests {
		f := newFeeder(t, decode.VersionUnknown)
		for i, p := range tt.packets {
			src, dst := cliA, eph1
			if i%2 == 1 {
				src, dst = dst, src
			}
			f.send(src, dst, p)
		}
		convs := f.tr.Conversations()
		if len(convs) != 1 || convs[0].Version != tt.era {
			t.Errorf("%s: conversations %v, want one of era %s", tt.name, convs, tt.era)
			continue
		}
		// A packet that fits both eras now decodes in the inferred one.
		cdat := lCdat(1, 4242)
		if tt.era == decode.Modern {
			cdat = mCdat(1, 4242)
		}
		if r := f.send(cliA, eph1, cdat); r.era != tt.era || r.frame != 4242 {
			t.Errorf("%s: cdat decoded as %s frame %d", tt.name, r.era, r.frame)
		}
	}
	// With no evidence at all, a packet that fits both eras gets the era
	// whose frame number is plausible.
	for _, tt := range []struct {
		p   []byte
		era decode.Version
	}{{lCdat(1, 1234), decode.Legacy}, {mCdat(1, 1234), decode.Modern}} {
		f := newFeeder(t, decode.VersionUnknown)
		if r := f.send(cliA, eph1, tt.p); r.kind != session.Game || r.era != decode.VersionUnknown || r.frame != 1234 {
			t.Errorf("lone cdat: kind %s era %s frame %d (want era unknown, frame 1234)", r.kind, r.era, r.frame)
		}
	}
}

// TestForcedEra: --era overrides inference for every conversation.
func TestForcedEra(t *testing.T) {
	f := newFeeder(t, decode.Legacy)
	legacySession(f)
	for _, c := range f.tr.Conversations() {
		if c.Version != decode.Legacy {
			t.Errorf("forced legacy: conversation era %s", c.Version)
		}
	}
	if f.tr.Stats.Game.Packets != 7 || f.tr.Stats.Eras[decode.Legacy] != 7 {
		t.Errorf("forced legacy on a legacy session: %+v", f.tr.Stats)
	}
	// Forcing the wrong era: modern-only packets are malformed, a cdat is
	// read big-endian.
	f = newFeeder(t, decode.Legacy)
	f.send(cliB, listen, []byte("1234"))
	if r := f.send(eph2, cliB, []byte("5678")); r.kind != session.Malformed || r.era != decode.Legacy {
		t.Errorf("modern 5678 forced legacy: %s %s", r.kind, r.era)
	}
	if r := f.send(cliB, eph2, mCjon(5, "bravo")); r.kind != session.Malformed || r.era != decode.Legacy || !errors.Is(r.err, decode.ErrUnknown) {
		t.Errorf("cjon forced legacy: %s %s %v", r.kind, r.era, r.err)
	}
	if r := f.send(cliB, eph2, mCdat(2, 1)); r.kind != session.Game || r.era != decode.Legacy || r.frame != 1<<24 {
		t.Errorf("modern cdat forced legacy: %s %s frame %d", r.kind, r.era, r.frame)
	}
	if c := f.tr.Conversations()[0]; c.Version != decode.Legacy {
		t.Errorf("conversation era %s", c.Version)
	}
	f = newFeeder(t, decode.Modern)
	modernSession(f)
	if f.tr.Stats.Game.Packets != 8 || f.tr.Stats.Eras[decode.Modern] != 8 || f.tr.Conversations()[0].Version != decode.Modern {
		t.Errorf("forced modern on a modern session: %+v", f.tr.Stats)
	}
}

func TestServerFull(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	f.send(cliA, listen, []byte("1234"))
	f.send(eph1, cliA, []byte("5678"))
	f.send(cliA, eph1, mCjon(3, "late"))
	f.send(eph2, cliA, mSjon(99, 0))
	c := f.tr.Conversations()[0]
	if c.Player != -1 || c.Hostname != "late" || c.Color != 3 {
		t.Errorf("refused client: player %d hostname %q color %d", c.Player, c.Hostname, c.Color)
	}
}

func TestNameDirStats(t *testing.T) {
	f := newFeeder(t, decode.VersionUnknown)
	modernSession(f)
	names := f.tr.Stats.Names()
	for i := 1; i < len(names); i++ {
		a, b := names[i-1], names[i]
		if a.Name > b.Name || a.Name == b.Name && a.Dir >= b.Dir {
			t.Errorf("Names not sorted: %v", names)
		}
	}
	per := f.tr.Stats.PerName()
	if per["1234"] != 1 || per["stak"] != 1 || per["sjon"] != 1 || len(per) != 8 {
		t.Errorf("PerName %v", per)
	}
	if c := f.tr.Stats.ByName[session.NameDir{Name: "stdf", Dir: decode.S2C}]; c == nil || c.Packets != 1 || c.Bytes != 523 {
		t.Errorf("ByName stdf s2c %+v", c)
	}
}
