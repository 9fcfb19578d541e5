package reassemble_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/reassemble"
)

// An Assembler takes stdf pieces as they come off the wire and hands back
// each dif once it is whole, or once it is clear it never will be.
func Example_assembler() {
	// The server's dif: 2500 bytes compressed (stored, to fix its size),
	// so 2500/1000 + 1 = 3 pieces.
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.NoCompression)
	w.Write(bytes.Repeat([]byte("dif "), 622)[1:])
	w.Close()

	client := netip.MustParseAddrPort("192.168.1.20:24785")
	a := reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) {
		fmt.Printf("%v: %v, %d of %d pieces, %d duplicate, %d bytes, missing %v\n",
			m.Key, m.Status, m.Pieces, m.Count, m.Duplicates, len(m.Compressed), m.Missing)
	})
	whole := reassemble.Key{Client: client, SLSN: 1, Src: 200, Dst: 210}
	for _, seq := range []int{2, 0, 0, 1} { // reordered, one duplicated
		lo, hi := seq*1000, min(seq*1000+1000, z.Len())
		a.Add(reassemble.Piece{Key: whole, Seq: seq, Count: 3, Start: lo, Data: z.Bytes()[lo:hi]})
	}
	// Piece 1 of the next dif is lost.
	lossy := reassemble.Key{Client: client, SLSN: 1, Src: 205, Dst: 211}
	a.Add(reassemble.Piece{Key: lossy, Seq: 0, Count: 3, Start: 0, Data: z.Bytes()[:1000]})
	a.Add(reassemble.Piece{Key: lossy, Seq: 2, Count: 3, Start: 2000, Data: z.Bytes()[2000:]})
	a.Flush() // the capture ended
	// Output:
	// 192.168.1.20:24785 slsn 1 [200 to 210]: complete, 3 of 3 pieces, 1 duplicate, 2500 bytes, missing []
	// 192.168.1.20:24785 slsn 1 [205 to 211]: incomplete, 2 of 3 pieces, 0 duplicate, 0 bytes, missing [1]
}

// Inflate checks that a dif inflates to exactly the state size, and stops
// as soon as it would not.
func ExampleInflater_Inflate() {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(make([]byte, 112384)) // a dif of a state that did not change
	w.Close()

	var f reassemble.Inflater
	dif, err := f.Inflate(nil, z.Bytes(), 112384)
	fmt.Println(len(dif), err)
	_, err = f.Inflate(dif, z.Bytes(), 106144) // the legacy era's size
	fmt.Println(errors.Is(err, reassemble.ErrSize), err)
	_, err = f.Inflate(dif, z.Bytes()[:z.Len()-1], 112384) // cut short
	fmt.Println(err != nil)
	// Output:
	// 112384 <nil>
	// true inflates to more than 106144 bytes: dif does not inflate to the state size
	// true
}

// InflateSparse inflates a dif into a buffer it keeps zero and says which
// spans of it are not: statedif.ApplySpans applies those alone, and the
// next call zeroes them again.
func ExampleInflater_InflateSparse() {
	dif := make([]byte, 112384)
	copy(dif[1000:], "hp")
	dif[90000] = 0xff
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(dif)
	w.Close()

	var f reassemble.Inflater
	got, spans, err := f.InflateSparse(nil, nil, z.Bytes(), len(dif))
	fmt.Println(len(got), spans, bytes.Equal(got, dif), err)
	// The buffer and its spans again, for a dif that changes nothing.
	z.Reset()
	w.Reset(&z)
	w.Write(make([]byte, len(dif)))
	w.Close()
	got, spans, err = f.InflateSparse(got, spans, z.Bytes(), len(dif))
	fmt.Println(len(got), spans, bytes.Count(got, []byte{0}), err)
	// Output:
	// 112384 [{1000 1002} {90000 90001}] true <nil>
	// 112384 [] 112384 <nil>
}
