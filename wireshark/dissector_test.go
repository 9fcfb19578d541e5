package wireshark

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

var update = flag.Bool("update", false, "rewrite the golden file")

// generate returns the dissector Write generates for a version.
func generate(t *testing.T, version string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, version); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	got := generate(t, "golden")
	golden := filepath.Join("testdata", "pmnet.lua.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("generated dissector differs from %s (run go test -update after checking the change)", golden)
	}
}

func TestFieldKinds(t *testing.T) {
	fields, err := Fields()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range fields {
		if _, dup := kinds[f.Abbrev]; dup {
			t.Errorf("field %s registered twice", f.Abbrev)
		}
		kinds[f.Abbrev] = f.Kind
	}
	tests := []struct{ abbrev, kind string }{
		{"pmnet.type", "string"},
		{"pmnet.era", "string"},
		{"pmnet.versions", "string"},
		{"pmnet.cdat.move", "int32"},   // u8 up to 2024-05b, i32 from 2024-06
		{"pmnet.sjon.level", "int32"},  // u16 in the legacy SJON, i32 in the modern sjon
		{"pmnet.sjon.slsn", "int32"},   // u8, then i32
		{"pmnet.serr.c_sync", "int64"}, // the recovered value can be below -2^31
		{"pmnet.serr.c_sync_raw", "int32"},
		{"pmnet.sjon.dm_damage", "int64"},
		{"pmnet.sjon.dm_damage_raw", "uint16"},
		{"pmnet.stak.dsync", "double"},
		{"pmnet.stak.rewind", "int32"}, // s8, then i32
		{"pmnet.cjon.hostname", "string"},
		{"pmnet.cjon.name", "string"}, // text of its own length (strn)
		{"pmnet.clog.text", "string"},
		{"pmnet.srrf.result", "int32"},
		{"pmnet.srrf.result_name", "string"}, // a shown enumeration
		{"pmnet.rctl.command_name", "string"},
		{"pmnet.stdf.data", "bytes"},
		{"pmnet.stdf.data_len", "uint32"},
		{"pmnet.extr.padding_len", "uint32"},
		{"pmnet.sdat.entries", "none"},
		{"pmnet.sdat.entries.frame", "int32"},
		{"pmnet.sdat.entries.data2", "uint8"},
	}
	for _, tt := range tests {
		if got := kinds[tt.abbrev]; got != tt.kind {
			t.Errorf("%s: kind %q, want %q", tt.abbrev, got, tt.kind)
		}
	}
	// Every field of every layout has its Wireshark field.
	for _, l := range decode.AllLayouts() {
		for _, f := range l.Fields {
			name := "pmnet." + strings.ToLower(l.Name) + "." + f.Name
			if kinds[name] == "" {
				t.Errorf("%s %s.%s has no field %s", l.First(), l.Name, f.Name, name)
			}
			for _, s := range f.Sub {
				if kinds[name+"."+s.Name] == "" {
					t.Errorf("%s %s.%s.%s has no field", l.First(), l.Name, f.Name, s.Name)
				}
			}
		}
	}
}

func TestFieldSetMerge(t *testing.T) {
	tests := []struct {
		a, b, want string
		err        bool
	}{
		{"uint8", "uint8", "uint8", false},
		{"uint16", "int32", "int32", false},
		{"uint8", "int8", "int32", false},
		{"uint32", "int32", "int64", false},
		{"int64", "uint8", "int64", false},
		{"double", "double", "double", false},
		{"string", "bytes", "", true},
		{"int32", "double", "", true},
	}
	for _, tt := range tests {
		var s fieldSet
		if err := s.add(Field{Abbrev: "pmnet.x.y", Kind: tt.a}); err != nil {
			t.Fatal(err)
		}
		err := s.add(Field{Abbrev: "pmnet.x.y", Kind: tt.b})
		if (err != nil) != tt.err {
			t.Errorf("%s + %s: error %v, want error %v", tt.a, tt.b, err, tt.err)
			continue
		}
		if !tt.err && s.list[0].Kind != tt.want {
			t.Errorf("%s + %s: %s, want %s", tt.a, tt.b, s.list[0].Kind, tt.want)
		}
	}
}

func TestLuaString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`say "hi" \ bye`, `"say \"hi\" \\ bye"`},
		{"line\nnext", `"line\010next"`},
		{"häst", `"häst"`},
	}
	for _, tt := range tests {
		if got := luaString(tt.in); got != tt.want {
			t.Errorf("luaString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// The layouts are what the generated tables say: one line per distinct
// layout with its length bounds and, for pieces, the fields the piece check
// and the reassembly read, then the versions that have it; the versions
// with what the inference needs of them; the protocol constants the
// runtime uses.
func TestLayoutLines(t *testing.T) {
	lua := string(generate(t, "x"))
	for _, want := range []string{
		`LAYOUTS["legacy"]["sdak"] = {name = "sdak", first = "legacy", dir = "c2s", doc = "game-move data acknowledgement", min = 21, max = 25,` + "\n" +
			`	id = 8, versions = {"legacy"}, be = true, kind = "game-moves ack", frame = 2, player = 1, fields = {`,
		`LAYOUTS["modern"]["stdf"] = {name = "stdf", first = "modern", dir = "s2c", doc = "state dif piece", min = 23, max = -1, piece = {seq = 3, count = 4, start = 6, size = 7, data = 8, at = 23}, dif = {src = 1, dst = 2, slsn = 5},` + "\n" +
			`	id = 19, versions = {"modern", "2024-02b", "2024-04", "2024-05"}, be = false, kind = "dif piece", frame = 2, player = 0, fields = {`,
		`LAYOUTS["legacy"]["stdf"] = {name = "stdf", first = "legacy", dir = "s2c", doc = "state dif piece", min = 22, max = -1, piece = {seq = 3, count = 4, start = 5, size = 6, data = 7, at = 22}, dif = {src = 1, dst = 2, slsn = 0},`,
		`LAYOUTS["2024-06"]["stdf"] = {name = "stdf", first = "2024-06", dir = "s2c", doc = "state dif piece", min = 36, max = -1, piece = {seq = 1, count = 2, start = 3, size = 4, data = 9, at = 36}, dif = {src = 6, dst = 5, slsn = 7},` + "\n" +
			`	id = 37, versions = {"2024-06", "2026-01", "2026-01b", "2026-07"}, be = false,`,
		`LAYOUT_LIST[19] = LAYOUTS["modern"]["stdf"]`,
		`{name = "c_sync", type = "i32", size = 4, pf = PF["pmnet.serr.c_sync"], key = true, recover = "negative", pf_raw = PF["pmnet.serr.c_sync_raw"]},`,
		`{name = "fps_chase", type = "i32", size = 4, pf = PF["pmnet.sdak.fps_chase"], optional = true},`,
		`{name = "data", type = "data", size = 0, pf = PF["pmnet.stdf.data"], ref = 6, pf_len = PF["pmnet.stdf.data_len"]},`,
		`{name = "player", type = "u8", size = 1, pf = PF["pmnet.cdat.player"], key = true},`,
		`{name = "name", type = "strn", size = 0, pf = PF["pmnet.cjon.name"], key = true},`,
		`{name = "result", type = "i32", size = 4, pf = PF["pmnet.srrf.result"], key = true, enum = {[0] = "saved", [1] = "no_moves", [2] = "overworld", [3] = "demo", [4] = "client", [5] = "transfer_off"}, pf_name = PF["pmnet.srrf.result_name"]},`,
		`VERSIONS[1] = {name = "legacy", be = true, piece_size = 1000, state_sizes = {106144}, prior = 10, shared_socket = false}`,
		`VERSIONS[2] = {name = "modern", be = false, piece_size = 1000, state_sizes = {112384}, prior = 90, shared_socket = false}`,
		`VERSIONS[5] = {name = "2024-05", be = false, piece_size = 1400, state_sizes = {112480}, prior = 60, shared_socket = true}`,
		// the fast paths of stdf: its summary, and the end of its header;
		// the text of the 2026 cjon
		`return format("src=%d dst=%d seq=%d count=%d slsn=%d start=%d size=%d", v[1], v[2], v[3], v[4], v[5], v[6], v[7])`,
		"\tlocal pos = 23 + v8\n",
		"\tif k2 < 0 or k2 > len - 13 or byte(s, 13 + k2) ~= 0 then\n",
		`return format("result=%s", value_text(fields[1], v[1], v[1]))`,
		`local LISTEN_PORT = 24785`,
		`local MAX_PIECES = 255`,
		`local PLAYER_SERVER_FULL = 99`,
		`local MENU_MOVE = 127`,
		`local FINISHED_KEEP = 64`,
		`local LOOKS = 4`,
		`local ERR_SHORT = "packet shorter than its layout"`,
		`local ERR_NO_VERSION = "fits no known version"`,
		`-- Generated by pmdump x from its packet tables`,
	} {
		if !strings.Contains(lua, want) {
			t.Errorf("generated dissector lacks\n%s", want)
		}
	}
}

// Every version of the registry, and every layout, is in the generated
// tables, and the runtime names none of them: what it knows of the wire is
// in the tables alone.
func TestRuntimeNamesNoVersion(t *testing.T) {
	lua := string(generate(t, "x"))
	for _, v := range decode.Versions() {
		if !strings.Contains(lua, fmt.Sprintf("VERSIONS[%d] = {name = %s,", v, luaString(v.String()))) {
			t.Errorf("version %s is not in the generated tables", v)
		}
		if strings.Contains(runtime, luaString(v.String())) {
			t.Errorf("runtime.lua names version %s", v)
		}
	}
	for _, l := range decode.AllLayouts() {
		if !strings.Contains(lua, fmt.Sprintf("LAYOUT_LIST[%d] = %s\n", l.ID+1, layoutRef(l))) {
			t.Errorf("layout %s of %s is not in the generated tables", l.Name, l.First())
		}
	}
	for _, name := range []string{`"stdf"`, `"cdat"`, `"sjon"`, `"1234"`, `LAYOUTS[`} {
		if strings.Contains(runtime, name) {
			t.Errorf("runtime.lua names %s", name)
		}
	}
}
