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
