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
	"os"

	"github.com/pmdump/pmdump/internal/realdifs"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: difdump CAPTURE OUT")
		os.Exit(1)
	}
	msgs, err := realdifs.Messages(os.Args[1])
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
	difs := realdifs.Compressed(msgs)
	for _, d := range difs {
		out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(d))))
		out.Write(d)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "%d difs\n", len(difs))
}
