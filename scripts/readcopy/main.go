//go:build unix

// Command readcopy measures the two ways of getting a capture file's bytes
// that source.OpenPcapFile chose between, on the machine it runs on:
// copying them out of a memory mapping of the file, a record's worth (600
// bytes) at a time, as a reader of a mapped pcap does; and positioned reads
// of a megabyte into a window, as OpenPcapFile does. Run it on a file in the
// page cache (run it twice):
//
//	go run ./scripts/readcopy FILE
package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readcopy FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := int(st.Size())
	const record = 600
	slab := make([]byte, 512<<10)
	window := make([]byte, 1<<20)
	for range 3 {
		t := time.Now()
		data, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
		for off := 0; off < n; off += record {
			k := min(record, n-off)
			j := off % (len(slab) - record)
			copy(slab[j:j+k], data[off:off+k])
		}
		unix.Munmap(data)
		mapped := time.Since(t)
		t = time.Now()
		for off := int64(0); ; {
			k, err := f.ReadAt(window, off)
			for i := 0; i < k; i += record { // and into the batches, as the reader does
				j := i % (len(slab) - record)
				copy(slab[j:], window[i:min(i+record, k)])
			}
			off += int64(k)
			if err != nil || k == 0 {
				break
			}
		}
		fmt.Printf("%d MB: out of a mapping %v, positioned reads into a window and out of it %v\n", n>>20, mapped.Round(time.Millisecond), time.Since(t).Round(time.Millisecond))
	}
}
