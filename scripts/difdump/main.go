// Command difdump writes the compressed state difs of a capture, each as a
// 4-byte little-endian length and the zlib stream, for measuring other
// inflaters on exactly the difs pmdump inflates (see compare-zlib.sh).
//
//	go run ./scripts/difdump CAPTURE OUT
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: difdump CAPTURE OUT")
		os.Exit(1)
	}
	r, err := source.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(f)
	n := 0
	asm := reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) {
		if m.Status != reassemble.Complete {
			return
		}
		out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(m.Compressed))))
		out.Write(m.Compressed)
		n++
	})
	tr := session.NewTracker(decode.EraUnknown)
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			break
		}
		rec := tr.Process(d)
		if rec.Kind != session.Game || rec.Packet.Layout.Name != "stdf" {
			continue
		}
		pk := &rec.Packet
		slsn := -1
		if pk.Has("slsn") {
			slsn = int(pk.Int("slsn"))
		}
		asm.Add(reassemble.Piece{
			Key: reassemble.Key{Client: rec.Conv.Client, SLSN: slsn, Src: int32(pk.Int("src")), Dst: int32(pk.Int("dst"))},
			Seq: int(pk.Int("seq")), Count: int(pk.Int("count")), Start: int(pk.Int("start")), Data: pk.Payload(), N: rec.N, TS: rec.TS,
		})
	}
	asm.Flush()
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f.Close()
	fmt.Fprintf(os.Stderr, "%d difs\n", n)
}
