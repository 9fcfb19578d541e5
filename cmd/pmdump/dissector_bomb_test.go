package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/adler32"
	"io"
	"net/netip"
	"os/exec"
	"testing"
	"time"
)

// bitWriter writes a deflate stream: fields lowest bit first.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes a Huffman code of n bits, its first bit the highest.
func (w *bitWriter) code(c uint64, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.bits(c>>uint(i)&1, 1)
	}
}

// zipBomb returns a zlib stream of one literal zero and then matches
// copies of 258 zeros, two bits each (the densest deflate allows, about
// 1032 to 1): one dynamic block whose length 258 has a one-bit code and
// whose only distance (1) has a one-bit code.
func zipBomb(matches int) []byte {
	w := &bitWriter{out: []byte{0x78, 0xda}}
	w.bits(1, 1)  // last block
	w.bits(2, 2)  // dynamic Huffman codes
	w.bits(29, 5) // 286 literal/length codes
	w.bits(0, 5)  // 1 distance code
	w.bits(15, 4) // 19 code length codes
	clOrder := []int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
	cl := map[int]uint64{0: 2, 1: 2, 2: 2, 18: 2} // codes 00, 01, 10, 11
	for _, s := range clOrder {
		w.bits(cl[s], 3)
	}
	clCode := map[int]uint64{0: 0, 1: 1, 2: 2, 18: 3}
	w.code(clCode[2], 2) // literal 0: 2 bits
	w.code(clCode[18], 2)
	w.bits(138-11, 7) // literals 1–138 unused
	w.code(clCode[18], 2)
	w.bits(117-11, 7)    // literals 139–255 unused
	w.code(clCode[2], 2) // end of block: 2 bits
	w.code(clCode[18], 2)
	w.bits(28-11, 7)     // lengths 257–284 unused
	w.code(clCode[1], 2) // length 258: 1 bit
	w.code(clCode[1], 2) // distance 1: 1 bit
	// literal 0 is code 10, end of block 11, length 258 is 0, distance 1 is 0.
	w.code(2, 2)
	for i := 0; i < matches; i++ {
		w.bits(0, 2)
	}
	w.code(3, 2)
	w.bits(0, (8-w.nacc)%8)
	size := 1 + 258*matches
	a := adler32.New()
	zero := make([]byte, 64<<10)
	for n := size; n > 0; n -= len(zero) {
		a.Write(zero[:min(n, len(zero))])
	}
	return a.Sum(w.out)
}

// The hand-made stream is what it claims: Go's zlib inflates it to exactly
// 1 + 258×matches zero bytes and accepts its checksum.
func TestZipBombStream(t *testing.T) {
	for _, matches := range []int{0, 1, 7, 1000} {
		r, err := zlib.NewReader(bytes.NewReader(zipBomb(matches)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%d matches: %v", matches, err)
		}
		if len(b) != 1+258*matches || bytes.Count(b, []byte{0}) != len(b) {
			t.Errorf("%d matches: %d bytes, want %d zeros", matches, len(b), 1+258*matches)
		}
	}
}

// bombCapture writes a legacy game whose server sends one dif that is a
// zip bomb (about 240 KB of pieces inflating to 248 MB), then an ordinary
// dif.
func bombCapture(t *testing.T) string {
	t.Helper()
	ap := netip.MustParseAddrPort
	client, listen, server := ap("10.0.0.2:24785"), ap("10.0.0.1:24785"), ap("10.0.0.1:50000")
	be := binary.BigEndian
	var dgs []udpDatagram
	send := func(src, dst netip.AddrPort, b []byte) {
		dgs = append(dgs, udpDatagram{src, dst, b})
	}
	host := append([]byte("bomb"), make([]byte, 12)...)
	send(client, listen, []byte("1234"))
	send(server, client, []byte("5678\x00"))
	send(client, server, append([]byte("CJON\x03"), host...))
	sjon := be.AppendUint16([]byte("SJON"), 4)
	sjon = be.AppendUint32(sjon, 9)
	sjon = be.AppendUint32(sjon, 1)
	sjon = append(sjon, 40, 1, 3, 0)
	sjon = be.AppendUint16(sjon, 1000)
	send(server, client, append(sjon, 0))
	dif := func(src, dst uint32, z []byte) {
		count := (len(z) + 999) / 1000
		for seq := 0; seq < count; seq++ {
			piece := z[seq*1000 : min(len(z), seq*1000+1000)]
			b := be.AppendUint32([]byte("stdf"), src)
			b = be.AppendUint32(b, dst)
			b = append(b, byte(seq), byte(count))
			b = be.AppendUint32(b, uint32(seq*1000))
			b = be.AppendUint32(b, uint32(len(piece)))
			send(server, client, append(b, piece...))
		}
	}
	dif(0, 10, zipBomb(960_000))
	var small bytes.Buffer
	zw := zlib.NewWriter(&small)
	zw.Write(make([]byte, 106144))
	zw.Close()
	dif(0, 11, small.Bytes())
	return testCapture(t, "bomb.pcap", time.Millisecond, dgs)
}

// A zip bomb in a capture costs the dissector next to nothing: tshark with
// it takes less than a second of processor time more than tshark alone on
// the same capture, the bomb gets no inflated size, the ordinary dif after
// it does, and every packet agrees with pmdump.
func TestDissectorZipBomb(t *testing.T) {
	tshark := needTshark(t)
	lua := writeDissector(t)
	path := bombCapture(t)
	cpu := func(args ...string) time.Duration {
		t.Helper()
		cmd := exec.Command(tshark, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("tshark %v: %v: %s", args, err, stderr.String())
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	alone := cpu("-n", "-V", "-r", path)
	with := cpu("-n", "-V", "-X", "lua_script:"+lua, "-r", path)
	t.Logf("tshark -V on a capture with a 248 MB zip bomb: %v of processor time alone, %v with the dissector", alone, with)
	if with-alone > time.Second {
		t.Errorf("the zip bomb costs the dissector %v of processor time, want under 1 s", with-alone)
	}
	compareWithTshark(t, tshark, lua, path, difsInflated)
}
