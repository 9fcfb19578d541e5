package decode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

func TestRefResolves(t *testing.T) {
	cases := []struct {
		field   string
		packets []string
		layouts int    // layouts resolved
		err     string // substring of the error, "" for none
	}{
		{"frame", []string{"cdat"}, 3, ""},            // legacy, u8 (modern…2024-05b), int32 (2024-06 on)
		{"player", []string{"SJON", "sjon"}, 3, ""},   // SJON, sjon u8, sjon int32
		{"src", []string{"stdf"}, 4, ""},              // legacy, modern, 2024-05b, 2024-06
		{"slsn", []string{"stdf", "sjon"}, 5, ""},     // the legacy stdf has none
		{"ack_frame", []string{"stak"}, 2, ""},        // the legacy stak names it frame
		{"hostname", []string{"CJON", "cjon"}, 4, ""}, // Str16 three times, text of a length from 2026
		{"nosuch", []string{"stdf"}, 0, `no layout of packet "stdf" has field "nosuch"`},
		{"frame", []string{"cdta"}, 0, `no version has packet "cdta"`},
		{"frame", nil, 0, "names no packet"},
	}
	for _, c := range cases {
		r, err := decode.NewRef(c.field, c.packets...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("NewRef(%q, %q): error %v, want one with %q", c.field, c.packets, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewRef(%q, %q): %v", c.field, c.packets, err)
			continue
		}
		if len(r.Layouts()) != c.layouts || r.Name() != c.field {
			t.Errorf("NewRef(%q, %q): %d layouts, name %q", c.field, c.packets, len(r.Layouts()), r.Name())
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRef of a missing field did not panic")
		}
	}()
	decode.MustRef("nosuch", "stdf")
}

// TestKindRefs checks the refs by kind: every layout of the kind that has
// the field, and an error when none has.
func TestKindRefs(t *testing.T) {
	r := decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleLevel)
	if n := len(r.Layouts()); n != 1 || r.Name() != "level" {
		t.Errorf("the level of a dif piece: %d layouts, name %q", n, r.Name())
	}
	r = decode.MustKindRoleRef(decode.KindDifAck, decode.RoleLevelSeq)
	if n := len(r.Layouts()); n != 1 || r.Layouts()[0].Versions().Has(decode.Modern) {
		t.Errorf("the level sequence of an ack: %d layouts, the first of %s", n, r.Layouts()[0].Versions())
	}
	if _, err := decode.NewKindRef(decode.KindProbe, "nosuch"); err == nil || !strings.Contains(err.Error(), "a probe packet") {
		t.Errorf("a probe's missing field: error %v", err)
	}
	if _, err := decode.NewKindRoleRef(decode.KindFileAck, decode.RoleLevel); err == nil {
		t.Error("a file ack has no level, but the ref resolved")
	}
}

// TestRefReadsDecodedAndRaw checks, for every integer field of every
// layout, that a Ref reads the value that was encoded, both from the
// decoded packet and straight from the payload (Peek, at the offset the
// layout implies).
func TestRefReadsDecodedAndRaw(t *testing.T) {
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			p := fill(t, l)
			payload := decode.Encode(nil, p)
			var pk decode.Packet
			if err := decode.Decode(&pk, payload, era); err != nil {
				t.Fatalf("%s %s: %v", era, l.Name, err)
			}
			fixed := true
			for i, f := range l.Fields {
				r := decode.MustRef(f.Name, l.Name)
				v, ok := r.Value(&pk)
				if !ok {
					t.Errorf("%s %s.%s: not read", era, l.Name, f.Name)
					continue
				}
				want := p.Values[i]
				if v.Int != want.Int || v.Float != want.Float || string(v.Bytes) != string(want.Bytes) && f.Type != decode.Str16 {
					t.Errorf("%s %s.%s: %+v, encoded %+v", era, l.Name, f.Name, v, want)
				}
				switch f.Type {
				case decode.U8, decode.S8, decode.U16, decode.I32:
					got, ok := r.Peek(l, payload)
					if fixed && (!ok || got != want.Int) {
						t.Errorf("%s %s.%s: Peek %d %v, encoded %d", era, l.Name, f.Name, got, ok, want.Int)
					}
					if !fixed && ok {
						t.Errorf("%s %s.%s after a variable field: Peek succeeded", era, l.Name, f.Name)
					}
					if _, ok := r.Peek(l, payload[:4]); ok {
						t.Errorf("%s %s.%s: Peek of the name alone succeeded", era, l.Name, f.Name)
					}
				default:
					if _, ok := r.Peek(l, payload); ok {
						t.Errorf("%s %s.%s (%s): Peek succeeded", era, l.Name, f.Name, f.Type)
					}
				}
				if f.Type.Size() == 0 {
					fixed = false
				}
			}
		}
	}
}

func TestRefOtherLayout(t *testing.T) {
	r := decode.MustRef("frame", "cdat")
	p := decode.MustNew(decode.Legacy, "stak").Set("frame", 77)
	if v, ok := r.Int(p); ok {
		t.Errorf("cdat frame read from a stak: %d", v)
	}
	if _, ok := r.Peek(p.Layout, decode.Encode(nil, p)); ok {
		t.Error("cdat frame peeked in a stak")
	}
	var unknown decode.Packet
	decode.Decode(&unknown, []byte("zzzz"), decode.Modern)
	if _, ok := r.Int(&unknown); ok {
		t.Error("read from an unknown packet")
	}
	// A short packet has no value for the fields it lacks.
	var short decode.Packet
	decode.Decode(&short, []byte("cdat\x01\x02"), decode.Modern)
	if _, ok := r.Int(&short); ok {
		t.Error("frame read from a cut cdat")
	}
	if n, ok := decode.MustRef("player", "cdat").Int(&short); !ok || n != 1 {
		t.Errorf("player of a cut cdat: %d %v", n, ok)
	}
}

func TestIntOfMissingFieldPanicsInTests(t *testing.T) {
	p := decode.MustNew(decode.Legacy, "stak").Set("frame", 9)
	if got := p.Int("frame"); got != 9 {
		t.Fatalf("Int(frame) = %d", got)
	}
	if got := decode.MustNew(decode.Legacy, "sdak").Int("fps_chase"); got != 0 {
		t.Fatalf("absent optional field: %d", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `stak has no field "ack_frame"`) {
			t.Errorf("recovered %v", r)
		}
	}()
	p.Int("ack_frame")
}

// TestProtocolConstants ties the constants to the layout table and to the
// wire facts they stand for.
func TestProtocolConstants(t *testing.T) {
	for _, era := range decode.Versions() {
		l := decode.Lookup(era, []byte("stdf"))
		if l == nil {
			t.Fatalf("%s: no stdf", era)
		}
		// A count of a byte holds MaxPieces; an int32 count is held to it
		// by Decode.
		switch typ := l.Fields[l.Field("count")].Type; {
		case typ == decode.U8 && decode.MaxPieces != 255:
			t.Errorf("%s stdf count is %s; MaxPieces %d", era, typ, decode.MaxPieces)
		case typ == decode.I32:
			p := decode.MustNew(era, "stdf").Set("count", decode.MaxPieces+1).Set("seq", 0)
			var got decode.Packet
			if err := decode.Decode(&got, decode.Encode(nil, p), era); !errors.Is(err, decode.ErrInvalid) {
				t.Errorf("%s stdf of %d pieces: %v", era, decode.MaxPieces+1, err)
			}
		}
	}
	if decode.ListenPort != 24785 || decode.Modern.PieceSize() != 1000 || decode.Newest.PieceSize() != 1400 || decode.MaxPlayer != 7 || decode.PlayerServerFull != 99 {
		t.Error("protocol constants differ from the protocol description")
	}
	for n, want := range map[int][2]bool{-1: {false, false}, 0: {true, false}, 1: {true, true}, 7: {true, true}, 8: {false, false}, 99: {false, false}} {
		if (n >= decode.MinPlayer && n <= decode.MaxPlayer) != want[0] || decode.ClientPlayer(n) != want[1] {
			t.Errorf("player %d: valid %v client %v, want %v", n, (n >= decode.MinPlayer && n <= decode.MaxPlayer), decode.ClientPlayer(n), want)
		}
	}
}

// Has follows the optional field: present in the 25-byte sdak, absent in
// the 21-byte one, and never in a packet of another layout.
func TestRefHas(t *testing.T) {
	r := decode.MustRef("fps_chase", "sdak")
	for _, tt := range []struct {
		name string
		p    *decode.Packet
		want bool
	}{
		{"sdak 25 bytes", decode.MustNew(decode.Legacy, "sdak").Set("fps_chase", 42), true},
		{"sdak 21 bytes", decode.MustNew(decode.Legacy, "sdak").Drop("fps_chase"), false},
		{"stak", decode.MustNew(decode.Legacy, "stak"), false},
	} {
		var p decode.Packet
		if err := decode.Decode(&p, decode.Encode(nil, tt.p), decode.Legacy); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := r.Has(&p); got != tt.want {
			t.Errorf("%s: Has = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A Ref by role finds the field the tables mark, whatever its name and
// position in each layout.
func TestRoleRef(t *testing.T) {
	for _, tt := range []struct {
		role    decode.Role
		packets []string
		name    string // the field's name, "" when it must fail
	}{
		{decode.RolePieceSeq, []string{"stdf", "snfo", "sfil"}, "seq"},
		{decode.RolePieceCount, []string{"stdf", "snfo", "sfil"}, "count"},
		{decode.RolePieceStart, []string{"stdf", "snfo", "sfil"}, "start"},
		{decode.RoleSize, []string{"stdf"}, "size"},
		{decode.RoleDifBase, []string{"stdf"}, "src"},
		{decode.RoleFrame, []string{"stdf"}, "dst"},
		{decode.RolePlayer, []string{"cdat", "stak"}, "player"},
		{decode.RolePieceSeq, []string{"stdf", "cdat"}, ""},
		{decode.RoleNone, []string{"cdat"}, ""},
	} {
		r, err := decode.NewRoleRef(tt.role, tt.packets...)
		if tt.name == "" {
			if err == nil {
				t.Errorf("role %d in %v resolved to %s", tt.role, tt.packets, r.Name())
			}
			continue
		}
		if err != nil {
			t.Errorf("role %d in %v: %v", tt.role, tt.packets, err)
			continue
		}
		if r.Name() != tt.name {
			t.Errorf("role %d in %v: field %s, want %s", tt.role, tt.packets, r.Name(), tt.name)
		}
		for _, l := range r.Layouts() {
			if l.Fields[l.Field(tt.name)].Role != tt.role {
				t.Errorf("%s %s: %s is not the field of role %d", l.First(), l.Name, tt.name, tt.role)
			}
		}
	}
	p := decode.MustNew(decode.Modern, "stdf").Set("seq", 2).Set("count", 5).Set("start", 2000)
	var got decode.Packet
	if err := decode.Decode(&got, decode.Encode(nil, p), decode.Modern); err != nil {
		t.Fatal(err)
	}
	if n, ok := decode.MustRoleRef(decode.RolePieceStart, "stdf").Int(&got); !ok || n != 2000 {
		t.Errorf("start of a decoded stdf: %d %v", n, ok)
	}
}
