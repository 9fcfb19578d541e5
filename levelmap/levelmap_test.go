package levelmap

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/schema"
)

// dumps are raw states the game's clients wrote; their tiles are the truth.
var dumps = []string{
	"modern/basic/c1_states/state_99_slsn1.bin",
	"modern/basic/c1_states/state_1929_slsn1.bin",
	"modern/multi/c1_states/state_146_slsn0.bin",
	"modern/multi/c1_states/state_1319_slsn1.bin",
	"legacy/basic/c1/state_200.bin",
	"legacy/basic/c1/state_2565.bin",
	"aug-2024/basic/c1_states/state_1122_slsn0.bin",
	"jan-2026/basic/c1_states/state_1133_slsn0.bin",
	"head-2026-08/basic/c1_states/state_1012_slsn1.bin",
	"head-2026-08/basic/c1_states/state_211_slsn0.bin",
}

// tileBits is how many low bits of a block are its tile number, by the
// size of the state: 11 in the states of July 2026 on (113344 bytes, the
// game's tile count went from 1024 to 2048), 10 before.
func tileBits(size int) uint {
	if size == 113344 {
		return 11
	}
	return 10
}

// captures is the folder of the real captures (see internal/realcap).
func captures(t testing.TB) string { return realcap.Dir(t) }

// wantTile is what the game's level editor calls a block, from the
// PM_BTILE_* flags, for values seen in the captures.
func wantChar(v int32) byte {
	switch {
	case v == 0:
		return ' '
	case v&(1<<28) != 0:
		return '~'
	case v&(1<<27) != 0:
		return 'H'
	case v&(1<<24) != 0:
		return '!'
	case v&(1<<25) != 0:
		return '%'
	case v&(1<<21) != 0:
		return '='
	case v&(1<<16) != 0:
		return '#'
	}
	return '.'
}

func TestMapOfRealStates(t *testing.T) {
	dir := captures(t)
	for _, name := range dumps {
		t.Run(name, func(t *testing.T) {
			st, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			s := schema.For(len(st))
			m, err := Read(s, st)
			if err != nil {
				t.Fatal(err)
			}
			text := m.Text()
			lines := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
			if len(lines) != 100 {
				t.Fatalf("%d lines, want 100", len(lines))
			}
			for y, l := range lines {
				if len(l) != 100 {
					t.Fatalf("line %d has %d characters, want 100", y, len(l))
				}
			}
			// The level region l[x][y]: 100 × 100 int32, x the first index.
			off := s.Region("l").Offset
			kinds := map[byte]int{}
			for x := 0; x < 100; x++ {
				for y := 0; y < 100; y++ {
					v := int32(binary.LittleEndian.Uint32(st[off+4*(x*100+y):]))
					if n := int32(m.Cell(x, y).Number); n != v&(1<<tileBits(len(st))-1) {
						t.Fatalf("block (%d,%d) value %#x: tile number %d", x, y, v, n)
					}
					if m.Cell(x, y).Thing != Nothing {
						continue
					}
					want := wantChar(v)
					kinds[want]++
					if got := lines[y][x]; got != want {
						t.Fatalf("block (%d,%d) value %#x: %q, want %q", x, y, v, got, want)
					}
				}
			}
			if kinds[' '] == 0 || kinds['#'] == 0 {
				t.Errorf("a level with no empty or no solid blocks: %v", kinds)
			}
			// Players, read from the state's player region directly.
			pr := s.View.Players
			players := 0
			for i := 0; i < 8; i++ {
				if a, _ := s.Get(st, pr.Region, i, pr.Active); a == 0 {
					continue
				}
				players++
				x, _ := s.Get(st, pr.Region, i, pr.X)
				y, _ := s.Get(st, pr.Region, i, pr.Y)
				bx, by := int(math.Floor(x/20)), int(math.Floor(y/20))
				if got := lines[by][bx]; got < '0' || got > '7' {
					t.Errorf("player %d at (%v,%v), block (%d,%d): %q, want a player", i, x, y, bx, by, got)
				} else if got != byte('0'+i) {
					t.Logf("player %d's block shows player %c", i, got)
				}
			}
			if players == 0 {
				t.Error("no active player in a client's state")
			}
		})
	}
}

func TestTileOf(t *testing.T) {
	for _, c := range []struct {
		v    int32
		want Tile
	}{
		{0, Empty},
		{9, Background},
		{0x1f0081, Solid},
		{0xe70020, SemiSolid},
		{0x11f0040, Bombable},
		{0x61f0160, Breakable},
		{1<<27 | 5, Ladder},
		{1<<28 | 1<<27 | 5, Rope},
	} {
		if got := TileOf(c.v); got != c.want {
			t.Errorf("TileOf(%#x) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestNoLevel(t *testing.T) {
	if _, err := Read(schema.For(1234), make([]byte, 1234)); err == nil {
		t.Error("a raw schema gave a map")
	}
	s := schema.For(112384)
	if _, err := Read(s, make([]byte, 10)); err == nil {
		t.Error("a short state gave a map")
	}
}

func TestPlaceClips(t *testing.T) {
	s := schema.For(112384)
	st := make([]byte, s.Size)
	m, err := Read(s, st)
	if err != nil {
		t.Fatal(err)
	}
	m.place(Actor{Thing: Player, Index: 3, PX: 1990, PY: -5}, 0, 0)
	m.place(Actor{Thing: Enemy, PX: math.NaN(), PY: 0}, 0, 0)
	m.place(Actor{Thing: Lift, PX: 1960, PY: 1960}, 100, 100)
	if c := m.Cell(99, 99); c.Thing != Lift {
		t.Errorf("lift not drawn to the map's edge: %+v", c)
	}
	if n := bytes.Count(m.Text(), []byte("3")); n != 0 {
		t.Errorf("a player above the map drawn %d times", n)
	}
}
