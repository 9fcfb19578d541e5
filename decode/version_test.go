package decode_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// TestVersionNames checks every name and alias users type, and that legacy
// and modern keep their names and numbers.
func TestVersionNames(t *testing.T) {
	for in, want := range map[string]string{
		"legacy": "legacy", "LEGACY": "legacy", "2022-12": "legacy", "modern": "modern", "2024-02": "modern",
		"m1": "2024-02b", "M2": "2024-02b", "n1": "2024-04", "n2": "2024-05", "n3": "2024-05b", "i32": "2024-06",
		"aug-2024": "2024-06", "j1": "2026-01", "j2": "2026-01b", "head": "2026-07", "2026-07": "2026-07",
	} {
		v, err := decode.ParseVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", "auto", " Auto "} {
		if v, err := decode.ParseVersion(in); err != nil || v != decode.VersionUnknown {
			t.Errorf("ParseVersion(%q) = %v, %v", in, v, err)
		}
	}
	if _, err := decode.ParseVersion("2019"); err == nil || !strings.Contains(err.Error(), "2026-07") {
		t.Errorf("ParseVersion(2019): %v, want an error listing the versions", err)
	}
	if decode.Legacy.String() != "legacy" || decode.Modern.String() != "modern" || decode.Newest.String() != "2026-07" {
		t.Errorf("legacy %s, modern %s, newest %s", decode.Legacy, decode.Modern, decode.Newest)
	}
	if got := strings.Join(decode.VersionNames(), " "); got != "legacy modern 2024-02b 2024-04 2024-05 2024-05b 2024-06 2026-01 2026-01b 2026-07" {
		t.Errorf("versions: %s", got)
	}
	if decode.VersionUnknown.String() != "unknown" || decode.VersionUnknown.Known() || decode.VersionUnknown.Info() != nil {
		t.Error("VersionUnknown is not unknown")
	}
}

// TestVersionFacts ties each version's description to the wire facts of
// the game's version notes (protocol-versions.md): byte order, handshake,
// one server socket, piece size, state sizes, level sequence and level on
// the wire, and which layouts a version keeps from the one before.
func TestVersionFacts(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		bigEndian, handshake   bool
		shared                 bool
		pieceSize, stateSize   int
		seqOnAck, levelOnDif   bool
		sync                   decode.Sync
		stdfHeader, stak, cjon int // lengths; cjon -1 when variable
	}{
		{"legacy", true, true, false, 1000, 106144, false, false, decode.GameMoves, 22, 10, 21},
		{"modern", false, true, false, 1000, 112384, false, false, decode.Rewind, 23, 54, 21},
		{"2024-02b", false, true, false, 1000, 112480, false, false, decode.Rewind, 23, 54, 21},
		{"2024-04", false, false, true, 1000, 112480, false, false, decode.Rewind, 23, 54, 21},
		{"2024-05", false, false, true, 1400, 112480, false, false, decode.Rewind, 23, 54, 21},
		{"2024-05b", false, false, true, 1400, 112480, false, false, decode.Rewind, 23, 54, 21},
		{"2024-06", false, false, true, 1400, 112480, true, true, decode.Rewind, 36, 64, 24},
		{"2026-01", false, false, true, 1400, 112576, true, true, decode.Rewind, 36, 64, -1},
		{"2026-01b", false, false, true, 1400, 112704, true, true, decode.Rewind, 36, 64, -1},
		{"2026-07", false, false, true, 1400, 113344, true, true, decode.Rewind, 36, 64, -1},
	} {
		v := decode.MustParseVersion(tt.name)
		i := v.Info()
		if i.BigEndian != tt.bigEndian || v.Has(decode.KindHandshake) != tt.handshake || i.SharedServerSocket != tt.shared ||
			v.PieceSize() != tt.pieceSize || !v.StateSize(tt.stateSize) || len(i.StateSizes) != 1 ||
			v.LevelSeqOn(decode.KindDifAck) != tt.seqOnAck || v.LevelSeqOn(decode.KindInput) != tt.seqOnAck ||
			(v.Kind(decode.KindDifPiece).FieldByRole(decode.RoleLevel) >= 0) != tt.levelOnDif || i.Sync != tt.sync {
			t.Errorf("%s: %+v", tt.name, i)
		}
		if got := v.Kind(decode.KindDifPiece).MinLen(); got != tt.stdfHeader {
			t.Errorf("%s: stdf header %d bytes, want %d", tt.name, got, tt.stdfHeader)
		}
		if got := v.Kind(decode.KindDifAck).MaxLen(); got != tt.stak {
			t.Errorf("%s: stak %d bytes, want %d", tt.name, got, tt.stak)
		}
		if got := v.Kind(decode.KindJoinRequest).MaxLen(); got != tt.cjon {
			t.Errorf("%s: cjon %d bytes, want %d", tt.name, got, tt.cjon)
		}
		// Every version has the packets of the netgame.
		for _, k := range []decode.Kind{decode.KindJoinRequest, decode.KindJoinReply, decode.KindInput, decode.KindDifPiece, decode.KindDifAck} {
			if !v.Has(k) {
				t.Errorf("%s has no %s", tt.name, k)
			}
		}
		if v.Has(decode.KindGameMoves) != (tt.sync == decode.GameMoves) || v.Has(decode.KindProbe) == (tt.sync == decode.GameMoves) {
			t.Errorf("%s: game moves %v, probes %v", tt.name, v.Has(decode.KindGameMoves), v.Has(decode.KindProbe))
		}
		if v.Has(decode.KindSaveResult) != (tt.shared) || v.Has(decode.KindLog) != tt.seqOnAck {
			t.Errorf("%s: srrf %v clog %v", tt.name, v.Has(decode.KindSaveResult), v.Has(decode.KindLog))
		}
		// The drop rule is the game's: 100 frames without an sdak in the
		// legacy era, 200 without a stak after frame 300 of a level later.
		d := i.Drop
		if tt.sync == decode.GameMoves && (d.Frames != 100 || d.Ack != decode.KindGameMovesAck) ||
			tt.sync == decode.Rewind && (d.Frames != 200 || d.After != 300 || d.Grace != 200 || d.Ack != decode.KindDifAck) {
			t.Errorf("%s: drop rule %+v", tt.name, d)
		}
	}
	// A version that keeps a packet shares its layout.
	same := func(a, b, name string) bool {
		return decode.MustParseVersion(a).Layout(name) == decode.MustParseVersion(b).Layout(name)
	}
	for _, tt := range []struct {
		a, b, name string
		shared     bool
	}{
		{"modern", "2024-02b", "stdf", true}, {"modern", "2024-04", "stdf", true}, {"2024-05", "2024-05b", "stdf", false},
		{"2024-05", "2024-05b", "cdat", true}, {"2024-05b", "2024-06", "cdat", false}, {"modern", "2026-07", "ping", true},
		{"modern", "2026-07", "sfak", true}, {"2024-06", "2026-01", "cjon", false}, {"2026-01", "2026-07", "cjon", true},
		{"2024-06", "2026-07", "stdf", true}, {"legacy", "modern", "cdat", false},
	} {
		if same(tt.a, tt.b, tt.name) != tt.shared {
			t.Errorf("%s and %s share %s: %v, want %v", tt.a, tt.b, tt.name, !tt.shared, tt.shared)
		}
	}
	if decode.MustParseVersion("2024-04").Has(decode.KindHandshake) || decode.MustParseVersion("2024-04").Layout("1234") != nil {
		t.Error("2024-04 has a handshake")
	}
	// Siblings: the versions only the state size tells apart.
	for name, want := range map[string]string{
		"modern": "modern, 2024-02b", "2024-04": "2024-04, 2024-05", "2024-06": "2024-06",
		"2026-07": "2026-01, 2026-01b, 2026-07", "legacy": "legacy",
	} {
		if got := decode.MustParseVersion(name).Siblings().String(); got != want {
			t.Errorf("siblings of %s: %s, want %s", name, got, want)
		}
	}
}

// TestEveryLayoutHasAKind: every layout has a kind, a name has one kind in
// every version, and the kinds the engine relies on are of the names the
// protocol documents.
func TestEveryLayoutHasAKind(t *testing.T) {
	want := map[string]decode.Kind{"1234": decode.KindHandshake, "5678": decode.KindHandshakeReply, "CJON": decode.KindJoinRequest,
		"cjon": decode.KindJoinRequest, "SJON": decode.KindJoinReply, "sjon": decode.KindJoinReply, "cdat": decode.KindInput,
		"stdf": decode.KindDifPiece, "stak": decode.KindDifAck, "sdat": decode.KindGameMoves, "sdak": decode.KindGameMovesAck,
		"serr": decode.KindLateInput, "ping": decode.KindProbe, "pong": decode.KindProbeReply, "pang": decode.KindProbeEcho,
		"crfl": decode.KindFileRequest, "sfil": decode.KindFilePiece, "sfak": decode.KindFileAck, "srrf": decode.KindSaveResult,
		"cjrc": decode.KindRemoteJoin, "sjrc": decode.KindRemoteJoinReply, "rctl": decode.KindRemoteCommand,
		"snfo": decode.KindRemoteInfo, "clog": decode.KindLog, "JUNK": decode.KindPadding, "extr": decode.KindPadding}
	for _, l := range decode.AllLayouts() {
		if l.Kind != want[l.Name] {
			t.Errorf("%s: kind %s, want %s", l.Name, l.Kind, want[l.Name])
		}
		if decode.KindOf([]byte(l.Name)) != l.Kind {
			t.Errorf("KindOf(%s) = %s", l.Name, decode.KindOf([]byte(l.Name)))
		}
		if l.Versions() == 0 || l.First() == decode.VersionUnknown {
			t.Errorf("%s is of no version", l.Name)
		}
	}
	if len(want) != decode.NumNames() {
		t.Errorf("%d names, %d kinds listed", decode.NumNames(), len(want))
	}
	for _, k := range decode.Kinds() {
		if strings.HasPrefix(k.String(), "kind ") || k.String() == "unknown" {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// TestEnumerations: the enumerations name the game's values, and the ones
// shown appear in the summary and the JSON beside the number.
func TestEnumerations(t *testing.T) {
	for _, tt := range []struct {
		e    *decode.Enum
		v    int64
		name string
	}{
		{decode.JoinPlayers, 99, "server_full"}, {decode.PlayerStates, 64, "quit"}, {decode.PlayerStates, 71, "dropped_silent"},
		{decode.PlayerStates, 70, "dropped_sync"}, {decode.SaveResults, 0, "saved"}, {decode.SaveResults, 5, "transfer_off"},
		{decode.RemoteCommands, 20, "reload"}, {decode.LateInputs, 1, "late_cdat"}, {decode.MoveTypes, 5, "control_change"},
		{decode.LogTypes, 28, "stdf_pieces"},
	} {
		ev, ok := tt.e.Lookup(tt.v)
		if !ok || ev.Name != tt.name {
			t.Errorf("%s %d: %q %v, want %s", tt.e.Name, tt.v, ev.Name, ok, tt.name)
		}
		if v, ok := tt.e.Value(tt.name); !ok || v != tt.v {
			t.Errorf("%s %s: %d %v", tt.e.Name, tt.name, v, ok)
		}
	}
	p := decode.MustNew(decode.Newest, "srrf").Set("result", 5)
	var got decode.Packet
	decode.Decode(&got, decode.Encode(nil, p), decode.Newest)
	if s := string(got.AppendSummary(nil)); s != "result=5(transfer_off)" {
		t.Errorf("summary %q", s)
	}
	if js := string(got.AppendJSONFields(nil)); js != `{"result":5,"result_name":"transfer_off"}` {
		t.Errorf("JSON %s", js)
	}
	// The enumerations of the old packets are not shown, so their text is
	// as it always was.
	sjon := decode.MustNew(decode.Modern, "sjon").Set("player", 99)
	decode.Decode(&got, decode.Encode(nil, sjon), decode.Modern)
	if s := string(got.AppendSummary(nil)); !strings.Contains(s, "player=99 ") {
		t.Errorf("sjon summary %q", s)
	}
}

// TestSetMeant: encoding honours the recoveries decoding makes.
func TestSetMeant(t *testing.T) {
	p := decode.MustNew(decode.Legacy, "serr").SetMeant("c_sync", -300)
	q := decode.MustNew(decode.Legacy, "SJON").SetMeant("dm_damage", 5)
	var got decode.Packet
	decode.Decode(&got, decode.Encode(nil, p), decode.Legacy)
	if raw := got.Int("c_sync"); raw != 0xffd4 {
		t.Errorf("c_sync -300 sent as %#x, want 0xffd4", raw)
	}
	f := got.Layout.Fields[got.Layout.Field("c_sync")]
	if m, _ := f.Meant(got.Int("c_sync")); m != -300 {
		t.Errorf("c_sync meant %d", m)
	}
	decode.Decode(&got, decode.Encode(nil, q), decode.Legacy)
	if got.Int("dm_damage") != 1005 {
		t.Errorf("dm_damage 5 sent as %d", got.Int("dm_damage"))
	}
}

// stdfOf encodes a dif piece of version v: piece seq of count, size bytes.
func stdfOf(v decode.Version, seq, count, size int) []byte {
	data := make([]byte, size)
	p := decode.MustNewKind(v, decode.KindDifPiece).SetRole(decode.RoleFrame, 300).SetRole(decode.RoleDifBase, 290).
		SetRole(decode.RolePieceCount, int64(count)).SetRole(decode.RolePieceSeq, int64(seq)).
		SetRole(decode.RolePieceStart, int64(seq*v.PieceSize())).SetBytes("data", data)
	return decode.Encode(nil, p)
}

// TestFitsTellsVersionsApart follows protocol-versions.md section 8: the
// stdf header's arithmetic and piece size, the lengths of cjon, sjon, cdat,
// stak and srrf tell the families apart; what a packet cannot tell, it
// leaves open.
func TestFitsTellsVersionsApart(t *testing.T) {
	V := decode.MustParseVersion
	var scratch decode.Packet
	set := func(names ...string) decode.VersionSet {
		var s decode.VersionSet
		for _, n := range names {
			s = s.With(V(n))
		}
		return s
	}
	for _, tt := range []struct {
		what    string
		payload []byte
		clean   decode.VersionSet
	}{
		{"a full modern piece", stdfOf(decode.Modern, 0, 3, 1000), set("modern", "2024-02b", "2024-04")},
		{"the last modern piece", stdfOf(decode.Modern, 2, 3, 321), set("modern", "2024-02b", "2024-04")},
		{"a full 2024-05 piece", stdfOf(V("2024-05"), 0, 3, 1400), set("2024-05")},
		{"a full 2024-05b piece", stdfOf(V("2024-05b"), 0, 2, 1400), set("2024-05b")},
		{"a full piece of today", stdfOf(decode.Newest, 1, 3, 1400), set("2024-06", "2026-01", "2026-01b", "2026-07")},
		{"a legacy piece", stdfOf(decode.Legacy, 0, 2, 1000), set("legacy")},
		{"cjon of 24 bytes", decode.Encode(nil, decode.MustNew(V("2024-06"), "cjon").Set("color", 8).SetBytes("hostname", []byte("vm"))), set("2024-06")},
		{"cjon with a name", decode.Encode(nil, decode.MustNew(decode.Newest, "cjon").Set("color", 8).SetBytes("name", []byte("c1")).SetBytes("hostname", []byte("vm"))), set("2026-01", "2026-01b", "2026-07")},
		{"srrf of a byte", decode.Encode(nil, decode.MustNew(V("2024-04"), "srrf").Set("result", 5)), set("2024-04", "2024-05", "2024-05b")},
		{"srrf of an int", decode.Encode(nil, decode.MustNew(decode.Newest, "srrf").Set("result", 5)), set("2024-06", "2026-01", "2026-01b", "2026-07")},
		{"a handshake", []byte("1234"), set("legacy", "modern", "2024-02b")},
		{"a ping", decode.Encode(nil, decode.MustNew(decode.Modern, "ping").SetFloat("t0", 3)), decode.All() &^ set("legacy")},
	} {
		f := decode.Fits(tt.payload, &scratch)
		if f.Clean != tt.clean {
			t.Errorf("%s: fits %s, want %s", tt.what, f.Clean, tt.clean)
		}
		if f.Clean&^f.Decodes != 0 || f.Decodes&^f.Named != 0 {
			t.Errorf("%s: clean %s, decodes %s, named %s", tt.what, f.Clean, f.Decodes, f.Named)
		}
	}
	// A 10-byte cdat reads in both byte orders: the smaller frame tells.
	le := decode.Encode(nil, decode.MustNew(decode.Modern, "cdat").Set("player", 1).Set("frame", 302).Set("move", 3))
	be := decode.Encode(nil, decode.MustNew(decode.Legacy, "cdat").Set("player", 1).Set("frame", 302).Set("move", 3))
	for _, tt := range []struct {
		b    []byte
		want decode.Version
	}{{le, decode.Modern}, {be, decode.Legacy}} {
		f := decode.Fits(tt.b, &scratch)
		if p := decode.Plausible(tt.b, f.Clean, &scratch); !p.Has(tt.want) || p.Len() != 1 && p.Has(decode.Legacy) == p.Has(decode.Modern) {
			t.Errorf("cdat: plausible %s, want %s", p, tt.want)
		}
	}
}

// TestExplain: a packet of no version says why, briefly and per layout.
func TestExplain(t *testing.T) {
	var scratch decode.Packet
	b := append(stdfOf(decode.Newest, 0, 2, 1400), 0) // one byte too many
	if f := decode.Fits(b, &scratch); f.Decodes != 0 {
		t.Fatalf("a stdf one byte too long fits %s", f.Decodes)
	}
	reason, detail := decode.Explain(b, &scratch)
	if reason != "stdf header fits no known version" || len(detail) != 4 {
		t.Errorf("reason %q, detail %q", reason, detail)
	}
	if !slices.ContainsFunc(detail, func(s string) bool { return strings.HasPrefix(s, "2024-06…2026-07: ") }) {
		t.Errorf("detail names no range of versions: %q", detail)
	}
	reason, _ = decode.Explain([]byte("cjon\x01\x02\x03"), &scratch)
	if reason != "cjon of 7 bytes fits no known version" {
		t.Errorf("reason %q", reason)
	}
	var p decode.Packet
	if err := decode.DecodeUnrecognised(&p, b); err == nil || p.Layout != nil || p.NameString() != "stdf" || !strings.Contains(err.Error(), "fits no known version") {
		t.Errorf("DecodeUnrecognised: %v, layout %v, name %q", err, p.Layout, p.NameString())
	}
}
