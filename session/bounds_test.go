package session_test

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// endpoint returns a distinct endpoint for every i (10.x.y.z:port).
func endpoint(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), uint16(30000+i%1000))
}

// TestManyClients: clients past MaxConversations share the overflow
// conversation, are counted, and each record still names its own client.
func TestManyClients(t *testing.T) {
	const n = session.MaxConversations + 500
	f := newFeeder(t, decode.VersionUnknown)
	for i := 0; i < n; i++ {
		cli := endpoint(i)
		d := &source.Datagram{N: i + 1, TS: t0, Src: cli, Dst: eph1, Payload: lCdat(1, 300), Length: 10}
		r := f.tr.Process(d)
		if r.Kind != session.Game || r.Client != cli || r.Dir != decode.C2S {
			t.Fatalf("client %d: kind %s, client %v", i, r.Kind, r.Client)
		}
		if tracked := i < session.MaxConversations; tracked != (r.Conv.ID != 0) {
			t.Fatalf("client %d: conversation %d", i, r.Conv.ID)
		}
		// The server answers: the record names the client it went to.
		d = &source.Datagram{N: i + 1, TS: t0, Src: eph1, Dst: cli, Payload: lSdat, Length: len(lSdat)}
		if r := f.tr.Process(d); r.Client != cli || r.Dir != decode.S2C {
			t.Fatalf("reply to client %d: client %v", i, r.Client)
		}
	}
	convs := f.tr.Conversations()
	if len(convs) != session.MaxConversations+1 {
		t.Fatalf("%d conversations", len(convs))
	}
	over := convs[len(convs)-1]
	if over.ID != 0 || over.Client.IsValid() || over.Packets != 2*500 {
		t.Errorf("overflow conversation %+v", *over)
	}
	for _, id := range []int{0, 1, 500, session.MaxConversations} {
		if c, want := f.tr.Conversation(id), convs[(id+len(convs)-1)%len(convs)]; c != want {
			t.Errorf("Conversation(%d) = %p, want %p", id, c, want)
		}
	}
	if c := f.tr.Conversation(session.MaxConversations + 1); c != nil {
		t.Errorf("Conversation(%d) = %+v, want none", session.MaxConversations+1, *c)
	}
	if u := f.tr.Stats.Untracked; u.Conversations != 500 || u.AtLeast || !u.Any() {
		t.Errorf("untracked %+v, want 500 conversations", u)
	}
}

// TestManyServers: server endpoints past MaxServers are counted, not kept.
func TestManyServers(t *testing.T) {
	const n = session.MaxServers + 300
	f := newFeeder(t, decode.Legacy)
	for i := 0; i < n; i++ {
		f.send(cliA, endpoint(i), lCdat(1, 300))
		f.send(cliA, endpoint(i), lCdat(1, 301)) // the same server again is not counted again
	}
	if got := len(f.tr.Conversations()); got != 1 {
		t.Errorf("%d conversations", got)
	}
	if u := f.tr.Stats.Untracked; u.Servers != 300 || u.Conversations != 0 {
		t.Errorf("untracked %+v, want 300 servers", u)
	}
}

// TestManyUnknownNames: unknown names past MaxNames are counted together.
func TestManyUnknownNames(t *testing.T) {
	const n = session.MaxNames + 700
	f := newFeeder(t, decode.VersionUnknown)
	legacySession(f)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("z%03d", i)
		if r := f.send(cliB, listen, []byte(name+"xyz")); r.kind != session.Unknown {
			t.Fatalf("%s: %s", name, r.kind)
		}
	}
	// Known names still count one by one after the flood.
	f.send(cliA, eph1, lCdat(1, 301))
	st := f.tr.Stats
	if c := st.ByName[session.NameDir{Name: "cdat", Dir: decode.C2S}]; c == nil || c.Packets != 2 {
		t.Errorf("cdat count %+v", c)
	}
	if u := st.Untracked; u.NameKeys != 700 || u.Names.Packets != 700 || u.Names.Bytes != 700*7 {
		t.Errorf("untracked %+v, want 700 names", u)
	}
	counted := st.Untracked.Names.Packets
	unknownKeys := 0
	for k, c := range st.ByName {
		counted += c.Packets
		if !decode.Known([]byte(k.Name)) {
			unknownKeys++
		}
	}
	if unknownKeys != session.MaxNames || counted != st.Game.Packets+st.Unknown.Packets+st.Malformed.Packets {
		t.Errorf("%d unknown keys, %d packets counted of %+v", unknownKeys, counted, st)
	}
	m := map[session.NameDir]*session.Count{}
	for i := 0; i < 2*session.MaxNames+2*decode.NumLayouts(); i++ {
		session.AddName(m, session.NameDir{Name: fmt.Sprintf("y%03d", i)}, 1)
	}
	if len(m) != session.MaxNames+2*decode.NumLayouts() || !session.AddName(m, session.NameDir{Name: "stdf", Dir: decode.S2C}, 5) {
		t.Errorf("AddName: %d keys", len(m))
	}
}

// rejoin is one handshake and join of client A: the handshake retried once,
// as a client does when the reply is slow.
func rejoin(f *feeder) {
	f.send(cliA, listen, []byte("1234"))
	f.send(cliA, listen, []byte("1234"))
	f.send(eph1, cliA, []byte("5678\x00"))
	f.send(cliA, eph1, lCJON(8, "alpha"))
	f.send(eph1, cliA, lSJON(1, 11))
}

// TestRejoins: each rejoin of an endpoint starts a new conversation up to
// MaxSessions; further ones go on with the last and are counted.
func TestRejoins(t *testing.T) {
	const n = 6000
	f := newFeeder(t, decode.VersionUnknown)
	for i := 0; i < n; i++ {
		rejoin(f)
	}
	convs := f.tr.Conversations()
	if len(convs) != session.MaxSessions {
		t.Fatalf("%d conversations, want %d", len(convs), session.MaxSessions)
	}
	for i, c := range convs {
		if c.Session != i+1 || c.Client != cliA || c.ID != i+1 {
			t.Errorf("conversation %d: session %d, client %v, ID %d", i, c.Session, c.Client, c.ID)
		}
		if i < len(convs)-1 && c.Packets != 5 {
			t.Errorf("conversation %d: %d packets", i, c.Packets)
		}
	}
	if last := convs[len(convs)-1]; last.Packets != 5*(n-session.MaxSessions+1) || last.Player != 1 || last.Hostname != "alpha" {
		t.Errorf("last conversation %+v", *last)
	}
	if u := f.tr.Stats.Untracked; u.Rejoins != n-session.MaxSessions || u.Conversations != 0 {
		t.Errorf("untracked %+v, want %d rejoins", u, n-session.MaxSessions)
	}
}

// TestHostileMemory feeds a hundred thousand distinct clients, servers and
// unknown names: what the tracker retains stays within a few MB (one
// conversation per client alone would be tens of MB).
func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: feeds 300k datagrams")
	}
	const n = 100_000
	tr := session.NewTracker(decode.VersionUnknown)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cdat := lCdat(1, 300)
	name := []byte("a000")
	for i := 0; i < n; i++ {
		ts := t0.Add(time.Duration(i) * time.Microsecond)
		tr.Process(&source.Datagram{N: 3*i + 1, TS: ts, Src: endpoint(i), Dst: eph1, Payload: cdat, Length: len(cdat)})
		tr.Process(&source.Datagram{N: 3*i + 2, TS: ts, Src: cliA, Dst: endpoint(i), Payload: cdat, Length: len(cdat)})
		name[1], name[2], name[3] = 'a'+byte(i/676%26), 'a'+byte(i/26%26), 'a'+byte(i%26)
		name[0] = 'A' + byte(i/17576)
		tr.Process(&source.Datagram{N: 3*i + 3, TS: ts, Src: cliB, Dst: listen, Payload: name, Length: 4})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	u := tr.Stats.Untracked
	t.Logf("retained %.1f MB; untracked %+v", float64(grown)/(1<<20), u)
	if grown > 8<<20 {
		t.Errorf("tracker retains %d MB after %d hostile datagrams", grown>>20, 3*n)
	}
	// Distinct values past the bounds are counted up to MaxUntracked.
	if m := session.MaxUntracked; u.Conversations != m || u.Servers != m || u.NameKeys != m || !u.AtLeast || u.Names.Packets != n-session.MaxNames {
		t.Errorf("untracked %+v", u)
	}
	runtime.KeepAlive(tr)
}
