package levelmap_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/pmdump/pmdump/levelmap"
	"github.com/pmdump/pmdump/schema"
)

// A modern state with one solid block at (2, 1) and player 3 standing on
// the block to its left.
func ExampleRead() {
	s := schema.For(112384)
	st := make([]byte, s.Size)
	l := s.Region("l")
	binary.LittleEndian.PutUint32(st[l.Offset+4*(2*100+1):], 0x1f0081) // l[2][1]: a solid tile
	p := s.Region("psyn")
	put := func(field string, v uint32) {
		binary.LittleEndian.PutUint32(st[p.Offset+3*p.Elem+p.Field(field).Offset:], v)
	}
	put("active", 1)
	put("x", math.Float32bits(20)) // pixels: block 1
	put("y", math.Float32bits(25)) // block 1
	m, err := levelmap.Read(s, st)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.SplitN(string(m.Text()), "\n", 4)[:3] {
		fmt.Printf("%q\n", line[:5])
	}
	// Output:
	// "     "
	// " 3#  "
	// "     "
}

// The blocks a diff touches: a level block that changed and the block of
// the player whose record changed.
func ExampleMap_Changed() {
	s := schema.For(112384)
	a := make([]byte, s.Size)
	p := s.Region("psyn")
	put := func(st []byte, field string, v uint32) {
		binary.LittleEndian.PutUint32(st[p.Offset+3*p.Elem+p.Field(field).Offset:], v)
	}
	put(a, "active", 1)
	put(a, "x", math.Float32bits(20))
	put(a, "y", math.Float32bits(25))
	b := append([]byte(nil), a...)
	l := s.Region("l")
	binary.LittleEndian.PutUint32(b[l.Offset+4*(2*100+1):], 0x1f0081) // l[2][1] becomes solid
	put(b, "x", math.Float32bits(22))                                 // player 3 moves right, in the same block
	ch, err := schema.Diff(s, a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := levelmap.Read(s, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, changed := range m.Changed(nil, s, ch) {
		if changed {
			fmt.Printf("block (%d, %d)\n", i%m.W, i/m.W)
		}
	}
	// Output:
	// block (1, 1)
	// block (2, 1)
}
