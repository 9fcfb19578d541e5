package schema

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// The sizes protocol.md gives for the built-in layouts, region by region.
func TestBuiltinLayouts(t *testing.T) {
	want := map[int][]struct {
		name   string
		offset int
		size   int
	}{
		112384: {{"psyn", 0, 2304}, {"Ei", 2304, 12800}, {"Ef", 15104, 6400}, {"item", 21504, 32000}, {"itemf", 53504, 8000},
			{"lifts", 61504, 4480}, {"l", 65984, 40000}, {"pshot", 105984, 1200}, {"eshot", 107184, 1200}, {"event", 108384, 4000}},
		106144: {{"players", 0, 1664}, {"Ei", 1664, 12800}, {"Efi", 14464, 6400}, {"item", 20864, 32000}, {"itemf", 52864, 8000},
			{"lifts", 60864, 5280}, {"l", 66144, 40000}},
	}
	for size, regions := range want {
		s := For(size)
		if s.Size != size || s.Region(RawName) != nil {
			t.Fatalf("%d: schema %s leaves bytes unnamed", size, s.Name)
		}
		if len(s.Regions) != len(regions) {
			t.Errorf("%s: %d regions, want %d", s.Name, len(s.Regions), len(regions))
		}
		for i, w := range regions {
			r := s.Region(w.name)
			if r == nil || r.Offset != w.offset || r.Size != w.size || s.Regions[i].Name != w.name {
				t.Errorf("%s: region %s: %+v, want offset %d size %d at position %d", s.Name, w.name, r, w.offset, w.size, i)
			}
		}
	}
}

// Every field of every built-in schema accounts for every byte of its
// region: fields tile each record exactly, records tile the region, and
// regions tile the state.
func TestBuiltinFieldsCoverEveryByte(t *testing.T) {
	for _, s := range Builtin() {
		owner := make([]int, s.Size)
		for ri := range s.Regions {
			r := &s.Regions[ri]
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
		for i, n := range owner {
			if n != 1 {
				t.Fatalf("%s: byte %d belongs to %d fields", s.Name, i, n)
			}
		}
		// The player records: 72 fields of 4 bytes (modern), 52 (legacy);
		// versions_test.go checks the newer sizes' records.
		if p := s.View.Players; p != nil {
			r := s.Region(p.Region)
			if want, ok := map[int]int{112384: 72, 106144: 52}[s.Size]; ok && (len(r.Fields) != want || r.Elem != want*4) {
				t.Errorf("%s: %d player fields in %d bytes, want %d", s.Name, len(r.Fields), r.Elem, want)
			}
		}
	}
}

func TestParseRejectsBadSchemas(t *testing.T) {
	cases := map[string]string{
		"no size":        `{"name":"x","regions":[]}`,
		"too big":        `{"name":"x","size":4,"regions":[{"name":"a","dims":[2],"type":"int32"}]}`,
		"bad type":       `{"name":"x","size":4,"regions":[{"name":"a","dims":[1],"type":"int64"}]}`,
		"chars no size":  `{"name":"x","size":4,"regions":[{"name":"a","dims":[1],"fields":[{"name":"n","type":"chars"}]}]}`,
		"duplicate":      `{"name":"x","size":8,"regions":[{"name":"a","dims":[1],"type":"int32"},{"name":"a","dims":[1],"type":"int32"}]}`,
		"bad label":      `{"name":"x","size":8,"regions":[{"name":"a","dims":[2],"type":"int32","labels":{"5":"y"}}]}`,
		"not json":       `{`,
		"zero dimension": `{"name":"x","size":8,"regions":[{"name":"a","dims":[0],"type":"int32"}]}`,
	}
	for name, js := range cases {
		if _, err := Parse([]byte(js)); err == nil {
			t.Errorf("%s: accepted %s", name, js)
		}
	}
	// A schema that covers less than the state gets a raw region for the rest.
	s, err := Parse([]byte(`{"name":"x","size":10,"regions":[{"name":"a","dims":[2],"type":"int32"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Region(RawName); r == nil || r.Offset != 8 || r.Size != 2 {
		t.Errorf("raw rest: %+v", r)
	}
	// An unknown size is one raw region.
	u := For(1234)
	if len(u.Regions) != 1 || u.Regions[0].Size != 1234 || !u.Regions[0].Raw() {
		t.Errorf("unknown size: %+v", u.Regions)
	}
}

// The built-in files are the format a user loads with --schema.
func TestLoadBuiltinFile(t *testing.T) {
	data, err := BuiltinJSON("modern-112384")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, data, 0o644)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if For(112384, s) != s || s.Region("psyn").Field("late_cdats") == nil {
		t.Error("a loaded schema is not used for its size")
	}
}

// realDumps returns the raw states the real clients saved, by client
// folder, in frame order.
func realDumps(t *testing.T) map[string][]string {
	t.Helper()
	dir := realcap.Dir(t)
	out := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "modern", "*", "c*_states", "*.bin"))
	legacy, _ := filepath.Glob(filepath.Join(dir, "legacy", "*", "c*", "state_*.bin"))
	if len(files) == 0 || len(legacy) == 0 {
		t.Fatalf("no state dumps in %s: %d modern, %d legacy", dir, len(files), len(legacy))
	}
	for _, f := range append(files, legacy...) {
		out[filepath.Dir(f)] = append(out[filepath.Dir(f)], f)
	}
	num := regexp.MustCompile(`state_(\d+)`)
	slsn := regexp.MustCompile(`slsn(\d+)`)
	key := func(f string) int {
		n, _ := strconv.Atoi(num.FindStringSubmatch(f)[1])
		if m := slsn.FindStringSubmatch(f); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k * 1000000
		}
		return n
	}
	for d := range out {
		sort.Slice(out[d], func(i, j int) bool { return key(out[d][i]) < key(out[d][j]) })
	}
	return out
}

// clientPlayer reads a client's player number: legacy client_join.txt, or
// the modern rule (c1 is player 1 in every modern capture's MANIFEST).
func clientPlayer(t *testing.T, dir string) int {
	if b, err := os.ReadFile(filepath.Join(dir, "client_join.txt")); err == nil {
		m := regexp.MustCompile(`player=(\d+)`).FindSubmatch(b)
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	n, _ := strconv.Atoi(regexp.MustCompile(`c(\d)_states`).FindStringSubmatch(dir)[1])
	return n
}

// Values that must hold in a real game, on every state the real clients
// dumped: player 0 (the server's) is active inside the level's pixel bounds,
// and the client's own player, once its join took effect (in the legacy era
// the join state comes before the join's game move), stays active inside
// the level.
func TestRealStatesMakeSense(t *testing.T) {
	for dir, files := range realDumps(t) {
		me := clientPlayer(t, dir)
		joined := false
		for _, f := range files {
			st, _ := os.ReadFile(f)
			s := For(len(st))
			p := s.View.Players
			for _, pl := range []int{0, me} {
				a, _ := s.Get(st, p.Region, pl, p.Active)
				if pl == me {
					if a == 0 && !joined {
						continue
					}
					joined = true
				}
				if a == 0 {
					t.Errorf("%s: player %d not active", f, pl)
				}
				x, _ := s.Get(st, p.Region, pl, p.X)
				y, _ := s.Get(st, p.Region, pl, p.Y)
				if x < 0 || x >= 2000 || y < 0 || y >= 2000 {
					t.Errorf("%s: player %d at %v,%v, outside the 100x100-block level", f, pl, x, y)
				}
			}
		}
		if !joined {
			t.Errorf("%s: the client's player %d is never active", dir, me)
		}
	}
}

// A diff between two states of a moving player shows its x or y changing,
// and applying a diff's changes to state A gives state B.
func TestRealDiffs(t *testing.T) {
	for dir, files := range realDumps(t) {
		me := clientPlayer(t, dir)
		moved := false
		for i := 1; i < len(files); i++ {
			a, _ := os.ReadFile(files[i-1])
			b, _ := os.ReadFile(files[i])
			s := For(len(a))
			changes, err := Diff(s, a, b)
			if err != nil {
				t.Fatal(err)
			}
			p := s.View.Players
			for _, c := range changes {
				if c.Region == p.Region && c.Index[0] == me && (c.Field == p.X || c.Field == p.Y) {
					moved = true
				}
			}
			got := bytes.Clone(a)
			if err := Apply(got, changes); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, b) {
				t.Errorf("%s → %s: applying the diff does not give the second state", files[i-1], files[i])
			}
			if self, _ := Diff(s, a, a); len(self) != 0 {
				t.Errorf("%s: a diff with itself has %d changes", files[i-1], len(self))
			}
		}
		if len(files) > 1 && !moved {
			t.Errorf("%s: the client's player %d never moved between its dumps", dir, me)
		}
	}
}

// Diff and Apply on random states of every schema, including unknown sizes.
func TestDiffApplyRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{112384, 106144, 777} {
		s := For(size)
		a := make([]byte, size)
		for i := range a {
			a[i] = byte(r.IntN(256))
		}
		b := bytes.Clone(a)
		for k := 0; k < 500; k++ {
			b[r.IntN(size)] ^= byte(1 + r.IntN(255))
		}
		changes, err := Diff(s, a, b)
		if err != nil {
			t.Fatal(err)
		}
		got := bytes.Clone(a)
		Apply(got, changes)
		if !bytes.Equal(got, b) {
			t.Errorf("%s: apply(diff) differs", s.Name)
		}
		total := 0
		for _, rc := range Count(s, changes) {
			total += rc.Bytes
		}
		diffBytes := 0
		for i := range a {
			if a[i] != b[i] {
				diffBytes++
			}
		}
		if total != diffBytes {
			t.Errorf("%s: Count says %d bytes differ, %d do", s.Name, total, diffBytes)
		}
	}
}

func TestChangePaths(t *testing.T) {
	s := For(112384)
	a := make([]byte, s.Size)
	b := make([]byte, s.Size)
	ei := s.Region("Ei")
	b[ei.Offset+(17*32+0)*4] = 3 // Ei[17][0] = 3: enemy type
	ps := s.Region("psyn")
	b[ps.Offset+2*ps.Elem+ps.Field("x").Offset+3] = 0x43 // psyn[2].x = 128.0
	l := s.Region("l")
	b[l.Offset+(40*100+12)*4] = 169
	changes, _ := Diff(s, a, b)
	want := []struct{ path, field, note string }{{"psyn[2].x", "x", ""}, {"Ei[17][0]", "type", "enemy added"}, {"l[40][12]", "", ""}}
	if len(changes) != len(want) {
		t.Fatalf("%d changes: %+v", len(changes), changes)
	}
	for i, w := range want {
		if c := changes[i]; c.Path() != w.path || c.Field != w.field || c.Note != w.note {
			t.Errorf("change %d: %s %q %q, want %s %q %q", i, c.Path(), c.Field, c.Note, w.path, w.field, w.note)
		}
	}
	if changes[0].New != 128 || changes[2].New != 169 {
		t.Errorf("values: %v %v", changes[0].New, changes[2].New)
	}
}

// Apply writes changes into state (their new bytes), so that applying
// Diff(a, b) to a copy of a gives b.
func Apply(state []byte, changes []Change) error {
	for _, c := range changes {
		if c.Offset < 0 || c.Offset+len(c.NewRaw) > len(state) {
			return fmt.Errorf("%s: bytes %d..%d outside the state", c.Path(), c.Offset, c.Offset+len(c.NewRaw))
		}
		copy(state[c.Offset:], c.NewRaw)
	}
	return nil
}

// Builtin returns the built-in schemas, by size.
func Builtin() []*Schema {
	var out []*Schema
	for _, s := range builtins {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Size < out[j].Size })
	return out
}

// BuiltinJSON returns the JSON file of a built-in schema, as a user would
// copy and edit it.
func BuiltinJSON(name string) ([]byte, error) {
	return builtinFS.ReadFile("builtin/" + name + ".json")
}
