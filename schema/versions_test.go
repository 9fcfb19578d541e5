package schema_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/schema"
)

// The wire versions each built-in schema is for, and the mask of a level
// block's tile number (10 bits up to 2026-07-13, 11 bits after).
var wantVersions = map[string]struct {
	versions []string
	tileMask int
}{
	"legacy-106144":   {[]string{"legacy"}, 1023},
	"modern-112384":   {[]string{"modern"}, 1023},
	"2024-02b-112480": {[]string{"2024-02b", "2024-04", "2024-05", "2024-05b"}, 1023},
	"2024-06-112480":  {[]string{"2024-06"}, 1023},
	"2026-01-112576":  {[]string{"2026-01"}, 1023},
	"2026-01b-112704": {[]string{"2026-01b"}, 1023},
	"2026-07-113344":  {[]string{"2026-07"}, 2047},
}

func builtin(t *testing.T, name string) *schema.Schema {
	t.Helper()
	for _, s := range schema.All() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no built-in schema %s", name)
	return nil
}

func TestAllBuiltins(t *testing.T) {
	all := schema.All()
	var names []string
	seen := map[string]string{}
	for _, s := range all {
		names = append(names, s.Name)
		w, ok := wantVersions[s.Name]
		if !ok {
			t.Errorf("unexpected built-in schema %s", s.Name)
			continue
		}
		if !slices.Equal(s.Versions, w.versions) {
			t.Errorf("%s: versions %q, want %q", s.Name, s.Versions, w.versions)
		}
		for _, v := range s.Versions {
			if other, dup := seen[v]; dup {
				t.Errorf("version %s in both %s and %s", v, other, s.Name)
			}
			seen[v] = s.Name
		}
		if !strings.HasSuffix(s.Name, "-"+strconv.Itoa(s.Size)) {
			t.Errorf("%s: size %d not in its name", s.Name, s.Size)
		}
		if s.View == nil || s.View.Level == nil || s.View.Level.TileMask != w.tileMask {
			t.Errorf("%s: view level %+v, want tile_mask %d", s.Name, s.View.Level, w.tileMask)
		}
	}
	if len(all) != len(wantVersions) || !sort.StringsAreSorted(names) {
		t.Errorf("All() = %q: want the %d schemas sorted by name", names, len(wantVersions))
	}
	// Every size has a built-in schema; 112480 has two.
	for _, size := range []int{106144, 112384, 112480, 112576, 112704, 113344} {
		if s := schema.For(size); s.Size != size || s.Region(schema.RawName) != nil || s.View == nil {
			t.Errorf("For(%d) = %s", size, s.Name)
		}
	}
	if n := schema.For(112480).Name; n != "2024-02b-112480" && n != "2024-06-112480" {
		t.Errorf("For(112480) = %s", n)
	}
}

// The new keys survive encoding/json both ways, as a user's --schema file.
func TestVersionsRoundTrip(t *testing.T) {
	for _, s := range schema.All() {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), s.Name+".json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := schema.Load(path)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if !slices.Equal(back.Versions, s.Versions) || back.View.Level.TileMask != s.View.Level.TileMask ||
			len(back.Regions) != len(s.Regions) {
			t.Errorf("%s: round trip gives versions %q tile_mask %d", s.Name, back.Versions, back.View.Level.TileMask)
		}
	}
}

// Every byte of every built-in schema belongs to exactly one field (or
// number), none is left to a raw region, and the view names regions and
// fields that exist.
func TestAllBuiltinsCoverEveryByte(t *testing.T) {
	for _, s := range schema.All() {
		if s.Region(schema.RawName) != nil {
			t.Errorf("%s: bytes left unnamed", s.Name)
		}
		owner := make([]int, s.Size)
		end := 0
		for ri := range s.Regions {
			r := &s.Regions[ri]
			if r.Offset != end {
				t.Errorf("%s: region %s at %d, want %d", s.Name, r.Name, r.Offset, end)
			}
			end = r.Offset + r.Size
			for e := 0; e < r.Count(); e++ {
				base := r.Offset + e*r.Elem
				if r.Fields == nil {
					for k := 0; k < r.Elem; k++ {
						owner[base+k]++
					}
					continue
				}
				for _, f := range r.Fields {
					for k := 0; k < f.Size; k++ {
						owner[base+f.Offset+k]++
					}
				}
			}
		}
		if end != s.Size {
			t.Errorf("%s: regions end at %d, size %d", s.Name, end, s.Size)
		}
		for i, n := range owner {
			if n != 1 {
				t.Fatalf("%s: byte %d belongs to %d fields", s.Name, i, n)
			}
		}
		v := s.View
		p := v.Players
		pr := s.Region(p.Region)
		for _, f := range append([]string{p.Active, p.X, p.Y, p.Health, p.Shape, p.Color}, p.Controls...) {
			if pr == nil || pr.Field(f) == nil {
				t.Errorf("%s: view player field %s.%s missing", s.Name, p.Region, f)
			}
		}
		lr := s.Region(v.Lifts.Region)
		for _, f := range []string{v.Lifts.X, v.Lifts.Y, v.Lifts.Name} {
			if lr == nil || lr.Field(f) == nil {
				t.Errorf("%s: view lift field %s.%s missing", s.Name, v.Lifts.Region, f)
			}
		}
		if f := lr.Field(v.Lifts.Name); f == nil || f.Type != schema.Chars || f.Size != 40 {
			t.Errorf("%s: lift name %+v, want 40 chars", s.Name, f)
		}
		for _, name := range append([]string{v.Enemies.Region, v.Enemies.Pos, v.Items.Region, v.Items.Pos, v.Level.Region}, v.Shots...) {
			if s.Region(name) == nil {
				t.Errorf("%s: view region %s missing", s.Name, name)
			}
		}
	}
}

// A field list as protocol-versions.md writes it: "offset name[ type]", type
// f = float32, c[n] = n chars, none = int32.
type docField struct {
	off  int
	name string
	typ  schema.Type
	size int
}

func parseFields(t *testing.T, list string) []docField {
	t.Helper()
	re := regexp.MustCompile(`^(\d+) (\w+)(?: (f|c\[(\d+)\]))?$`)
	var out []docField
	for _, item := range strings.Split(list, ",") {
		item = strings.Join(strings.Fields(item), " ")
		m := re.FindStringSubmatch(item)
		if m == nil {
			t.Fatalf("bad field %q", item)
		}
		f := docField{name: m[2], typ: schema.Int32, size: 4}
		f.off, _ = strconv.Atoi(m[1])
		switch {
		case m[3] == "f":
			f.typ = schema.Float32
		case m[4] != "":
			f.typ = schema.Chars
			f.size, _ = strconv.Atoi(m[4])
		}
		out = append(out, f)
	}
	return out
}

// protocol-versions.md section 6: the newest build's psyn and lift records.
const (
	headPsyn = `0 active, 4 control_method,
8 paused, 12 paused_type, 16 paused_mode, 20 paused_mode_count, 24 level_done_mode,
28 level_done_timer, 32 level_done_ack, 36 level_done_x, 40 level_done_y,
44 level_done_player, 48 level_done_frame, 52 level_done_next_level,
56 overworld_last_touched_gate, 60 x f, 64 y f, 68 xinc f, 72 yinc f, 76 right_xinc f,
80 left_xinc f, 84 health f, 88 old_health f, 92 on_ladder, 96 on_rope, 100 player_ride,
104 carry_item, 108 shape, 112 color, 116 name c[9], 128 left_right, 132 draw_rot f, 136 draw_scale f, 140 door_draw_rot_num_steps,
144 door_draw_rot f, 148 door_draw_rot_inc f, 152 door_xinc f, 156 door_yinc f,
160 marked_door, 164 door_item, 168 door_num_steps, 172 marked_gate,
176 spawn_point_index, 180 up, 184 down, 188 left, 192 right, 196 jump, 200 fire,
204 menu, 208 ctrl_bitf, 212 old_ctrl_bitf, 216 shot_wait_counter, 220 shot_wait,
224 shot_speed, 228 stat_respawns, 232 stat_shots_fired, 236 stat_enemy_hits,
240 stat_player_hits, 244 stat_self_hits, 248 stat_purple_coins, 252 stat_next_levels,
256 stat_exits, 260 stat_enemy_exploded, 264 stat_player_exploded,
268 stat_self_exploded, 272 late_cdats, 276 late_cdats_last_sec,
280 player_vs_player_shots, 284 player_vs_player_shot_damage, 288 player_vs_self_shots,
292 server_force_fakekey, 296 server_force_client_offset, 300 client_chase_offset f,
304 player_text_overlay_timer, 308 player_text_overlay_type, 312 spare_int1,
316 spare_int2, 320 spare_int3, 324 spare_int4`
	headLift = `0 x f, 4 y f, 8 xinc f, 12 yinc f, 16 w f, 20 h f, 24 winc f, 28 hinc f,
32 active, 36 flags, 40 mode, 44 mode_countdown_timer, 48 mode_reset_value, 52 color,
56 draw_mode, 60 draw_mode_val1, 64 draw_mode_val2, 68 draw_mode_val3, 72 current_step,
76 num_steps, 80 limit_counter, 84 limit_type, 88 lift_name c[40]`
	// protocol.md: the modern era's lift (8 floats, 10 ints, 40-char name),
	// the name called lift_name as in the game's struct.
	modernLift = `0 x f, 4 y f, 8 xinc f, 12 yinc f, 16 w f, 20 h f, 24 winc f, 28 hinc f,
32 active, 36 flags, 40 mode, 44 val1, 48 val2, 52 color, 56 current_step, 60 num_steps,
64 limit_counter, 68 limit_type, 72 lift_name c[40]`
)

// derive removes fields and moves those at or after from by shift, as
// protocol-versions.md describes the older records from the newest.
func derive(in []docField, drop []string, from, shift int) []docField {
	var out []docField
	for _, f := range in {
		if slices.Contains(drop, f.name) {
			continue
		}
		if f.off >= from {
			f.off += shift
		}
		out = append(out, f)
	}
	return out
}

func TestNewLayouts(t *testing.T) {
	head := parseFields(t, headPsyn)
	// 112576: without stat_next_levels, stat_exits and spare_int3/4, so
	// everything from stat_enemy_exploded on is 8 bytes lower.
	jan := derive(head, []string{"stat_next_levels", "stat_exits", "spare_int3", "spare_int4"}, 260, -8)
	// 112480 of the Aug 2024 build: no name (12 bytes with its padding).
	aug := derive(jan, []string{"name"}, 128, -12)
	// 112480 before June 2024: server_lev_seq_num at 284, the rest 4 higher
	// and one spare less.
	early := append(derive(aug, []string{"spare_int2"}, 284, 4), docField{284, "server_lev_seq_num", schema.Int32, 4})

	type region struct {
		name         string
		offset, size int
	}
	regions := func(psyn, lift int) []region {
		names := []string{"psyn", "Ei", "Ef", "item", "itemf", "lifts", "l", "pshot", "eshot", "event"}
		sizes := []int{8 * psyn, 12800, 6400, 32000, 8000, 40 * lift, 40000, 1200, 1200, 4000}
		var out []region
		off := 0
		for i, n := range names {
			out = append(out, region{n, off, sizes[i]})
			off += sizes[i]
		}
		return out
	}
	cases := []struct {
		name       string
		psynSize   int
		psyn       []docField
		liftSize   int
		lift       string
		spot       map[string]int // offsets written out in the docs
		liftsAt    int
		levelAt    int
		eventAt    int
		regionList []region
	}{
		{"2024-02b-112480", 300, early, 112, modernLift,
			map[string]int{"x": 60, "y": 64, "color": 112, "left_right": 116, "ctrl_bitf": 196, "server_lev_seq_num": 284, "player_text_overlay_timer": 288, "spare_int1": 296},
			61600, 66080, 108480, regions(300, 112)},
		{"2024-06-112480", 300, aug, 112, modernLift,
			map[string]int{"x": 60, "y": 64, "color": 112, "left_right": 116, "ctrl_bitf": 196, "old_ctrl_bitf": 200,
				"server_force_fakekey": 272, "server_force_client_offset": 276, "client_chase_offset": 280,
				"player_text_overlay_timer": 284, "player_text_overlay_type": 288, "spare_int1": 292, "spare_int2": 296},
			61600, 66080, 108480, regions(300, 112)},
		{"2026-01-112576", 312, jan, 112, modernLift,
			map[string]int{"x": 60, "y": 64, "name": 116, "left_right": 128, "stat_enemy_exploded": 252, "spare_int2": 308},
			61696, 66176, 108576, regions(312, 112)},
		{"2026-01b-112704", 328, head, 112, modernLift,
			map[string]int{"x": 60, "y": 64, "name": 116, "stat_next_levels": 252, "stat_exits": 256, "spare_int4": 324},
			61824, 66304, 108704, regions(328, 112)},
		{"2026-07-113344", 328, head, 128, headLift,
			map[string]int{"x": 60, "y": 64, "name": 116, "stat_next_levels": 252, "spare_int4": 324},
			61824, 66944, 109344, regions(328, 128)},
	}
	for _, c := range cases {
		s := builtin(t, c.name)
		if s.Region(schema.RawName) != nil || len(s.Regions) != len(c.regionList) {
			t.Errorf("%s: %d regions, want %d and no raw rest", c.name, len(s.Regions), len(c.regionList))
		}
		for i, w := range c.regionList {
			r := s.Region(w.name)
			if r == nil || r.Offset != w.offset || r.Size != w.size || s.Regions[i].Name != w.name {
				t.Errorf("%s: region %s: %+v, want offset %d size %d at position %d", c.name, w.name, r, w.offset, w.size, i)
			}
		}
		for name, off := range map[string]int{"lifts": c.liftsAt, "l": c.levelAt, "event": c.eventAt} {
			if r := s.Region(name); r == nil || r.Offset != off {
				t.Errorf("%s: %s not at %d", c.name, name, off)
			}
		}
		check := func(region string, recSize int, want []docField) {
			r := s.Region(region)
			if r.Elem != recSize || r.Dims[0] != map[string]int{"psyn": 8, "lifts": 40}[region] {
				t.Errorf("%s: %s records of %d bytes × %v, want %d", c.name, region, r.Elem, r.Dims, recSize)
			}
			listed := map[string]bool{}
			for _, w := range want {
				listed[w.name] = true
				f := r.Field(w.name)
				if f == nil || f.Offset != w.off || f.Type != w.typ || f.Size != w.size {
					t.Errorf("%s: %s.%s = %+v, want offset %d %s of %d bytes", c.name, region, w.name, f, w.off, w.typ, w.size)
				}
			}
			// Any other field is padding after the 9-byte name.
			for _, f := range r.Fields {
				if !listed[f.Name] && (f.Offset < 125 || f.Offset+f.Size > 128 || r.Field("name") == nil) {
					t.Errorf("%s: %s has field %s (offset %d) the docs do not list", c.name, region, f.Name, f.Offset)
				}
			}
		}
		check("psyn", c.psynSize, c.psyn)
		check("lifts", c.liftSize, parseFields(t, c.lift))
		for name, off := range c.spot {
			if f := s.Region("psyn").Field(name); f == nil || f.Offset != off {
				t.Errorf("%s: psyn.%s = %+v, want offset %d", c.name, name, f, off)
			}
		}
	}
	// The level sequence number is in the state only before June 2024.
	for _, s := range schema.All() {
		has := s.Region("psyn") != nil && s.Region("psyn").Field("server_lev_seq_num") != nil
		if want := s.Name == "modern-112384" || s.Name == "2024-02b-112480"; has != want {
			t.Errorf("%s: psyn server_lev_seq_num present %v, want %v", s.Name, has, want)
		}
	}
}

// A capture set of the newer builds: the folder, its state size and the
// schema of its wire version.
var captureSets = []struct {
	dir    string
	size   int
	schema string
	named  bool // player names in the state (2026 on)
}{
	{"aug-2024", 112480, "2024-06-112480", false},
	{"jan-2026", 112576, "2026-01-112576", true},
	{"head-2026-08", 113344, "2026-07-113344", true},
}

// scenario is what the MANIFEST and the server's console say of one
// capture folder: client N (named "cN") is which player, and each joined
// player's colour.
type scenario struct {
	player map[int]int // client number → player number
	color  map[int]int // player number → colour
}

func readScenarios(t *testing.T, set string) map[string]scenario {
	t.Helper()
	dir := realcap.Dir(t)
	manifest, err := os.ReadFile(filepath.Join(dir, set, "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]scenario{}
	client := regexp.MustCompile(`c(\d+) = [0-9.:]+ player (\d+)`)
	for _, sec := range strings.Split(string(manifest), "#### `")[1:] {
		name, _, _ := strings.Cut(sec, "/")
		_, clients, ok := strings.Cut(sec, "\nClients: ")
		if !ok {
			t.Fatalf("%s MANIFEST: no Clients line for %s", set, name)
		}
		clients, _, _ = strings.Cut(clients, "\n")
		sc := scenario{player: map[int]int{}, color: map[int]int{}}
		for _, m := range client.FindAllStringSubmatch(clients, -1) {
			c, _ := strconv.Atoi(m[1])
			p, _ := strconv.Atoi(m[2])
			sc.player[c] = p
		}
		// The server prints each join reply: "Player Number:[p]", then
		// "Player Color:[c]".
		con, err := os.ReadFile(filepath.Join(dir, set, name, "server_console.log"))
		if err != nil {
			t.Fatal(err)
		}
		num := regexp.MustCompile(`Player Number:\[(\d+)\]|Player Color:\[(\d+)\]`)
		cur := -1
		for _, m := range num.FindAllSubmatch(con, -1) {
			if m[1] != nil {
				cur, _ = strconv.Atoi(string(m[1]))
			} else if cur >= 0 {
				sc.color[cur], _ = strconv.Atoi(string(m[2]))
				cur = -1
			}
		}
		if len(sc.player) == 0 || len(sc.color) == 0 {
			t.Fatalf("%s/%s: clients %v, colours %v", set, name, sc.player, sc.color)
		}
		out[name] = sc
	}
	return out
}

func text(s *schema.Schema, st []byte, region string, elem int, field string) (string, []byte) {
	r := s.Region(region)
	f := r.Field(field)
	off := r.Offset + elem*r.Elem + f.Offset
	_, txt := schema.Value(st, off, f.Type, f.Size)
	return txt, st[off : off+f.Size]
}

func printable(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// dump is one raw state a real client saved.
type dump struct {
	path       string
	scenario   string
	me         int // the saving client's player
	frame      int
	slsn       int
	st         []byte
	folderName string
}

func readDumps(t *testing.T, set string, size int) []dump {
	t.Helper()
	dir := realcap.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, set, "*", "c*_states", "*.bin"))
	if len(files) == 0 {
		t.Fatalf("no state dumps in %s", filepath.Join(dir, set))
	}
	sc := readScenarios(t, set)
	name := regexp.MustCompile(`state_(\d+)_slsn(\d+)\.bin$`)
	var out []dump
	for _, f := range files {
		st, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != size {
			t.Fatalf("%s: %d bytes, want %d", f, len(st), size)
		}
		folder := filepath.Base(filepath.Dir(f))
		scen := filepath.Base(filepath.Dir(filepath.Dir(f)))
		c, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(folder, "c"), "_states"))
		me, ok := sc[scen].player[c]
		if !ok {
			t.Fatalf("%s: client c%d not in the MANIFEST", f, c)
		}
		m := name.FindStringSubmatch(f)
		frame, _ := strconv.Atoi(m[1])
		slsn, _ := strconv.Atoi(m[2])
		out = append(out, dump{f, scen, me, frame, slsn, st, folder})
	}
	return out
}

// checkPlayers checks the player records of a real state with schema s.
func checkPlayers(t *testing.T, s *schema.Schema, d dump, sc scenario, named bool) {
	t.Helper()
	p := s.View.Players
	names := map[int]string{}
	for c, pl := range sc.player {
		names[pl] = "c" + strconv.Itoa(c)
	}
	for pl := 0; pl < s.Region(p.Region).Count(); pl++ {
		a, _ := s.Get(d.st, p.Region, pl, p.Active)
		if a == 0 {
			if pl == 0 || pl == d.me {
				t.Errorf("%s (%s): player %d not active", d.path, s.Name, pl)
			}
			continue
		}
		if a != 1 {
			t.Errorf("%s (%s): player %d active = %v", d.path, s.Name, pl, a)
		}
		x, _ := s.Get(d.st, p.Region, pl, p.X)
		y, _ := s.Get(d.st, p.Region, pl, p.Y)
		h, _ := s.Get(d.st, p.Region, pl, p.Health)
		c, _ := s.Get(d.st, p.Region, pl, p.Color)
		if math.IsNaN(x) || math.IsNaN(y) || x < 0 || x >= 2000 || y < 0 || y >= 2000 {
			t.Errorf("%s (%s): player %d at %v,%v, outside the level", d.path, s.Name, pl, x, y)
		}
		if math.IsNaN(h) || h < 0 || h > 100 {
			t.Errorf("%s (%s): player %d health %v", d.path, s.Name, pl, h)
		}
		if pl == 0 {
			if c < 1 || c > 15 {
				t.Errorf("%s (%s): server player colour %v", d.path, s.Name, c)
			}
		} else if want, ok := sc.color[pl]; !ok || int(c) != want {
			t.Errorf("%s (%s): player %d colour %v, the server gave %d (joined %v)", d.path, s.Name, pl, c, want, ok)
		}
		if !named {
			continue
		}
		name, _ := text(s, d.st, p.Region, pl, "name")
		switch {
		case pl == 0 && (name == "" || !printable(name)):
			t.Errorf("%s (%s): server player name %q", d.path, s.Name, name)
		case pl > 0 && name != names[pl]:
			t.Errorf("%s (%s): player %d name %q, want %q", d.path, s.Name, pl, name, names[pl])
		}
	}
}

func TestNewRealStates(t *testing.T) {
	for _, set := range captureSets {
		t.Run(set.dir, func(t *testing.T) {
			s := builtin(t, set.schema)
			if got := schema.For(set.size); got.Size != set.size {
				t.Fatalf("For(%d) = %s", set.size, got.Name)
			}
			scen := readScenarios(t, set.dir)
			dumps := readDumps(t, set.dir, set.size)
			bigTile := false
			namedLift := false
			for _, d := range dumps {
				checkPlayers(t, s, d, scen[d.scenario], set.named)

				// Lifts: the name field is text (NUL or printable bytes;
				// unused records keep old names after a leading NUL), active
				// lifts are inside the level.
				lv := s.View.Lifts
				for i := 0; i < s.Region(lv.Region).Count(); i++ {
					name, raw := text(s, d.st, lv.Region, i, lv.Name)
					for _, b := range raw {
						if b != 0 && (b < 0x20 || b > 0x7e) {
							t.Errorf("%s: lift %d name bytes %q", d.path, i, raw)
							break
						}
					}
					if a, _ := s.Get(d.st, lv.Region, i, lv.Active); a != 0 {
						x, _ := s.Get(d.st, lv.Region, i, lv.X)
						y, _ := s.Get(d.st, lv.Region, i, lv.Y)
						w, _ := s.Get(d.st, lv.Region, i, "w")
						h, _ := s.Get(d.st, lv.Region, i, "h")
						if x < 0 || x >= 2000 || y < 0 || y >= 2000 || w < 0 || w > 2000 || h < 0 || h > 2000 {
							t.Errorf("%s: lift %d at %v,%v size %vx%v", d.path, i, x, y, w, h)
						}
						if name != "" {
							namedLift = true
						}
					}
				}

				// Enemies, items and shots in use are inside the level.
				for _, th := range []*schema.Things{s.View.Enemies, s.View.Items} {
					r := s.Region(th.Region)
					for i := 0; i < r.Count()/r.Dims[len(r.Dims)-1]; i++ {
						if typ, _ := s.GetLabel(d.st, th.Region, i, th.Type); typ == 0 {
							continue
						}
						x, _ := s.GetLabel(d.st, th.Pos, i, "x")
						y, _ := s.GetLabel(d.st, th.Pos, i, "y")
						if x < 0 || x >= 2000 || y < 0 || y >= 2000 {
							t.Errorf("%s: %s %d at %v,%v", d.path, th.Region, i, x, y)
						}
					}
				}
				for _, name := range s.View.Shots {
					for i := 0; i < s.Region(name).Count(); i++ {
						if a, _ := s.Get(d.st, name, i, "active"); a == 0 {
							continue
						}
						x, _ := s.Get(d.st, name, i, "x")
						y, _ := s.Get(d.st, name, i, "y")
						if x < -20 || x >= 2020 || y < -20 || y >= 2020 {
							t.Errorf("%s: %s %d at %v,%v", d.path, name, i, x, y)
						}
					}
				}

				// Level blocks: the flags start at bit 13, so no bit between
				// the tile mask and bit 13 is set.
				lvl := s.View.Level
				r := s.Region(lvl.Region)
				for i := 0; i < r.Count(); i++ {
					v, _ := schema.Value(d.st, r.Offset+i*r.Elem, r.Type, r.Elem)
					b := int(v)
					if b&^lvl.TileMask&(1<<13-1) != 0 {
						t.Fatalf("%s: block %v = %#x: bits above the tile mask %#x", d.path, r.Index(i), b, lvl.TileMask)
					}
					if b&lvl.TileMask > 1023 {
						bigTile = true
					}
				}
			}
			if want := set.schema == "2026-07-113344"; bigTile != want {
				t.Errorf("tile numbers above 1023 seen: %v, want %v", bigTile, want)
			}
			if set.dir == "jan-2026" && !namedLift {
				t.Error("no active lift with a name in the level-2 dumps")
			}
		})
	}
}

// The Aug 2024 dumps hold the text overlay timer at psyn+284 (it counts
// down once a frame), not the level sequence number; the 2024-02b layout
// reads the same player records but calls that int the slsn.
func TestAug2024OverlayTimer(t *testing.T) {
	s := builtin(t, "2024-06-112480")
	early := builtin(t, "2024-02b-112480")
	sc := readScenarios(t, "aug-2024")
	dumps := readDumps(t, "aug-2024", 112480)
	type key struct {
		folder string
		slsn   int
		player int
	}
	seen := map[key][][2]int{} // frame, timer
	wrongSlsn := 0
	for _, d := range dumps {
		// The players' other fields sit where they do in the older layout.
		checkPlayers(t, early, d, sc[d.scenario], false)
		for pl := 0; pl < 8; pl++ {
			if a, _ := s.Get(d.st, "psyn", pl, "active"); a == 0 {
				continue
			}
			v, _ := s.Get(d.st, "psyn", pl, "player_text_overlay_timer")
			if v < 0 || v > 100 {
				t.Errorf("%s: player %d overlay timer %v", d.path, pl, v)
			}
			if v > 0 {
				k := key{d.scenario + "/" + d.folderName, d.slsn, pl}
				seen[k] = append(seen[k], [2]int{d.frame, int(v)})
			}
			if old, _ := early.Get(d.st, "psyn", pl, "server_lev_seq_num"); int(old) != d.slsn {
				wrongSlsn++
			}
		}
	}
	pairs := 0
	for k, list := range seen {
		sort.Slice(list, func(i, j int) bool { return list[i][0] < list[j][0] })
		for i := 1; i < len(list); i++ {
			a, b := list[i-1], list[i]
			if b[0]-a[0] != a[1]-b[1] {
				t.Errorf("%v: timer %d at frame %d, %d at frame %d: not one a frame", k, a[1], a[0], b[1], b[0])
			}
			pairs++
		}
	}
	if pairs == 0 {
		t.Error("no running overlay timer seen in two dumps")
	}
	if wrongSlsn == 0 {
		t.Error("psyn+284 equals the dump's slsn everywhere; these dumps should not hold it")
	}
}

// No real dump of 112704 exists; its psyn is the newest build's, so it must
// read the newest dumps' players the same way.
func TestJan2026bPsynOnNewestDumps(t *testing.T) {
	s := builtin(t, "2026-01b-112704")
	sc := readScenarios(t, "head-2026-08")
	for _, d := range readDumps(t, "head-2026-08", 113344) {
		checkPlayers(t, s, d, sc[d.scenario], true)
	}
}
