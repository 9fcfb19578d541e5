package decode_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// fill gives every field of layout l a non-trivial value that still passes
// the layout's checks: unsigned bytes above 127, negative integers, doubles
// with a fraction, a hostname, a data piece and three group entries.
func fill(t testing.TB, l *decode.Layout) *decode.Packet {
	t.Helper()
	p, err := decode.New(l.First(), l.Name)
	if err != nil {
		t.Fatalf("New(%s, %q): %v", l.First(), l.Name, err)
	}
	for i, f := range l.Fields {
		switch f.Type {
		case decode.U8:
			if f.Role != decode.RoleCount { // AddEntry counts
				p.Set(f.Name, int64(200+i))
			}
		case decode.S8:
			p.Set(f.Name, int64(-100+i))
		case decode.U16:
			p.Set(f.Name, int64(0xbe00+i))
		case decode.I32:
			p.Set(f.Name, int64(-123456789-1000*i))
		case decode.F64:
			p.SetFloat(f.Name, -1234.5678+float64(i))
		case decode.Str16:
			p.SetBytes(f.Name, []byte(fmt.Sprintf("host-%d", i)))
		case decode.StrN:
			p.SetBytes(f.Name, []byte(fmt.Sprintf("text \"%d\" with\x00a NUL", i)))
		case decode.Data:
			data := make([]byte, 37)
			for k := range data {
				data[k] = byte(k*7 + i)
			}
			p.SetBytes(f.Name, data)
		case decode.Rest:
			p.SetBytes(f.Name, []byte{0, 0, 0, 0, 0, 0, 0, 0, 9})
		case decode.Group:
			for e := 0; e < 3; e++ {
				vals := make([]int64, len(f.Sub))
				for j, s := range f.Sub {
					switch s.Type {
					case decode.I32:
						vals[j] = int64(-5000 + 100*e + j)
					default:
						vals[j] = int64(250 - 10*e - j)
					}
				}
				p.AddEntry(vals...)
			}
		}
	}
	// Piece fields must satisfy the piece check.
	if l.Field("count") >= 0 {
		p.Set("seq", 1).Set("count", 3).Set("start", 1000)
	}
	return p
}

func groupEntrySize(l *decode.Layout) (per int, has bool) {
	for _, f := range l.Fields {
		if f.Type == decode.Group {
			for _, s := range f.Sub {
				per += s.Type.Size()
			}
			return per, true
		}
	}
	return 0, false
}

// wantLen is the encoded length of p computed from its values: 4 for the
// name, the fixed sizes of the fields present, the variable bytes and the
// group entries.
func wantLen(p *decode.Packet) int {
	n := 4
	for i, f := range p.Layout.Fields {
		if i >= len(p.Values) {
			break
		}
		switch f.Type {
		case decode.Data, decode.Rest:
			n += len(p.Values[i].Bytes)
		case decode.StrN:
			n += 5 + len(p.Values[i].Bytes)
		case decode.Group:
			per, _ := groupEntrySize(p.Layout)
			n += per * len(p.Entries) / len(f.Sub)
		default:
			n += f.Type.Size()
		}
	}
	return n
}

func str16(b []byte) []byte {
	var out [16]byte
	copy(out[:], b)
	return out[:]
}

// samePacket compares the values of two packets of one layout.
func samePacket(t *testing.T, want, got *decode.Packet) {
	t.Helper()
	l := want.Layout
	if got.Layout != l {
		t.Fatalf("layout: got %v, want %s %s", got.Layout, l.First(), l.Name)
	}
	if len(got.Values) != len(want.Values) {
		t.Fatalf("%d values decoded, want %d", len(got.Values), len(want.Values))
	}
	for i, f := range l.Fields {
		if i >= len(want.Values) {
			break
		}
		w, g := want.Values[i], got.Values[i]
		switch f.Type {
		case decode.F64:
			if math.Float64bits(w.Float) != math.Float64bits(g.Float) {
				t.Errorf("%s: got %v, want %v", f.Name, g.Float, w.Float)
			}
		case decode.Str16:
			if !bytes.Equal(str16(w.Bytes), g.Bytes) {
				t.Errorf("%s: got %q, want %q", f.Name, g.Bytes, str16(w.Bytes))
			}
		case decode.Data, decode.Rest, decode.StrN:
			if !bytes.Equal(w.Bytes, g.Bytes) {
				t.Errorf("%s: got % x, want % x", f.Name, g.Bytes, w.Bytes)
			}
		default:
			if w.Int != g.Int {
				t.Errorf("%s: got %d, want %d", f.Name, g.Int, w.Int)
			}
		}
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%d entry values decoded, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range want.Entries {
		if got.Entries[i].Int != want.Entries[i].Int {
			t.Errorf("entry value %d: got %d, want %d", i, got.Entries[i].Int, want.Entries[i].Int)
		}
	}
}

func TestEveryEraHasLayouts(t *testing.T) {
	for _, era := range decode.Versions() {
		if n := len(era.Layouts()); n < 10 {
			t.Errorf("%s era has only %d layouts", era, n)
		}
	}
}

// TestRoundTrip encodes every layout of both eras with every field set and
// decodes it again.
func TestRoundTrip(t *testing.T) {
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			t.Run(era.String()+"/"+l.Name, func(t *testing.T) {
				want := fill(t, l)
				b := decode.Encode(nil, want)
				if string(b[:4]) != l.Name {
					t.Fatalf("encoded name %q", b[:4])
				}
				if len(b) != wantLen(want) {
					t.Errorf("encoded %d bytes, want %d", len(b), wantLen(want))
				}
				if len(b) < l.MinLen() {
					t.Errorf("encoded %d bytes, MinLen is %d", len(b), l.MinLen())
				}
				if l.MaxLen() >= 0 && len(b) != l.MaxLen() {
					t.Errorf("encoded %d bytes, MaxLen is %d", len(b), l.MaxLen())
				}
				var got decode.Packet
				if err := decode.Decode(&got, b, era); err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if got.Err != nil || got.Version != era || got.NameString() != l.Name || got.Dir() != l.Dir {
					t.Fatalf("decoded Err %v era %s name %q dir %s", got.Err, got.Version, got.NameString(), got.Dir())
				}
				if !bytes.Equal(got.Raw, b) {
					t.Errorf("Raw is not the payload")
				}
				samePacket(t, want, &got)
				// Encoding the decoded packet gives the same bytes back.
				if again := decode.Encode(nil, &got); !bytes.Equal(again, b) {
					t.Errorf("re-encoded\n% x\nwant\n% x", again, b)
				}
				// Role fields come out through Player and Frame.
				for i, f := range l.Fields {
					switch f.Role {
					case decode.RolePlayer:
						if pl, ok := got.Player(); !ok || int64(pl) != got.Values[i].Int {
							t.Errorf("Player() = %d, %v; field %s is %d", pl, ok, f.Name, got.Values[i].Int)
						}
					case decode.RoleFrame:
						if fr, ok := got.Frame(); !ok || fr != got.Values[i].Int {
							t.Errorf("Frame() = %d, %v; field %s is %d", fr, ok, f.Name, got.Values[i].Int)
						}
					}
				}
				// The built packet and the decoded one render alike.
				if a, b := want.AppendTree(nil, ""), got.AppendTree(nil, ""); !bytes.Equal(a, b) {
					t.Errorf("tree of the built packet:\n%s\ndecoded:\n%s", a, b)
				}
				if a, b := want.AppendJSONFields(nil), got.AppendJSONFields(nil); !bytes.Equal(a, b) {
					t.Errorf("JSON of the built packet %s, decoded %s", a, b)
				}
				if a, b := want.AppendSummary(nil), got.AppendSummary(nil); !bytes.Equal(a, b) {
					t.Errorf("summary of the built packet %s, decoded %s", a, b)
				}
				// The JSON is valid and the tree names every field.
				js := got.AppendJSONFields(nil)
				if !json.Valid(js) {
					t.Errorf("invalid JSON %s", js)
				}
				tree := string(got.AppendTree(nil, ""))
				for _, f := range l.Fields {
					if !strings.Contains(tree, "] "+f.Name+" ") {
						t.Errorf("tree lacks field %s:\n%s", f.Name, tree)
					}
				}
			})
		}
	}
}

// TestRoundTripOptional drops the optional trailing fields.
func TestRoundTripOptional(t *testing.T) {
	n := 0
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			for i, f := range l.Fields {
				if !f.Optional {
					continue
				}
				n++
				p := fill(t, l).Drop(f.Name)
				b := decode.Encode(nil, p)
				if len(b) != l.MinLen() {
					t.Errorf("%s %s without %s: %d bytes, want MinLen %d", era, l.Name, f.Name, len(b), l.MinLen())
				}
				var got decode.Packet
				if err := decode.Decode(&got, b, era); err != nil {
					t.Fatalf("%s %s without %s: %v", era, l.Name, f.Name, err)
				}
				if got.Has(f.Name) || len(got.Values) != i {
					t.Errorf("%s %s: optional %s decoded from a short packet", era, l.Name, f.Name)
				}
				samePacket(t, p, &got)
			}
		}
	}
	if n == 0 {
		t.Fatal("no optional field in any layout (the legacy sdak has one)")
	}
}

// TestLayoutLengths checks the tables against the lengths protocol.md and
// the captures' manifests give (name included).
func TestLayoutLengths(t *testing.T) {
	tests := []struct {
		era      decode.Version
		name     string
		min, max int // max -1: variable
		dir      decode.Dir
	}{
		{decode.Legacy, "1234", 4, 4, decode.C2S},
		{decode.Legacy, "5678", 5, 5, decode.S2C},
		{decode.Legacy, "JUNK", 4, 4, decode.S2C},
		{decode.Legacy, "CJON", 21, 21, decode.C2S},
		{decode.Legacy, "SJON", 21, 21, decode.S2C},
		{decode.Legacy, "cdat", 10, 10, decode.C2S},
		{decode.Legacy, "sdat", 13, -1, decode.S2C},
		{decode.Legacy, "sdak", 21, 25, decode.C2S},
		{decode.Legacy, "serr", 17, 17, decode.S2C},
		{decode.Legacy, "stdf", 22, -1, decode.S2C},
		{decode.Legacy, "stak", 10, 10, decode.C2S},
		{decode.Modern, "1234", 4, 4, decode.C2S},
		{decode.Modern, "5678", 4, 4, decode.S2C},
		{decode.Modern, "cjon", 21, 21, decode.C2S},
		{decode.Modern, "sjon", 15, 15, decode.S2C},
		{decode.Modern, "cdat", 10, 10, decode.C2S},
		{decode.Modern, "stdf", 23, -1, decode.S2C},
		{decode.Modern, "stak", 54, 54, decode.C2S},
		{decode.Modern, "ping", 12, 12, decode.C2S},
		{decode.Modern, "pong", 20, 20, decode.S2C},
		{decode.Modern, "pang", 12, 12, decode.C2S},
		{decode.Modern, "crfl", 4, 4, decode.C2S},
		{decode.Modern, "sfil", 22, -1, decode.S2C},
		{decode.Modern, "sfak", 8, 8, decode.C2S},
		{decode.Modern, "cjrc", 4, 4, decode.C2S},
		{decode.Modern, "sjrc", 12, 12, decode.S2C},
		{decode.Modern, "rctl", 16, 16, decode.C2S},
		{decode.Modern, "snfo", 18, -1, decode.S2C},
		{decode.Modern, "extr", 4, -1, decode.S2C},
	}
	for _, tt := range tests {
		l := decode.Lookup(tt.era, []byte(tt.name))
		if l == nil {
			t.Errorf("%s %s: no layout", tt.era, tt.name)
			continue
		}
		if l.MinLen() != tt.min || l.MaxLen() != tt.max || l.Dir != tt.dir {
			t.Errorf("%s %s: len %d..%d dir %s, want %d..%d %s", tt.era, tt.name, l.MinLen(), l.MaxLen(), l.Dir, tt.min, tt.max, tt.dir)
		}
	}
	// Names of one era are not in the other.
	for _, tt := range []struct {
		era  decode.Version
		name string
	}{
		{decode.Modern, "CJON"}, {decode.Modern, "SJON"}, {decode.Modern, "sdat"}, {decode.Modern, "sdak"},
		{decode.Modern, "serr"}, {decode.Modern, "JUNK"}, {decode.Legacy, "cjon"}, {decode.Legacy, "sjon"},
		{decode.Legacy, "ping"}, {decode.Legacy, "sfil"},
	} {
		if decode.Lookup(tt.era, []byte(tt.name)) != nil {
			t.Errorf("%s era has a layout for %s", tt.era, tt.name)
		}
	}
}

// TestFieldOffsets puts a marker into one field and checks where it lands,
// against the offsets in the manifests.
func TestFieldOffsets(t *testing.T) {
	tests := []struct {
		era    decode.Version
		name   string
		field  string
		offset int
	}{
		{decode.Legacy, "SJON", "level", 4},
		{decode.Legacy, "SJON", "frame", 6},
		{decode.Legacy, "SJON", "entry_pos", 10},
		{decode.Legacy, "SJON", "player", 15},
		{decode.Legacy, "SJON", "dm_damage", 18},
		{decode.Legacy, "SJON", "suicide_bullets", 20},
		{decode.Legacy, "sdak", "fps_chase", 21},
		{decode.Legacy, "serr", "c_sync", 9},
		{decode.Legacy, "stdf", "seq", 12},
		{decode.Legacy, "stdf", "size", 18},
		{decode.Legacy, "stak", "frame", 6},
		{decode.Modern, "sjon", "player", 12},
		{decode.Modern, "sjon", "slsn", 14},
		{decode.Modern, "stdf", "seq", 12},
		{decode.Modern, "stdf", "count", 13},
		{decode.Modern, "stdf", "slsn", 14},
		{decode.Modern, "stdf", "start", 15},
		{decode.Modern, "stdf", "size", 19},
		{decode.Modern, "stak", "ack_frame", 5},
		{decode.Modern, "stak", "client_frame", 9},
		{decode.Modern, "stak", "chase_fps", 13},
		{decode.Modern, "stak", "dsync", 21},
		{decode.Modern, "stak", "rewind", 29},
		{decode.Modern, "stak", "local_correction", 30},
		{decode.Modern, "stak", "remote_correction", 38},
		{decode.Modern, "stak", "cpu", 46},
		{decode.Modern, "cdat", "move", 9},
		{decode.Modern, "sfil", "size", 14},
		{decode.Modern, "sfil", "file_size", 18},
		{decode.Modern, "snfo", "size", 14},
		{decode.Modern, "pong", "t1", 12},
		{decode.Modern, "rctl", "value", 8},
	}
	for _, tt := range tests {
		l := decode.Lookup(tt.era, []byte(tt.name))
		if l == nil || l.Field(tt.field) < 0 {
			t.Errorf("%s %s has no field %s", tt.era, tt.name, tt.field)
			continue
		}
		f := l.Fields[l.Field(tt.field)]
		p := decode.MustNew(tt.era, tt.name)
		for _, g := range l.Fields { // every field present, zero
			if g.Type == decode.Data {
				p.SetBytes(g.Name, nil)
			} else if g.Type != decode.Group && g.Type != decode.Rest {
				p.Set(g.Name, 0)
			}
		}
		var want []byte
		switch f.Type {
		case decode.F64:
			p.SetFloat(tt.field, 1.5) // 3ff8000000000000, little-endian
			want = []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}
		default:
			p.Set(tt.field, 0x5a)
			want = make([]byte, f.Type.Size())
			if tt.era == decode.Legacy {
				want[len(want)-1] = 0x5a
			} else {
				want[0] = 0x5a
			}
		}
		b := decode.Encode(nil, p)
		if len(b) < tt.offset+len(want) || !bytes.Equal(b[tt.offset:tt.offset+len(want)], want) {
			t.Errorf("%s %s: %s not at offset %d: % x", tt.era, tt.name, tt.field, tt.offset, b)
		}
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecoverNegative(t *testing.T) {
	tests := []struct {
		raw uint32
		v   int64
	}{
		{0x000000ff, -1},
		{0x000000fe, -2},
		{0x000000f0, -16},
		{0x0000ff00, -256},
		{0x0000ffd4, -300},
		{0x00000001, -255},
		{0x00000000, 0},
		{0x00ff0000, -65536},
		{0x00ffff01, -65536 - 256 - 255},
	}
	for _, tt := range tests {
		if got := decode.RecoverNegative(tt.raw); got != tt.v {
			t.Errorf("RecoverNegative(%08x) = %d, want %d", tt.raw, got, tt.v)
		}
		if got := decode.EncodeNegative(tt.v); got != tt.raw {
			t.Errorf("EncodeNegative(%d) = %08x, want %08x", tt.v, got, tt.raw)
		}
	}
}

// TestNegativeRoundTrip checks RecoverNegative(EncodeNegative(v)) == v over
// many values down to -2^31+1, and that the encoding is the game's byte by
// byte truncating division.
func TestNegativeRoundTrip(t *testing.T) {
	check := func(v int64) {
		raw := decode.EncodeNegative(v)
		if got := decode.RecoverNegative(raw); got != v {
			t.Fatalf("RecoverNegative(EncodeNegative(%d) = %08x) = %d", v, raw, got)
		}
		// The game: byte k is (unsigned char)(v / 256^k % 256), C semantics.
		var game uint32
		for k := 0; k < 4; k++ {
			d := v / (int64(1) << (8 * k)) % 256
			game |= uint32(uint8(d)) << (8 * k)
		}
		if raw != game {
			t.Fatalf("EncodeNegative(%d) = %08x, the game writes %08x", v, raw, game)
		}
	}
	for v := int64(0); v >= -70000; v-- {
		check(v)
	}
	x := uint64(0x9e3779b97f4a7c15)
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		check(-int64(x % (1<<31 - 1)))
	}
	check(-(1<<31 - 1))
}

// TestLegacyQuirks decodes the legacy packets the manifests give as examples.
func TestLegacyQuirks(t *testing.T) {
	var p decode.Packet

	// SJON from the legacy manifest: level 4, frame 200, entry pos 2, 40 fps,
	// player 1, colour 11, dm bullets 0, damage 1005 - 1000 = 5, suicide 0.
	if err := decode.Decode(&p, unhex(t, "534a4f4e 0004 000000c8 00000002 28 01 0b 00 03ed 00"), decode.Legacy); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"level": 4, "frame": 200, "entry_pos": 2, "fps": 40, "player": 1,
		"color": 11, "dm_bullets": 0, "dm_damage": 1005, "suicide_bullets": 0} {
		if got := p.Int(name); got != want {
			t.Errorf("SJON %s = %d, want %d", name, got, want)
		}
	}
	dmg := &p.Layout.Fields[p.Layout.Field("dm_damage")]
	if m, differs := dmg.Meant(p.Int("dm_damage")); m != 5 || !differs {
		t.Errorf("SJON damage meant %d (%v), want 5", m, differs)
	}
	if s := string(p.AppendSummary(nil)); s != "level=4 frame=200 player=1 color=11" {
		t.Errorf("SJON summary %q", s)
	}
	if js := string(p.AppendJSONFields(nil)); !strings.Contains(js, `"dm_damage":5,"dm_damage_raw":1005`) {
		t.Errorf("SJON JSON %s", js)
	}

	// serr: c_sync raw 255 means -1.
	serr := decode.MustNew(decode.Legacy, "serr").Set("err_type", 1).Set("frame", 1234).
		Set("c_sync", int64(decode.EncodeNegative(-1))).Set("late_total", 7)
	b := decode.Encode(nil, serr)
	if want := unhex(t, "73657272 01 000004d2 000000ff 00000007"); !bytes.Equal(b, want) {
		t.Fatalf("serr encoded % x, want % x", b, want)
	}
	if err := decode.Decode(&p, b, decode.Legacy); err != nil {
		t.Fatal(err)
	}
	cs := &p.Layout.Fields[p.Layout.Field("c_sync")]
	if raw := p.Int("c_sync"); raw != 255 {
		t.Errorf("serr c_sync raw %d, want 255", raw)
	}
	if m, differs := cs.Meant(p.Int("c_sync")); m != -1 || !differs {
		t.Errorf("serr c_sync meant %d (%v), want -1", m, differs)
	}
	for raw := int64(240); raw <= 255; raw++ {
		if m, _ := cs.Meant(raw); m != raw-256 {
			t.Errorf("serr c_sync raw %d meant %d, want %d", raw, m, raw-256)
		}
	}
	if m, differs := cs.Meant(0); m != 0 || differs {
		t.Errorf("c_sync raw 0 meant %d (%v), want 0 unchanged", m, differs)
	}
	if s := string(p.AppendSummary(nil)); !strings.Contains(s, "c_sync=-1(raw 255)") {
		t.Errorf("serr summary %q", s)
	}

	// sdak: 21 and 25 bytes decode, 23 bytes does not.
	sdak25 := unhex(t, "7364616b 01 00000190 00000011 00000000 00000003 00000028")
	sdak21 := sdak25[:21]
	if err := decode.Decode(&p, sdak25, decode.Legacy); err != nil || !p.Has("fps_chase") || p.Int("fps_chase") != 40 {
		t.Errorf("25-byte sdak: err %v, fps_chase %d (present %v)", err, p.Int("fps_chase"), p.Has("fps_chase"))
	}
	if err := decode.Decode(&p, sdak21, decode.Legacy); err != nil || p.Has("fps_chase") || p.Int("frames_skipped") != 3 {
		t.Errorf("21-byte sdak: err %v, has fps_chase %v, frames_skipped %d", err, p.Has("fps_chase"), p.Int("frames_skipped"))
	}
	for _, n := range []int{20, 22, 23, 24, 26} {
		b := append(append([]byte(nil), sdak25...), 0)[:n]
		err := decode.Decode(&p, b, decode.Legacy)
		if err == nil {
			t.Errorf("%d-byte sdak decoded", n)
		}
		if n < 25 && !errors.Is(err, decode.ErrShort) || n > 25 && !errors.Is(err, decode.ErrLong) {
			t.Errorf("%d-byte sdak: %v", n, err)
		}
	}

	// 5678 is 5 bytes in the legacy era (trailing NUL) and 4 in the modern one.
	if err := decode.Decode(&p, []byte("5678\x00"), decode.Legacy); err != nil {
		t.Errorf("legacy 5-byte 5678: %v", err)
	}
	if err := decode.Decode(&p, []byte("5678"), decode.Legacy); !errors.Is(err, decode.ErrShort) {
		t.Errorf("legacy 4-byte 5678: %v", err)
	}
	if err := decode.Decode(&p, []byte("5678"), decode.Modern); err != nil {
		t.Errorf("modern 4-byte 5678: %v", err)
	}
	if err := decode.Decode(&p, []byte("5678\x00"), decode.Modern); !errors.Is(err, decode.ErrLong) {
		t.Errorf("modern 5-byte 5678: %v", err)
	}
}

// TestModernQuirks: the stak rewind is a signed byte; the first stak of
// the multi capture carries 110, which the manifest says stands for -146
// (only the low 8 bits are sent).
func TestModernQuirks(t *testing.T) {
	var p decode.Packet
	for _, tt := range []struct {
		raw  byte
		want int64
	}{{110, 110}, {0x80, -128}, {0xff, -1}, {0x7f, 127}} {
		b := decode.Encode(nil, decode.MustNew(decode.Modern, "stak").Set("player", 1).Set("ack_frame", 128).
			Set("client_frame", 130).Set("rewind", int64(int8(tt.raw))).SetFloat("cpu", 0))
		if b[29] != tt.raw {
			t.Fatalf("rewind byte %02x, want %02x", b[29], tt.raw)
		}
		if err := decode.Decode(&p, b, decode.Modern); err != nil || p.Int("rewind") != tt.want {
			t.Errorf("rewind %02x: %d, %v; want %d", tt.raw, p.Int("rewind"), err, tt.want)
		}
	}
	// Control bits by name.
	b := decode.Encode(nil, decode.MustNew(decode.Modern, "cdat").Set("player", 2).Set("frame", 77).Set("move", 0x31))
	if err := decode.Decode(&p, b, decode.Modern); err != nil {
		t.Fatal(err)
	}
	if s := string(p.AppendSummary(nil)); s != "player=2 frame=77 move=49[left|jump|fire]" {
		t.Errorf("cdat summary %q", s)
	}
	// A hostname longer than the 16-byte field is cut to 15 bytes and a
	// NUL, as the game does.
	b = decode.Encode(nil, decode.MustNew(decode.Modern, "cjon").Set("color", 5).SetBytes("hostname", []byte("a-very-long-hostname.example")))
	if want := "cjon\x05a-very-long-hos\x00"; string(b) != want {
		t.Errorf("long hostname encoded %q, want %q", b, want)
	}
	// A decoded 16-byte field without a NUL encodes back unchanged.
	in := []byte("CJON\x0bsixteen-chars-xx")
	if err := decode.Decode(&p, in, decode.Legacy); err != nil || p.Values[1].Text() != "sixteen-chars-xx" {
		t.Fatalf("16-char hostname: %q, %v", p.Values[1].Text(), err)
	}
	if b := decode.Encode(nil, &p); !bytes.Equal(b, in) {
		t.Errorf("16-char hostname re-encoded %q, want %q", b, in)
	}
}

// TestMalformed: every layout cut by one byte, or one byte too long.
func TestMalformed(t *testing.T) {
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			good := decode.Encode(nil, fill(t, l))
			hasRest := false
			for _, f := range l.Fields {
				hasRest = hasRest || f.Type == decode.Rest
			}
			var p decode.Packet
			// One byte short.
			err := decode.Decode(&p, good[:len(good)-1], era)
			switch {
			case hasRest && len(good)-1 >= l.MinLen():
				if err != nil {
					t.Errorf("%s %s cut by one byte: %v (the rest field may shrink)", era, l.Name, err)
				}
			case !errors.Is(err, decode.ErrShort) && !errors.Is(err, decode.ErrOverrun):
				t.Errorf("%s %s cut by one byte: %v, want ErrShort or ErrOverrun", era, l.Name, err)
			case err != nil && p.Err != err:
				t.Errorf("%s %s: p.Err %v is not the returned error %v", era, l.Name, p.Err, err)
			}
			// Cut to the header only.
			if l.MinLen() > 4 {
				if err := decode.Decode(&p, good[:l.MinLen()-1], era); !errors.Is(err, decode.ErrShort) {
					t.Errorf("%s %s cut to %d bytes: %v, want ErrShort", era, l.Name, l.MinLen()-1, err)
				}
			}
			// One byte long.
			err = decode.Decode(&p, append(append([]byte(nil), good...), 0), era)
			switch {
			case hasRest:
				if err != nil {
					t.Errorf("%s %s with one more byte: %v", era, l.Name, err)
				}
			case !errors.Is(err, decode.ErrLong):
				t.Errorf("%s %s with one more byte: %v, want ErrLong", era, l.Name, err)
			}
		}
	}
	var p decode.Packet
	for _, b := range [][]byte{nil, {}, []byte("s"), []byte("std")} {
		if err := decode.Decode(&p, b, decode.Modern); !errors.Is(err, decode.ErrShort) || p.Layout != nil {
			t.Errorf("Decode(%q): %v", b, err)
		}
	}
	if err := decode.Decode(&p, []byte("zzzz1234"), decode.Modern); !errors.Is(err, decode.ErrUnknown) || p.Layout != nil || p.NameString() != "zzzz" {
		t.Errorf("unknown name: %v, layout %v, name %q", err, p.Layout, p.NameString())
	}
	if err := decode.Decode(&p, []byte("cdat\x01\x00\x00\x00\x01\x00"), decode.VersionUnknown); !errors.Is(err, decode.ErrUnknown) {
		t.Errorf("cdat in no era: %v", err)
	}
}

func stdf(era decode.Version, seq, count, size int64, data []byte) []byte {
	p := decode.MustNew(era, "stdf").Set("src", 0).Set("dst", 200).Set("seq", seq).Set("count", count)
	if era == decode.Modern {
		p.Set("slsn", 1)
	}
	p.Set("start", 0).SetBytes("data", data).Set("size", size)
	return decode.Encode(nil, p)
}

// TestMalformedValues: lying size and count fields, bad piece numbers.
func TestMalformedValues(t *testing.T) {
	data := bytes.Repeat([]byte{0x78}, 10)
	sdat := func(n int64, entries int) []byte {
		p := decode.MustNew(decode.Legacy, "sdat").Set("frame", 500).Set("start_entry", 3)
		for i := 0; i < entries; i++ {
			p.AddEntry(int64(490+i), 5, 1, 3)
		}
		return decode.Encode(nil, p.Set("n", n))
	}
	tests := []struct {
		name string
		era  decode.Version
		b    []byte
		want error
	}{
		{"stdf size > bytes that follow", decode.Legacy, stdf(decode.Legacy, 0, 1, 11, data), decode.ErrOverrun},
		{"stdf size far beyond", decode.Modern, stdf(decode.Modern, 0, 1, 1<<30, data), decode.ErrOverrun},
		{"stdf negative size", decode.Modern, stdf(decode.Modern, 0, 1, -1, data), decode.ErrOverrun},
		{"stdf size < bytes that follow", decode.Modern, stdf(decode.Modern, 0, 1, 9, data), decode.ErrLong},
		{"stdf seq == count", decode.Legacy, stdf(decode.Legacy, 4, 4, 10, data), decode.ErrInvalid},
		{"stdf seq > count", decode.Modern, stdf(decode.Modern, 7, 2, 10, data), decode.ErrInvalid},
		{"stdf count 0", decode.Modern, stdf(decode.Modern, 0, 0, 10, data), decode.ErrInvalid},
		{"sdat count overruns", decode.Legacy, sdat(3, 2), decode.ErrOverrun},
		{"sdat count 255, no entries", decode.Legacy, sdat(255, 0), decode.ErrOverrun},
		{"sdat count short of entries", decode.Legacy, sdat(1, 2), decode.ErrLong},
	}
	for _, tt := range tests {
		var p decode.Packet
		err := decode.Decode(&p, tt.b, tt.era)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		if p.Err != err || p.Layout == nil {
			t.Errorf("%s: p.Err %v, layout %v", tt.name, p.Err, p.Layout)
		}
	}
	// The good ones decode.
	var p decode.Packet
	for _, b := range [][]byte{stdf(decode.Legacy, 3, 4, 10, data), stdf(decode.Modern, 0, 1, 0, nil), sdat(0, 0), sdat(2, 2)} {
		era := decode.Legacy
		if len(b) == 23 {
			era = decode.Modern
		}
		if err := decode.Decode(&p, b, era); err != nil {
			t.Errorf("% x: %v", b, err)
		}
	}
	if err := decode.Decode(&p, sdat(2, 2), decode.Legacy); err != nil || len(p.Entries) != 8 || p.Entries[4].Int != 491 {
		t.Errorf("sdat entries %v, %v", p.Entries, err)
	}
}

// TestDecodeReuse decodes into one Packet many times: nothing of an earlier
// packet leaks into a later one.
func TestDecodeReuse(t *testing.T) {
	var p decode.Packet
	long := decode.Encode(nil, fill(t, decode.Lookup(decode.Legacy, []byte("sdat"))))
	short := []byte("sdat\x00\x00\x00\x01\x00\x00\x00\x02\x00")
	if err := decode.Decode(&p, long, decode.Legacy); err != nil {
		t.Fatal(err)
	}
	if err := decode.Decode(&p, short, decode.Legacy); err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 0 || len(p.Values) != 4 || p.Int("frame") != 1 {
		t.Errorf("reused packet: %d entries, %d values, frame %d", len(p.Entries), len(p.Values), p.Int("frame"))
	}
	if err := decode.Decode(&p, []byte("xy"), decode.Legacy); err == nil || p.Layout != nil || len(p.Values) != 0 || p.NameString() != "xy\x00\x00" {
		t.Errorf("after a short payload: layout %v, %d values, name %q", p.Layout, len(p.Values), p.NameString())
	}
}

func TestParseEra(t *testing.T) {
	for in, want := range map[string]decode.Version{"legacy": decode.Legacy, "Modern": decode.Modern, "auto": decode.VersionUnknown, "": decode.VersionUnknown} {
		if got, err := decode.ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseEra(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := decode.ParseVersion("2019"); err == nil {
		t.Error("ParseEra(2019) succeeded")
	}
}

// The name table finds every layout by its name and era, and nothing for
// any other four bytes (checked against a map of the names).
func TestNameTable(t *testing.T) {
	known := map[string]bool{}
	for _, era := range decode.Versions() {
		for _, l := range era.Layouts() {
			known[l.Name] = true
			if got := decode.Lookup(era, []byte(l.Name)); got != l {
				t.Errorf("Lookup(%s, %q) = %v", era, l.Name, got)
			}
			if decode.DirOf([]byte(l.Name)) != l.Dir {
				t.Errorf("DirOf(%q) = %v, want %v", l.Name, decode.DirOf([]byte(l.Name)), l.Dir)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	name := make([]byte, 4)
	for i := 0; i < 200000; i++ {
		binary.LittleEndian.PutUint32(name, r.Uint32())
		if i%2 == 0 { // printable, like names
			for j := range name {
				name[j] = 'a' + name[j]%26
			}
		}
		if got := decode.Known(name); got != known[string(name)] {
			t.Fatalf("Known(%q) = %v", name, got)
		}
	}
}

// appendInt's shortcut for small numbers writes what strconv writes.
func TestAppendInt(t *testing.T) {
	for _, v := range []int64{math.MinInt64, -1000, -1, 0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, 1001, 65535, math.MaxInt64} {
		if got, want := string(decode.AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}
