package source_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/source"
)

// ExampleNewCaptureWriter writes a frame as captured to a pcapng stream
// and reads its datagram back.
func ExampleNewCaptureWriter() {
	// An Ethernet frame carrying a UDP datagram 10.0.0.2:24785 → 10.0.0.1:24785.
	frame := []byte{
		0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, // Ethernet
		0x45, 0, 0, 32, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1, // IPv4
		0x60, 0xd1, 0x60, 0xd1, 0, 12, 0, 0, // UDP
		'1', '2', '3', '4', // payload
	}
	var capture bytes.Buffer
	w, err := source.NewCaptureWriter(&capture, source.WriterOptions{Format: source.Pcapng,
		Interfaces: []source.Interface{{Name: "eth0", LinkType: layers.LinkTypeEthernet}}})
	if err != nil {
		log.Fatal(err)
	}
	ci := gopacket.CaptureInfo{Timestamp: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), Length: len(frame)}
	if err := w.WriteFrame(frame, ci, layers.LinkTypeEthernet, source.Interface{Name: "eth0", LinkType: layers.LinkTypeEthernet}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := source.NewReader(&capture, "example.pcapng")
	if err != nil {
		log.Fatal(err)
	}
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d %v → %v %q on %s, record at byte %d\n", d.N, d.Src, d.Dst, d.Payload, d.InterfaceName, d.Offset)
	}
	// Output:
	// 1 10.0.0.2:24785 → 10.0.0.1:24785 "1234" on eth0, record at byte 84
}

// ExampleCaptureFilter assembles the kernel filter of a live capture on an
// Ethernet interface that passes only the game's UDP ports.
func ExampleCaptureFilter() {
	prog, err := source.CaptureFilter(source.FilterOptions{Link: source.FilterEthernet, Ports: []uint16{1234, 24785}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(prog[0])
	fmt.Println(prog[len(prog)-2])
	// Output:
	// ldh [12]
	// ret #262144
}

// ExamplePrefetchPrepared has the reading goroutine look at each batch of
// datagrams before the caller gets them (here: which are stdf pieces), and
// the caller take what it found beside each datagram.
func ExamplePrefetchPrepared() {
	f, err := os.Open("../captures/legacy.pcap")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := source.NewReader(f, "legacy.pcap")
	if err != nil {
		log.Fatal(err)
	}
	pf := source.PrefetchPrepared(r, func(dgs []source.Datagram, aux *any) {
		stdf, _ := (*aux).([]bool) // the batch's slice from its last use
		stdf = stdf[:0]
		for i := range dgs {
			stdf = append(stdf, bytes.HasPrefix(dgs[i].Payload, []byte("stdf")))
		}
		*aux = stdf
	})
	defer pf.Close()
	datagrams, pieces := 0, 0
	for {
		if _, err := pf.Next(); err != nil {
			break
		}
		aux, i := pf.Prepared()
		if aux.([]bool)[i] {
			pieces++
		}
		datagrams++
	}
	fmt.Println(datagrams, "datagrams,", pieces, "stdf pieces")
	// Output: 809 datagrams, 58 stdf pieces
}
