// Command replaytiming measures how faithfully a replay tool reproduces a
// capture's timing: it captures the loopback interface (AF_PACKET, kernel
// time stamps) while it runs the tool, matches the UDP payloads it sees, in
// order, with the capture's, and reports the send-time error of each
// datagram against its due time (time since the first one ÷ speed) and,
// for --asap runs, the rate. Used by compare-replay.sh; it needs root.
//
//	go run ./scripts/replaytiming -capture FILE -speed 4 -- tcpreplay -i lo -x 4 FILE
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/pmdump/pmdump/source"
)

type seen struct {
	ts      time.Time
	payload []byte
}

func main() {
	capture := flag.String("capture", "", "the capture being replayed")
	speed := flag.Float64("speed", 1, "speed multiplier of the replay; 0 for as fast as possible (rate only)")
	iface := flag.String("i", "lo", "interface to watch")
	loops := flag.Int("loop", 1, "the tool sends the capture `N` times")
	sink := flag.String("sink", "", "also bind UDP `ADDR` and never read it, so the sender gets no ICMP port unreachable and the kernel drops what comes")
	flag.Parse()
	if *capture == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: replaytiming -capture FILE [-speed X] -- COMMAND…")
		os.Exit(1)
	}
	if *sink != "" {
		ua, err := net.ResolveUDPAddr("udp", *sink)
		if err != nil {
			fmt.Fprintln(os.Stderr, "replaytiming:", err)
			os.Exit(1)
		}
		l, err := net.ListenUDP("udp", ua)
		if err != nil {
			fmt.Fprintln(os.Stderr, "replaytiming:", err)
			os.Exit(1)
		}
		// Never read: once its small buffer is full the kernel drops
		// what comes, as it drops frames no socket wants.
		l.SetReadBuffer(1)
		defer l.Close()
	}
	if err := run(*capture, *speed, *iface, *loops, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "replaytiming:", err)
		os.Exit(2)
	}
}

func run(capture string, speed float64, iface string, loops int, cmdline []string) error {
	// The capture's datagrams and their times.
	rd, err := source.Open(capture)
	if err != nil {
		return err
	}
	var want []seen
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		want = append(want, seen{d.TS, bytes.Clone(d.Payload)})
	}
	rd.Close()
	one := len(want)
	for range loops - 1 {
		want = append(want, want[:one]...)
	}

	tp, err := afpacket.NewTPacket(afpacket.OptInterface(iface), afpacket.OptFrameSize(2048), afpacket.OptBlockSize(1<<20), afpacket.OptNumBlocks(128), afpacket.TPacketVersion2)
	if err != nil {
		return fmt.Errorf("capture on %s: %w", iface, err)
	}
	var got []seen
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var eth layers.Ethernet
		var ip4 layers.IPv4
		var udp layers.UDP
		var payload gopacket.Payload
		parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &udp, &payload)
		parser.IgnoreUnsupported = true
		var decoded []gopacket.LayerType
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, ci, err := tp.ZeroCopyReadPacketData()
			if err != nil {
				continue
			}
			if parser.DecodeLayers(data, &decoded) != nil || !slices.Contains(decoded, layers.LayerTypeUDP) {
				continue
			}
			got = append(got, seen{ci.Timestamp, bytes.Clone(udp.Payload)})
		}
	}()
	time.Sleep(200 * time.Millisecond)
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err = cmd.Run()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	// Wake the reader with one more datagram on lo.
	if c, err := net.Dial("udp", "127.0.0.1:9"); err == nil {
		c.Write([]byte("stop"))
		c.Close()
	}
	<-done
	tp.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", cmdline[0], err)
	}

	// Match in order: other loopback traffic is skipped, and so are
	// datagrams the capture ring lost (the next few expected ones are
	// tried). A frame injected on lo is seen twice, going out and coming
	// in: a repeat of the last one matched is skipped.
	var matched []time.Time
	var offsets []time.Duration
	var index []int
	k := 0
	for _, g := range got {
		if k > 0 && (k == len(want) || !bytes.Equal(g.payload, want[k].payload)) && bytes.Equal(g.payload, want[k-1].payload) {
			continue
		}
		for j := k; j < len(want) && j < k+256; j++ {
			if bytes.Equal(g.payload, want[j].payload) {
				matched = append(matched, g.ts)
				offsets = append(offsets, want[j].ts.Sub(want[0].ts)) // meaningful for one loop only
				index = append(index, j)
				k = j + 1
				break
			}
		}
	}
	fmt.Printf("%s: %d of %d datagrams seen on %s (%d UDP datagrams captured)\n", cmdline[0], len(matched), len(want), iface, len(got))
	if len(matched) < 2 {
		return nil
	}
	span := matched[len(matched)-1].Sub(matched[0])
	fmt.Printf("  %.0f datagrams/s over %.3f s\n", float64(index[len(index)-1]-index[0])/span.Seconds(), span.Seconds())
	if speed == 0 {
		return nil
	}
	errs := make([]time.Duration, len(matched))
	for i, t := range matched {
		errs[i] = (t.Sub(matched[0]) - time.Duration(float64(offsets[i])/speed)).Abs()
	}
	slices.Sort(errs)
	q := func(p float64) time.Duration { return errs[int(p*float64(len(errs)-1))].Round(time.Microsecond) }
	fmt.Printf("  send-time error |actual − due|: p50 %v  p99 %v  max %v\n", q(0.5), q(0.99), errs[len(errs)-1].Round(time.Microsecond))
	return nil
}
