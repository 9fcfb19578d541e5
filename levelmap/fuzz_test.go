package levelmap

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/pmdump/pmdump/schema"
)

// fuzzRegions are the regions of a modern state a fuzz input writes to:
// the players, the level, the enemies and the items.
var fuzzRegions = []string{"psyn", "l", "Ei", "Ef", "item", "itemf"}

// lay writes a fuzz input over a state: records of a region number, a
// two-byte offset in the region, a length and that many bytes.
func lay(s *schema.Schema, st, in []byte) {
	for len(in) >= 4 {
		r := s.Region(fuzzRegions[int(in[0])%len(fuzzRegions)])
		off := r.Offset + int(binary.LittleEndian.Uint16(in[1:]))%r.Size
		n := min(int(in[3]), len(in)-4, r.Offset+r.Size-off)
		copy(st[off:off+n], in[4:4+n])
		in = in[4+n:]
	}
}

// record is a fuzz record that writes v at byte off of region r.
func record(r string, off int, v uint32) []byte {
	b := []byte{0, 0, 0, 4, 0, 0, 0, 0}
	for i, name := range fuzzRegions {
		if name == r {
			b[0] = byte(i)
		}
	}
	binary.LittleEndian.PutUint16(b[1:], uint16(off))
	binary.LittleEndian.PutUint32(b[4:], v)
	return b
}

// FuzzChanged reads the maps of two states and marks the blocks their
// diff touches: never a panic, one mark a block, and a block marked only
// where the level's value differs between the states or a player, enemy
// or item of the second stands.
func FuzzChanged(f *testing.F) {
	s := schema.For(112384)
	p, ef := s.Region("psyn"), s.Region("Ef")
	player := func(x, y float32) []byte {
		b := record("psyn", 3*p.Elem+p.Field("active").Offset, 1)
		b = append(b, record("psyn", 3*p.Elem+p.Field("x").Offset, math.Float32bits(x))...)
		return append(b, record("psyn", 3*p.Elem+p.Field("y").Offset, math.Float32bits(y))...)
	}
	enemy := append(record("Ei", 7*32*4, 9), record("Ef", 7*ef.Dims[1]*4, math.Float32bits(210))...)
	f.Add(player(20, 25), append(player(22, 25), record("l", 4*(2*100+1), 0x1f0081)...))
	f.Add(enemy, append(enemy, record("Ef", 7*ef.Dims[1]*4+4, math.Float32bits(400))...))
	f.Add([]byte{}, record("l", 4*(99*100+99), 7))
	f.Add(player(float32(math.NaN()), 1e30), player(-5, 2000))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		sa, sb := make([]byte, s.Size), make([]byte, s.Size)
		lay(s, sa, a)
		lay(s, sb, b)
		mb, err := Read(s, sb)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := schema.Diff(s, sa, sb)
		if err != nil {
			t.Fatal(err)
		}
		marks := mb.Changed(nil, s, ch)
		stands := map[[2]int]bool{}
		for _, a := range mb.Actors {
			if a.Thing == Player || a.Thing == Enemy || a.Thing == Item {
				stands[[2]int{a.X, a.Y}] = true
			}
		}
		l := s.Region("l")
		for i, marked := range marks {
			if !marked {
				continue
			}
			x, y := i%mb.W, i/mb.W
			at := l.Offset + (x*mb.H+y)*l.Elem
			if string(sa[at:at+l.Elem]) == string(sb[at:at+l.Elem]) && !stands[[2]int{x, y}] {
				t.Errorf("block (%d, %d) marked: the level is the same there and no player, enemy or item stands on it", x, y)
			}
		}
	})
}
